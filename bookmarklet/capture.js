/*
 * spider's in-page capture script: the one source of truth for what a capture
 * records. `spider capture` injects this file into headless Chromium (the Rust
 * side embeds it at build time with `include_str!`), and the bookmarklet runs
 * the same file in the reader's own browser.
 *
 * It defines `spiderCapture` on the global object:
 *   spiderCapture.capture(options)      -> plain object (the page part of a capture)
 *   spiderCapture.captureJson(options)  -> the same object as a JSON string
 *
 * The Rust side (or the spider server, for bookmarklet uploads) adds what the
 * page cannot know about itself: `site`, `captured_at` and the page source as
 * served (`html`). The JSON schema is documented in README.md.
 *
 * Pages are hostile environments: they replace `Array.prototype` methods and
 * `JSON`, and form controls shadow element properties. So this script never
 * calls `JSON`, never uses array methods (it appends with `a[a.length] = x`),
 * serialises by itself and reads the DOM through accessors taken from the
 * prototypes.
 * Everything is computed in one pass over the text nodes, with per-element
 * caches, because the capture's cost is measured against bare navigation.
 */
(function (root) {
  'use strict';

  var VERSION = 1;

  // Computed properties that describe where and how big a box is rather than
  // how it is styled. They are recorded in `bounds` instead, or they are
  // derived from the box size (transform-origin resolves to pixels).
  var GEOMETRY = {
    'width': 1, 'height': 1, 'inline-size': 1, 'block-size': 1,
    'top': 1, 'left': 1, 'right': 1, 'bottom': 1,
    'inset-block-start': 1, 'inset-block-end': 1,
    'inset-inline-start': 1, 'inset-inline-end': 1,
    'x': 1, 'y': 1, 'cx': 1, 'cy': 1, 'r': 1, 'rx': 1, 'ry': 1, 'd': 1,
    'transform-origin': 1, 'perspective-origin': 1
  };

  // Elements whose text is never rendered as page text.
  var SKIP_TEXT_PARENT = {
    script: 1, style: 1, noscript: 1, template: 1, title: 1,
    textarea: 1, select: 1, option: 1, optgroup: 1, datalist: 1,
    iframe: 1, object: 1
  };

  // Elements that end a line of text even when they hold no text themselves:
  // text on either side of them must not run together ("a<br>b" is "a b").
  var BREAKS = {
    br: 1, hr: 1, p: 1, div: 1, li: 1, ul: 1, ol: 1, dl: 1, dt: 1, dd: 1,
    tr: 1, td: 1, th: 1, table: 1, h1: 1, h2: 1, h3: 1, h4: 1, h5: 1, h6: 1,
    img: 1, section: 1, article: 1, header: 1, footer: 1, blockquote: 1,
    pre: 1, figure: 1, figcaption: 1, form: 1, nav: 1, aside: 1, main: 1
  };

  var HTML_NS = 'http://www.w3.org/1999/xhtml';

  // Computed `display` values whose box is a block container (text inside
  // lays out in lines of this box). Inline-level boxes, including
  // inline-block, are not blocks: their text belongs to the paragraph around
  // them.
  function isBlockDisplay(display) {
    switch (display) {
      case 'block': case 'list-item': case 'flow-root': case 'flex':
      case 'grid': case 'table': case 'table-cell': case 'table-caption':
      case 'table-row': case 'table-row-group': case 'table-header-group':
      case 'table-footer-group': case 'math': case '-webkit-box':
        return true;
    }
    // Multi-keyword forms: "block flow", "block flow list-item", ...
    return display.indexOf('block') === 0 || display.indexOf('list-item') >= 0;
  }

  // \u0085 (NEL) is whitespace to Unicode (and Rust) but not to JS `\s`.
  var WS = /[\s\u0085]+/g;
  var NON_WS = /[^\s\u0085]/;
  function normalise(text) {
    return text.replace(WS, ' ').replace(/^ | $/g, '');
  }

  // Length in code points, as Rust counts `chars()`, not UTF-16 units.
  function codePoints(text) {
    var n = 0;
    for (var i = 0; i < text.length; i++) {
      var c = text.charCodeAt(i);
      if (c >= 0xdc00 && c <= 0xdfff && i > 0) {
        var p = text.charCodeAt(i - 1);
        if (p >= 0xd800 && p <= 0xdbff) continue;
      }
      n++;
    }
    return n;
  }

  // DOM accessors taken from the prototypes: a form's controls shadow its
  // properties (`<input name=id>` makes `form.id` an element), so the
  // script never reads `el.id`, `el.localName` and the like directly.
  function getter(proto, name) {
    return Object.getOwnPropertyDescriptor(proto, name).get;
  }
  var EP = Element.prototype;
  var localNameOf = getter(EP, 'localName');
  var parentOf = getter(Node.prototype, 'parentElement');
  var previousOf = getter(EP, 'previousElementSibling');
  var getAttribute = EP.getAttribute;
  var closest = EP.closest;
  var rectOf = EP.getBoundingClientRect;
  var checkVisibility = EP.checkVisibility;
  var clientRects = EP.getClientRects;

  function round(n) {
    return Math.round(n * 10) / 10;
  }

  function metaContent(metas, attr, key) {
    for (var i = 0; i < metas.length; i++) {
      var v = metas[i].getAttribute(attr);
      if (v && v.toLowerCase() === key) {
        var c = metas[i].getAttribute('content');
        if (c !== null && normalise(c) !== '') return normalise(c);
      }
    }
    return null;
  }

  function metaEither(metas, key) {
    var v = metaContent(metas, 'property', key);
    return v !== null ? v : metaContent(metas, 'name', key);
  }

  function readMeta(doc) {
    var metas = doc.getElementsByTagName('meta');
    var canonical = null;
    var links = doc.getElementsByTagName('link');
    for (var i = 0; i < links.length; i++) {
      var rel = (links[i].getAttribute('rel') || '').toLowerCase().split(/\s+/);
      for (var j = 0; j < rel.length; j++) {
        if (rel[j] === 'canonical' && links[i].href) { canonical = links[i].href; break; }
      }
      if (canonical) break;
    }
    var title = normalise(doc.title || '');
    return {
      title: title === '' ? null : title,
      og_title: metaEither(metas, 'og:title'),
      og_description: metaEither(metas, 'og:description'),
      og_site_name: metaEither(metas, 'og:site_name'),
      og_url: metaEither(metas, 'og:url'),
      description: metaContent(metas, 'name', 'description'),
      twitter_title: metaEither(metas, 'twitter:title'),
      twitter_description: metaEither(metas, 'twitter:description'),
      canonical: canonical
    };
  }

  function readLang(doc) {
    var lang = doc.documentElement && doc.documentElement.getAttribute('lang');
    if (!lang) {
      lang = doc.documentElement && doc.documentElement.getAttribute('xml:lang');
    }
    if (!lang) {
      lang = metaContent(doc.getElementsByTagName('meta'), 'http-equiv', 'content-language');
    }
    lang = lang ? normalise(lang) : '';
    return lang === '' ? null : lang;
  }

  // The styled property names, read once per page from <body>.
  function styleNames(bodyStyle) {
    var names = [];
    for (var i = 0; i < bodyStyle.length; i++) {
      var name = bodyStyle[i];
      if (name.charAt(0) === '-' || GEOMETRY[name] === 1) continue;
      names[names.length] = name;
    }
    return names;
  }

  // Reading a computed property costs about half a microsecond and Chromium
  // has over 400 of them, so reading them all for every block dominates the
  // capture. A block's value can differ from <body>'s only where some style
  // source sets the property: an author rule, an inline style, the user-agent
  // stylesheet or an HTML presentational attribute, or where the value is
  // derived from another property (currentColor, line-height from
  // font-size). So the page's own stylesheets are read for the names they
  // set, and the fixed list below covers the rest. When a stylesheet cannot
  // be read (cross-origin), every property is read. `--full-style` reads
  // every property always; a test checks that both give the same styles.
  var ALWAYS = (
    'display position float clear visibility z-index box-sizing ' +
    'margin-top margin-right margin-bottom margin-left margin-block-start margin-block-end ' +
    'margin-inline-start margin-inline-end padding-top padding-right padding-bottom padding-left ' +
    'padding-block-start padding-block-end padding-inline-start padding-inline-end ' +
    'border-top-color border-right-color border-bottom-color border-left-color ' +
    'border-top-style border-right-style border-bottom-style border-left-style ' +
    'border-top-width border-right-width border-bottom-width border-left-width ' +
    'border-block-start-color border-block-end-color border-inline-start-color border-inline-end-color ' +
    'border-block-start-style border-block-end-style border-inline-start-style border-inline-end-style ' +
    'border-block-start-width border-block-end-width border-inline-start-width border-inline-end-width ' +
    'border-spacing border-collapse table-layout caption-side empty-cells ' +
    'color background-color background-image caret-color column-rule-color outline-color ' +
    'outline-style outline-width outline-offset accent-color text-emphasis-color ' +
    'text-decoration-line text-decoration-style text-decoration-color text-decoration-thickness ' +
    'font-family font-size font-style font-weight font-variant-caps font-stretch line-height ' +
    'text-align text-align-last text-indent text-transform vertical-align letter-spacing word-spacing ' +
    'white-space white-space-collapse text-wrap-mode text-wrap-style word-break overflow-wrap ' +
    'list-style-type list-style-position list-style-image unicode-bidi direction writing-mode ' +
    'quotes cursor content counter-increment counter-reset counter-set overflow-x overflow-y ' +
    'overflow-clip-margin text-overflow user-select pointer-events appearance resize tab-size ' +
    'text-shadow align-items justify-items object-fit object-position image-rendering hyphens ' +
    'text-rendering font-kerning forced-color-adjust color-scheme isolation'
  ).split(' ');

  // Groups of properties that are the same value under different names
  // (physical and logical sides, sizes and corners).
  var ALIASES = (function () {
    var sides = ['top', 'right', 'bottom', 'left',
      'block-start', 'block-end', 'inline-start', 'inline-end'];
    var groups = [];
    function sideGroup(prefix, suffix) {
      var g = [];
      for (var i = 0; i < sides.length; i++) g[g.length] = prefix + sides[i] + suffix;
      groups[groups.length] = g;
    }
    sideGroup('margin-', ''); sideGroup('padding-', '');
    sideGroup('scroll-margin-', ''); sideGroup('scroll-padding-', '');
    sideGroup('border-', '-color'); sideGroup('border-', '-style'); sideGroup('border-', '-width');
    groups[groups.length] = ['border-top-left-radius', 'border-top-right-radius',
      'border-bottom-left-radius', 'border-bottom-right-radius', 'border-start-start-radius',
      'border-start-end-radius', 'border-end-start-radius', 'border-end-end-radius'];
    var axes = [['min-', 'width', 'height', 'inline-size', 'block-size'],
      ['max-', 'width', 'height', 'inline-size', 'block-size'],
      ['contain-intrinsic-', 'width', 'height', 'inline-size', 'block-size'],
      ['overflow-', 'x', 'y', 'inline', 'block'],
      ['overscroll-behavior-', 'x', 'y', 'inline', 'block']];
    for (var a = 0; a < axes.length; a++) {
      var g = [];
      for (var k = 1; k < axes[a].length; k++) g[g.length] = axes[a][0] + axes[a][k];
      groups[groups.length] = g;
    }
    return groups;
  })();

  // Adds the properties a list of CSS rules sets; false when a sheet cannot
  // be read.
  function collectRules(rules, set, depth) {
    if (depth > 20) return true;
    for (var i = 0; i < rules.length; i++) {
      var rule = rules[i];
      var style = rule.style;
      if (style) {
        for (var k = 0; k < style.length; k++) set[style[k]] = 1;
      }
      if (rule.styleSheet && !collectSheet(rule.styleSheet, set, depth + 1)) return false;
      var inner = null;
      try { inner = rule.cssRules; } catch (e) { inner = null; }
      if (inner && !collectRules(inner, set, depth + 1)) return false;
    }
    return true;
  }

  // A sheet whose rules cannot be read counts as unknown (so every property
  // is read), unless the caller knows it failed to load: then it has none.
  // URLs are compared without their scheme: browsers may have upgraded the
  // request from http: to https:.
  var failedSheets = {};
  function schemeless(url) {
    return String(url || '').replace(/^https?:/, '');
  }
  function collectSheet(sheet, set, depth) {
    var rules;
    try { rules = sheet.cssRules; } catch (e) { return failedSheets[schemeless(sheet.href)] === 1; }
    return rules ? collectRules(rules, set, depth) : false;
  }

  function relevantNames(doc, allNames, failed) {
    failedSheets = {};
    for (var f = 0; f < failed.length; f++) failedSheets[schemeless(failed[f])] = 1;
    var set = {};
    var sheets = doc.styleSheets;
    for (var i = 0; i < sheets.length; i++) {
      if (!collectSheet(sheets[i], set, 0)) return allNames;
    }
    var adopted = doc.adoptedStyleSheets || [];
    for (var a = 0; a < adopted.length; a++) {
      if (!collectSheet(adopted[a], set, 0)) return allNames;
    }
    var styled = doc.querySelectorAll('[style]');
    for (var e = 0; e < styled.length; e++) {
      var st = styled[e].style;
      if (!st) continue;
      for (var k = 0; k < st.length; k++) set[st[k]] = 1;
    }
    for (var n = 0; n < ALWAYS.length; n++) set[ALWAYS[n]] = 1;
    // Logical and physical properties are one value seen two ways: a rule
    // setting `margin-top` changes `margin-block-start` too.
    for (var g = 0; g < ALIASES.length; g++) {
      var group = ALIASES[g];
      var hit = false;
      for (var q = 0; q < group.length && !hit; q++) hit = set[group[q]] === 1;
      if (hit) for (var r = 0; r < group.length; r++) set[group[r]] = 1;
    }
    // Rules list longhands, but a few shorthands are computed properties too
    // (`text-decoration`, `background-position`): a shorthand is read when a
    // longhand of it is.
    var prefixes = {};
    for (var key in set) {
      for (var dash = key.indexOf('-'); dash > 0; dash = key.indexOf('-', dash + 1)) {
        prefixes[key.slice(0, dash)] = 1;
      }
    }
    var names = [];
    for (var m = 0; m < allNames.length; m++) {
      var name = allNames[m];
      // Colours default to currentColor, so they follow `color`.
      var isColor = name.length > 6 && name.slice(-6) === '-color';
      if (set[name] === 1 || prefixes[name] === 1 || isColor) names[names.length] = name;
    }
    return names;
  }

  var CLASS_SEP = /[\t\n\f\r ]+/;
  function selectorStep(el) {
    var step = { tag: localNameOf.call(el) };
    var id = getAttribute.call(el, 'id');
    if (id) step.id = id;
    var attr = getAttribute.call(el, 'class');
    var list = attr ? attr.split(CLASS_SEP) : [];
    if (list.length) {
      var classes = [];
      for (var i = 0; i < list.length; i++) {
        if (list[i] === '') continue;
        // Insertion sort: class lists are short, and Array.prototype.sort
        // may be replaced by the page.
        var c = list[i];
        var j = classes.length;
        while (j > 0 && classes[j - 1] > c) { classes[j] = classes[j - 1]; j--; }
        classes[j] = c;
      }
      var unique = [];
      for (var k = 0; k < classes.length; k++) {
        if (k === 0 || classes[k] !== classes[k - 1]) unique[unique.length] = classes[k];
      }
      step.classes = unique;
    }
    return step;
  }

  function capture(options) {
    options = options || {};
    var maxBlocks = options.maxBlocks || 50000;
    var doc = document;
    var win = window;
    var html = doc.documentElement;
    var body = doc.body;
    var page = {
      schema: VERSION,
      url: String(doc.location ? doc.location.href : ''),
      content_type: doc.contentType || null,
      encoding: doc.characterSet || null,
      lang: readLang(doc),
      viewport: { width: win.innerWidth, height: win.innerHeight },
      meta: readMeta(doc),
      blocks: [],
      truncated: false
    };
    if (!html || !body) return page;
    var tStart = win.performance.now();

    var scrollX = win.scrollX || 0;
    var scrollY = win.scrollY || 0;
    var bodyStyle = win.getComputedStyle(body);
    var allNames = styleNames(bodyStyle);
    var names = options.fullStyle ? allNames :
      relevantNames(doc, allNames, options.failedStylesheets || []);
    page.style_properties = [names.length, allNames.length];
    var bodyValues = {};
    for (var n = 0; n < names.length; n++) {
      bodyValues[names[n]] = bodyStyle.getPropertyValue(names[n]);
    }
    var hasCheckVisibility = typeof checkVisibility === 'function';
    var range = doc.createRange();

    // Per-element caches: element -> block entry (or null), visibility, link.
    var blockOf = new WeakMap();
    var siblingIndex = new WeakMap();
    // Ancestors are shared by many blocks: build each step once.
    var steps = new WeakMap();
    var visible = new WeakMap();
    var entries = [];
    var seq = 0;

    function isVisible(el) {
      var v = visible.get(el);
      if (v !== undefined) return v;
      if (hasCheckVisibility) {
        v = checkVisibility.call(el, { visibilityProperty: true, opacityProperty: true });
      } else {
        v = clientRects.call(el).length > 0 &&
          win.getComputedStyle(el).visibility !== 'hidden';
      }
      visible.set(el, v);
      return v;
    }

    // Whether an element clips its content away: a box that hides its
    // overflow and has no area (collapsed accordions, closed menus).
    var clipsAll = new WeakMap();
    function clipsAway(el) {
      var v = clipsAll.get(el);
      if (v !== undefined) return v;
      var style = win.getComputedStyle(el);
      v = false;
      if (style.overflowX !== 'visible' || style.overflowY !== 'visible') {
        var r = rectOf.call(el);
        v = r.width === 0 || r.height === 0;
      }
      clipsAll.set(el, v);
      return v;
    }

    // The nearest ancestor-or-self laid out as a block box with an area, or
    // null when the text is clipped away or sits in a visually-hidden box.
    function findBlock(el) {
      var path = [];
      var found = null;
      var e;
      for (e = el; e && e !== html; e = parentOf.call(e)) {
        var cached = blockOf.get(e);
        if (cached !== undefined) { found = cached; break; }
        path[path.length] = e;
        var style = win.getComputedStyle(e);
        if (isBlockDisplay(style.display)) {
          var r = rectOf.call(e);
          if (r.width > 0 && r.height > 0) {
            // A box of a pixel or less is a visually-hidden ("sr-only") box.
            found = r.width > 1 && r.height > 1 ? e : null;
            break;
          }
          if (clipsAway(e)) { found = null; break; }
        }
      }
      if (found !== null && cached === undefined) {
        // A block inside a clipping box without area is hidden too.
        for (var a = parentOf.call(found); a && a !== html; a = parentOf.call(a)) {
          if (clipsAway(a)) { found = null; break; }
        }
        if (found !== null) found = newEntry(found, rectOf.call(found), win.getComputedStyle(found));
      }
      for (var i = 0; i < path.length; i++) blockOf.set(path[i], found);
      return found;
    }

    function newEntry(el, rect, style) {
      if (entries.length >= maxBlocks) { page.truncated = true; return null; }
      var entry = { el: el, rect: rect, style: style, parts: [], linkChars: 0, lastSeq: -2 };
      entries[entries.length] = entry;
      return entry;
    }

    // An element's index among its element siblings. Memoised, and counted
    // back only to the nearest sibling already known: blocks come in
    // document order, so a parent with 100,000 children costs 100,000 steps,
    // not 100,000 squared.
    function elementIndex(el) {
      var known = siblingIndex.get(el);
      if (known !== undefined) return known;
      var i = 0;
      for (var s = previousOf.call(el); s; s = previousOf.call(s)) {
        var k = siblingIndex.get(s);
        if (k !== undefined) { i += k + 1; break; }
        i++;
      }
      siblingIndex.set(el, i);
      return i;
    }

    // Text inside a link, including blocks that sit inside one (a card or
    // teaser whose whole headline is a link).
    function insideLink(el) {
      return closest.call(el, 'a[href]') !== null;
    }

    // SHOW_ELEMENT | SHOW_TEXT: elements only advance the sequence counter
    // when they break lines, so text nodes either side are not adjacent.
    var t0 = win.performance.now();
    var walker = doc.createTreeWalker(body, 1 | 4);
    var node;
    var spaceAt = -1;
    while ((node = walker.nextNode())) {
      if (node.nodeType === 1) {
        if (BREAKS[localNameOf.call(node)] === 1) seq++;
        continue;
      }
      var raw = node.nodeValue;
      if (!raw) continue;
      // A whitespace-only node between two inline elements
      // (`<a>Mail</a> <a>Print</a>`) renders as a space: remember it, so the
      // words either side do not run together.
      if (!NON_WS.test(raw)) { spaceAt = seq; continue; }
      var parent = parentOf.call(node);
      if (!parent || SKIP_TEXT_PARENT[localNameOf.call(parent)] === 1) continue;
      // SVG and MathML text is drawing, not prose.
      if (parent.namespaceURI !== HTML_NS) continue;
      if (!isVisible(parent)) continue;
      range.selectNodeContents(node);
      var tr = range.getBoundingClientRect();
      if (tr.width === 0 && tr.height === 0) continue;
      // Entirely off the page (text-indent:-9999px image replacement, etc.).
      if (tr.right + scrollX <= 0 || tr.bottom + scrollY <= 0) continue;
      var entry = findBlock(parent);
      if (!entry) continue;
      var spaceBefore = spaceAt === seq;
      // Only text that is kept advances the sequence: skipped text (hidden
      // spans, scripts) must not split the words around it.
      seq++;
      var text = normalise(raw);
      // Text nodes of one block that are not adjacent in document order were
      // separated by another block or a <br>: keep a word boundary.
      if (entry.parts.length > 0 && entry.lastSeq !== seq - 1) {
        entry.parts[entry.parts.length] = ' ';
      } else if (entry.parts.length > 0 && (spaceBefore || /^[\s\u0085]/.test(raw))) {
        entry.parts[entry.parts.length] = ' ';
      }
      entry.parts[entry.parts.length] = text;
      if (/[\s\u0085]$/.test(raw)) entry.parts[entry.parts.length] = ' ';
      entry.lastSeq = seq;
      if (insideLink(parent)) entry.linkChars += codePoints(text);
    }

    var t1 = win.performance.now();
    var blocks = page.blocks;
    for (var b = 0; b < entries.length; b++) {
      var en = entries[b];
      var joined = '';
      for (var q = 0; q < en.parts.length; q++) joined += en.parts[q];
      var blockText = normalise(joined);
      if (blockText === '') continue;
      var style = {};
      var cs = en.style;
      for (var p = 0; p < names.length; p++) {
        var value = cs.getPropertyValue(names[p]);
        if (value !== bodyValues[names[p]]) style[names[p]] = value;
      }
      var depth = 0;
      for (var d = en.el; d; d = parentOf.call(d)) depth++;
      var selector = [];
      var nodePath = [];
      for (var e = en.el; e; e = parentOf.call(e)) {
        depth--;
        var step = steps.get(e);
        if (step === undefined) {
          step = selectorStep(e);
          steps.set(e, step);
        }
        selector[depth] = step;
        nodePath[depth] = elementIndex(e);
      }
      blocks[blocks.length] = {
        text: blockText,
        tag: localNameOf.call(en.el),
        link_text_len: Math.min(en.linkChars, codePoints(blockText)),
        selector: selector,
        node: nodePath,
        bounds: {
          x: round(en.rect.left + scrollX),
          y: round(en.rect.top + scrollY),
          width: round(en.rect.width),
          height: round(en.rect.height)
        },
        style: style
      };
    }
    range.detach();
    // Where the time went, for `SPIDER_LOG=debug` and the benchmark.
    var tEnd = win.performance.now();
    page.timings = { setup_ms: t0 - tStart, walk_ms: t1 - t0, blocks_ms: tEnd - t1, total_ms: tEnd - tStart };
    return page;
  }

  // JSON without the page's `JSON` (which pages replace). Lone surrogates
  // become U+FFFD: strict JSON parsers (serde_json) reject them.
  var NEEDS_ESCAPE = /["\\\u0000-\u001f\ud800-\udfff]/;
  function quote(s) {
    // Most text needs no escaping: skip the character loop for it.
    if (!NEEDS_ESCAPE.test(s)) return '"' + s + '"';
    var out = '"';
    var start = 0;
    for (var i = 0; i < s.length; i++) {
      var c = s.charCodeAt(i);
      var rep = null;
      if (c === 34) rep = '\\"';
      else if (c === 92) rep = '\\\\';
      else if (c < 32) {
        rep = c === 10 ? '\\n' : c === 13 ? '\\r' : c === 9 ? '\\t' :
          '\\u' + ('000' + c.toString(16)).slice(-4);
      } else if (c >= 0xd800 && c <= 0xdbff) {
        var next = i + 1 < s.length ? s.charCodeAt(i + 1) : 0;
        if (next >= 0xdc00 && next <= 0xdfff) { i++; continue; }
        rep = '\ufffd';
      } else if (c >= 0xdc00 && c <= 0xdfff) {
        rep = '\ufffd';
      }
      if (rep !== null) {
        out += s.slice(start, i) + rep;
        start = i + 1;
      }
    }
    return out + s.slice(start) + '"';
  }

  var toString = Object.prototype.toString;
  var hasOwn = Object.prototype.hasOwnProperty;

  function toJson(v) {
    if (v === null || v === undefined) return 'null';
    var t = typeof v;
    if (t === 'string') return quote(v);
    if (t === 'number') return isFinite(v) ? String(v) : 'null';
    if (t === 'boolean') return v ? 'true' : 'false';
    var out = '';
    if (toString.call(v) === '[object Array]') {
      for (var i = 0; i < v.length; i++) out += (i ? ',' : '') + toJson(v[i]);
      return '[' + out + ']';
    }
    for (var k in v) {
      if (hasOwn.call(v, k) && v[k] !== undefined) {
        out += (out ? ',' : '') + quote(k) + ':' + toJson(v[k]);
      }
    }
    return '{' + out + '}';
  }

  // The native JSON.stringify is several times faster than toJson; use it
  // when the page left it alone: still native, and no toJSON hooks (old
  // libraries added Array.prototype.toJSON). Its output escapes lone
  // surrogates as \udXXX, which strict parsers reject; such output (and
  // nothing else) contains that escape, and is redone by toJson.
  var nativeStringify = (typeof JSON === 'object' && JSON) ? JSON.stringify : null;
  var LONE_ESCAPE = /\\ud[89a-f][0-9a-f]{2}/i;
  function nativeUsable() {
    if (typeof nativeStringify !== 'function') return false;
    var src;
    try { src = Function.prototype.toString.call(nativeStringify); } catch (e) { return false; }
    if (src.indexOf('[native code]') < 0) return false;
    var protos = [Object.prototype, Array.prototype, String.prototype, Number.prototype, Boolean.prototype];
    for (var i = 0; i < protos.length; i++) {
      if (protos[i].toJSON !== undefined) return false;
    }
    return true;
  }

  function serialise(value) {
    if (nativeUsable()) {
      var json;
      try { json = nativeStringify(value); } catch (e) { json = null; }
      if (typeof json === 'string' && json.charAt(0) === '{' && !LONE_ESCAPE.test(json)) return json;
    }
    return toJson(value);
  }

  root.spiderCapture = {
    version: VERSION,
    capture: capture,
    captureJson: function (options) { return serialise(capture(options)); },
    toJson: toJson
  };
})(typeof window !== 'undefined' ? window : this);
