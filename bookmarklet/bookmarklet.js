/*
 * spider's bookmarklet: captures the page the reader is looking at, uploads
 * it to the spider server, and once the server has learned the site's rules,
 * outlines what they extract.
 *
 * The server serves this file at GET /bookmarklet.js after capture.js (which
 * defines `spiderCapture`); the loader (loader.js, the bookmark itself)
 * inserts it as
 *   <script src="SERVER/bookmarklet.js?t=..." data-spider-server="SERVER"
 *           data-spider-token="TOKEN">
 *
 * The steps:
 *   1. capture the rendered page with spiderCapture.capture;
 *   2. read the page source as served (a same-origin re-fetch of the URL;
 *      the DOM when that fails);
 *   3. POST the capture (README.md, "The capture JSON schema") to
 *      SERVER/api/captures with the token;
 *   4. when the answer carries the site's rules, or once a learn it started
 *      has finished (polling SERVER/api/sites/SITE/rules), outline the
 *      elements the rules select, the way the server's extractor applies
 *      them (src/extract/mod.rs, Page::apply).
 * A badge (#spider-badge, attribute data-state) says where it is:
 * capturing, uploading, uploaded, learning, matched or error.
 *
 * Pages are hostile: they replace Array.prototype methods, JSON, fetch,
 * Function.prototype.bind and timers. So fetch, JSON, TextDecoder, timers,
 * Set and Date come from a hidden about:blank iframe of our own (same origin
 * as the page, untouched by its scripts), arrays are appended to with
 * a[a.length] = x, and the capture is serialised by spiderCapture.toJson.
 * Every failure ends in the badge's error state with its reason.
 */
(function () {
  'use strict';

  var doc = document;
  var root = doc.documentElement;
  var hasOwn = Object.prototype.hasOwnProperty;
  var capturer = window.spiderCapture;

  /* Largest page source uploaded; a larger one is replaced by the DOM. */
  var MAX_SOURCE = 8 * 1024 * 1024;
  var POLL_MS = 1000;
  var POLL_FOR_MS = 120000;
  var UPLOAD_TIMEOUT_MS = 120000;
  var SOURCE_TIMEOUT_MS = 15000;

  /* The configuration, read now: document.currentScript is null later. */
  var script = doc.currentScript;
  if (!script || !script.getAttribute('data-spider-token')) {
    var tagged = doc.querySelectorAll('script[data-spider-token]');
    script = tagged.length ? tagged[tagged.length - 1] : null;
  }
  var server = script ? script.getAttribute('data-spider-server') : null;
  var token = script ? script.getAttribute('data-spider-token') : null;
  if (server) server = server.replace(/\/+$/, '');

  /* A newer run takes over the badge and the marks; an older one that is
   * still polling notices and stops. */
  var runId = String(Math.random()) + String(new Date().getTime());
  doc.__spiderRun = runId;
  var STALE = { stale: true };
  function checkCurrent() {
    if (doc.__spiderRun !== runId) throw STALE;
  }

  function css(el, props) {
    var s = el.style;
    for (var k in props) {
      if (hasOwn.call(props, k)) s.setProperty(k, props[k], 'important');
    }
  }

  function removeNode(el) {
    if (el && el.parentNode) el.parentNode.removeChild(el);
  }

  /* ---- The badge ---- */

  var COLOURS = {
    capturing: '#1f4e79', uploading: '#1f4e79', learning: '#6b4a00',
    uploaded: '#2d6a2d', matched: '#9a4a00', error: '#8b1a1a'
  };

  /* One element, #spider-badge, fixed at the bottom right. Its text is a
   * child of the element (so it reads as the badge's textContent) shown
   * through a shadow root's slot, and every style is set through the CSSOM
   * with !important: page CSS cannot restyle it, and a Content-Security-
   * Policy that forbids inline styles does not apply to the CSSOM. */
  var badge = (function () {
    var dismissed = false;
    removeNode(doc.getElementById('spider-badge'));
    var host = doc.createElement('spider-badge');
    host.id = 'spider-badge';
    host.setAttribute('role', 'status');
    host.setAttribute('aria-live', 'polite');
    host.setAttribute('title', 'spider (click to dismiss)');
    css(host, {
      all: 'initial', position: 'fixed', right: '12px', bottom: '12px',
      'z-index': '2147483647', display: 'block', cursor: 'pointer'
    });
    var box = host;
    try {
      var shadow = host.attachShadow({ mode: 'open' });
      box = doc.createElement('div');
      box.appendChild(doc.createElement('slot'));
      shadow.appendChild(box);
    } catch (e) {
      box = host;
    }
    css(box, {
      display: 'block', 'max-width': '420px', padding: '8px 12px',
      'border-radius': '6px', color: '#ffffff',
      font: '13px/1.4 system-ui, -apple-system, "Segoe UI", sans-serif',
      'text-align': 'left', 'white-space': 'normal', 'overflow-wrap': 'anywhere',
      'box-shadow': '0 2px 8px rgba(0, 0, 0, 0.35)'
    });
    host.addEventListener('click', function () {
      dismissed = true;
      removeNode(host);
    });
    return {
      host: host,
      show: function (state, text) {
        host.setAttribute('data-state', state);
        host.textContent = text;
        css(box, { background: COLOURS[state] || '#333333' });
        if (!dismissed && !host.isConnected) root.appendChild(host);
      },
      /* Out of the capture while it runs: its text is not page text, and
       * its inline styles would make capture.js read every CSS property.
       * The page is not repainted in between, so the reader sees no
       * flicker. */
      detach: function () {
        var attached = host.isConnected;
        removeNode(host);
        return function () {
          if (attached && !dismissed) root.appendChild(host);
        };
      }
    };
  })();

  function show(state, text) {
    checkCurrent();
    badge.show(state, text);
  }

  /* ---- Outlines ---- */

  var OUTLINE = ['outline-color', 'outline-style', 'outline-width', 'outline-offset'];
  var SAVED = 'data-spider-outline';

  function mark(el, kind) {
    var s = el.style;
    if (!el.hasAttribute(SAVED)) {
      var saved = '';
      for (var i = 0; i < OUTLINE.length; i++) {
        saved += (i ? '\n' : '') + s.getPropertyValue(OUTLINE[i]) + '\t' +
          s.getPropertyPriority(OUTLINE[i]);
      }
      el.setAttribute(SAVED, saved);
    }
    el.setAttribute('data-spider', kind);
    css(el, {
      'outline-style': 'solid', 'outline-width': '2px', 'outline-offset': '2px',
      'outline-color': kind === 'title' ? 'rgba(0, 110, 255, 0.9)' : 'rgba(255, 140, 0, 0.9)'
    });
  }

  function unmark(el) {
    var saved = el.getAttribute(SAVED);
    el.removeAttribute('data-spider');
    el.removeAttribute(SAVED);
    if (saved === null) return;
    var lines = saved.split('\n');
    for (var i = 0; i < OUTLINE.length; i++) {
      var parts = (lines[i] || '').split('\t');
      if (parts[0]) el.style.setProperty(OUTLINE[i], parts[0], parts[1] || '');
      else el.style.removeProperty(OUTLINE[i]);
    }
  }

  function clearMarks() {
    var marked = doc.querySelectorAll('[data-spider]');
    for (var i = 0; i < marked.length; i++) unmark(marked[i]);
  }

  /* ---- Pristine built-ins ---- */

  /* An about:blank iframe shares the page's origin (and its CSP) but none
   * of its scripts' changes. It must stay attached while its functions are
   * in use: a detached frame's fetch and timers stop. */
  var frame = null;
  var F = window;
  function openFrame() {
    try {
      frame = doc.createElement('iframe');
      frame.setAttribute('data-spider-frame', '');
      frame.setAttribute('aria-hidden', 'true');
      frame.setAttribute('tabindex', '-1');
      frame.setAttribute('width', '0');
      frame.setAttribute('height', '0');
      frame.hidden = true;
      root.appendChild(frame);
      var w = frame.contentWindow;
      if (w && typeof w.fetch === 'function' && w.JSON) F = w;
    } catch (e) {
      F = window;
    }
  }
  function closeFrame() {
    removeNode(frame);
    frame = null;
  }

  function sleep(ms) {
    return new F.Promise(function (resolve) { F.setTimeout(resolve, ms); });
  }

  /* ---- CSP violations (connect-src) ---- */

  var violation = null;
  function onViolation(e) {
    var uri = String(e.blockedURI || '');
    if (server && uri.indexOf(server) === 0) violation = e.effectiveDirective || e.violatedDirective || 'connect-src';
  }

  /* ---- The capture ---- */

  function pageUrl() {
    var href = String(location.href);
    var hash = href.indexOf('#');
    return hash < 0 ? href : href.slice(0, hash);
  }

  function siteOf(hostname) {
    var site = String(hostname || '').toLowerCase().replace(/^\[|\]$/g, '');
    if (site.indexOf('www.') === 0) site = site.slice(4);
    return site || 'local';
  }

  /* The rendered DOM as HTML, without what the bookmarklet added. It is
   * imported into an inert document, so nothing in it loads or runs. */
  function domSource() {
    var inert = doc.implementation.createHTMLDocument('');
    var copy = inert.importNode(root, true);
    var ours = copy.querySelectorAll('#spider-badge, iframe[data-spider-frame], script[data-spider-token]');
    for (var i = 0; i < ours.length; i++) removeNode(ours[i]);
    var marked = copy.querySelectorAll('[data-spider]');
    for (var m = 0; m < marked.length; m++) unmark(marked[m]);
    return '<!DOCTYPE html>\n' + copy.outerHTML;
  }

  /* The page as served: the browser's cache usually has it. */
  async function pageSource() {
    var url = pageUrl();
    if (!/^https?:/i.test(url)) return { html: domSource(), from: 'dom' };
    try {
      var abort = new F.AbortController();
      var timer = F.setTimeout(function () { abort.abort(); }, SOURCE_TIMEOUT_MS);
      var resp = await F.fetch(url, {
        credentials: 'same-origin', cache: 'force-cache', redirect: 'follow', signal: abort.signal
      });
      var type = String(resp.headers.get('content-type') || '').toLowerCase();
      var length = Number(resp.headers.get('content-length') || 0);
      if (!resp.ok || length > MAX_SOURCE ||
          (type !== '' && type.indexOf('html') < 0)) {
        F.clearTimeout(timer);
        return { html: domSource(), from: 'dom' };
      }
      var bytes = await resp.arrayBuffer();
      F.clearTimeout(timer);
      if (bytes.byteLength > MAX_SOURCE) return { html: domSource(), from: 'dom' };
      var decoder;
      try {
        decoder = new F.TextDecoder(doc.characterSet || 'utf-8');
      } catch (e) {
        decoder = new F.TextDecoder('utf-8');
      }
      var html = decoder.decode(bytes);
      if (html === '') return { html: domSource(), from: 'dom' };
      return { html: html, from: 'served' };
    } catch (e) {
      return { html: domSource(), from: 'dom' };
    }
  }

  /* ---- Talking to the server ---- */

  function parseJson(text) {
    try {
      return F.JSON.parse(text);
    } catch (e) {
      return null;
    }
  }

  function serverMessage(body, status) {
    return body && typeof body.error === 'string' ? body.error : 'HTTP ' + status;
  }

  /* A rejected fetch: the page's CSP, or the server is unreachable. The
   * violation event may come just after the rejection. */
  async function networkError(e, what) {
    await sleep(100);
    checkCurrent();
    if (violation !== null) {
      return 'spider: this page\'s Content-Security-Policy (' + violation +
        ') does not allow connecting to ' + server;
    }
    if (e && e.name === 'AbortError') return 'spider: ' + what + ' ' + server + ' timed out';
    return 'spider: cannot reach ' + server + ': ' + (e && e.message ? e.message : String(e));
  }

  async function upload(json) {
    var abort = new F.AbortController();
    var timer = F.setTimeout(function () { abort.abort(); }, UPLOAD_TIMEOUT_MS);
    var resp;
    try {
      resp = await F.fetch(server + '/api/captures', {
        method: 'POST',
        mode: 'cors',
        credentials: 'omit',
        cache: 'no-store',
        headers: { 'Authorization': 'Bearer ' + token, 'Content-Type': 'application/json' },
        body: json,
        signal: abort.signal
      });
    } catch (e) {
      F.clearTimeout(timer);
      throw new Error(await networkError(e, 'the upload to'));
    }
    var text = await resp.text();
    F.clearTimeout(timer);
    var body = parseJson(text);
    if (resp.status === 401) {
      throw new Error('spider: the server refused the token (401); make a new bookmarklet on ' + server + '/');
    }
    if (resp.status === 413) {
      throw new Error('spider: page too large for the server (413): ' + serverMessage(body, 413));
    }
    if (!resp.ok) {
      throw new Error('spider: the server refused the capture (' + resp.status + '): ' +
        serverMessage(body, resp.status));
    }
    if (!body || typeof body !== 'object') {
      throw new Error('spider: the server\'s answer is not JSON (HTTP ' + resp.status + ')');
    }
    return body;
  }

  async function fetchRules(site) {
    var resp;
    try {
      resp = await F.fetch(server + '/api/sites/' + F.encodeURIComponent(site) + '/rules', {
        mode: 'cors', credentials: 'omit', cache: 'no-store'
      });
    } catch (e) {
      throw new Error(await networkError(e, 'asking'));
    }
    var body = parseJson(await resp.text());
    if (!resp.ok || !body || typeof body !== 'object') {
      throw new Error('spider: cannot read the rules of ' + site + ' (' + resp.status + '): ' +
        serverMessage(body, resp.status));
    }
    return body;
  }

  /* ---- Applying rules to the live page (src/extract/mod.rs) ---- */

  var SKIPPED = { script: 1, style: 1, noscript: 1, template: 1, head: 1, title: 1 };
  var INLINE = {};
  (function () {
    var tags = ('a abbr b bdi bdo cite code data dfn em font i kbd mark q s samp small ' +
      'span strong sub sup time u var wbr big tt strike label ins del').split(' ');
    for (var i = 0; i < tags.length; i++) INLINE[tags[i]] = 1;
  })();

  /* Rust's char::is_whitespace, which normalize_text splits on. */
  var SPACE = /[\t\n\u000b\f\r \u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]+/g;

  /* rules::normalize_text: NFKC, lower case, whitespace collapsed. */
  function normaliseText(text) {
    var t = text.normalize ? text.normalize('NFKC') : text;
    return t.replace(SPACE, ' ').replace(/^ | $/g, '').toLowerCase();
  }

  function nameOf(el) {
    return String(el.localName || '').toLowerCase();
  }

  /* Never page text: scripts, styles, the head, hidden elements. */
  function suppressed(el) {
    if (SKIPPED[nameOf(el)] === 1 || el.hasAttribute('hidden')) return true;
    var style = el.getAttribute('style');
    if (!style) return false;
    style = style.replace(/\s+/g, '').toLowerCase();
    return style.indexOf('display:none') >= 0 || style.indexOf('visibility:hidden') >= 0;
  }

  /* Page::text: the element's text, skipping suppressed elements and the
   * excluded subtrees, with a space where a block element starts or ends. */
  function textOf(el, excluded) {
    var out = '';
    function walk(node) {
      var type = node.nodeType;
      if (type === 3 || type === 4) {
        out += node.data;
        return;
      }
      if (type === 1) {
        if (excluded.has(node) || suppressed(node)) return;
        var name = nameOf(node);
        var breaks = name === 'br' || INLINE[name] !== 1;
        if (breaks) out += ' ';
        for (var c = node.firstChild; c; c = c.nextSibling) walk(c);
        if (breaks) out += ' ';
        return;
      }
      for (var k = node.firstChild; k; k = k.nextSibling) walk(k);
    }
    walk(el);
    return out;
  }

  function select(selector) {
    try {
      return doc.querySelectorAll(selector);
    } catch (e) {
      return [];
    }
  }

  function within(scopes, el) {
    for (var i = 0; i < scopes.length; i++) {
      if (scopes[i] === el || scopes[i].contains(el)) return true;
    }
    return false;
  }

  /* Marks what `rules` extract; returns the number of content elements. */
  function highlight(rules) {
    clearMarks();
    var i, j, list;
    var excluded = new F.Set();
    var exclude = rules.exclude || [];
    for (i = 0; i < exclude.length; i++) {
      list = select(exclude[i].selector);
      for (j = 0; j < list.length; j++) excluded.add(list[j]);
    }
    var scopes = rules.container ? select(rules.container.selector) : [];
    var contentRules = rules.content || [];
    function collect(scoped) {
      var set = new F.Set();
      for (var r = 0; r < contentRules.length; r++) {
        var found = select(contentRules[r].selector);
        for (var k = 0; k < found.length; k++) {
          if (!scoped || scopes.length === 0 || within(scopes, found[k])) set.add(found[k]);
        }
      }
      return set;
    }
    var content = collect(true);
    /* A container that matched nothing must not hide what the selectors
     * find. */
    if (content.size === 0 && scopes.length > 0) content = collect(false);

    var template = new F.Set();
    var strings = rules.template || [];
    for (i = 0; i < strings.length; i++) template.add(strings[i]);

    /* The outermost content elements, in document order. */
    var kept = [];
    if (content.size > 0) {
      var all = doc.getElementsByTagName('*');
      for (i = 0; i < all.length; i++) {
        var el = all[i];
        if (!content.has(el)) continue;
        var inside = false;
        var dropped = excluded.has(el);
        for (var a = el.parentElement; a; a = a.parentElement) {
          if (content.has(a)) { inside = true; break; }
          if (excluded.has(a) || suppressed(a)) dropped = true;
        }
        if (inside || dropped) continue;
        var text = normaliseText(textOf(el, excluded));
        if (text === '' || template.has(text)) continue;
        kept[kept.length] = el;
      }
    }

    var title = null;
    if (rules.title) {
      var first = select(rules.title.selector)[0];
      if (first) {
        var hidden = false;
        for (var p = first.parentElement; p && !hidden; p = p.parentElement) hidden = suppressed(p);
        if (!hidden && normaliseText(textOf(first, excluded)) !== '') title = first;
      }
    }

    var count = 0;
    for (i = 0; i < kept.length; i++) {
      if (kept[i] === title) continue;
      mark(kept[i], 'content');
      count++;
    }
    if (title) mark(title, 'title');
    return count;
  }

  /* ---- The run ---- */

  function sourceNote(from) {
    return from === 'dom' ? ' (page source unavailable, used the DOM)' : '';
  }

  /* POST /api/extract: what the server's extractor takes from this page's
   * source with the site's rules, fallbacks included. */
  async function extractOnServer(html) {
    var resp;
    try {
      resp = await F.fetch(server + '/api/extract', {
        method: 'POST', mode: 'cors', credentials: 'omit', cache: 'no-store',
        headers: { 'Content-Type': 'application/json' },
        body: capturer.toJson({ html: html, url: pageUrl() })
      });
    } catch (e) {
      throw new Error(await networkError(e, 'asking'));
    }
    var body = parseJson(await resp.text());
    if (!resp.ok || !body || typeof body !== 'object') {
      throw new Error('spider: the server could not extract this page (' + resp.status + '): ' +
        serverMessage(body, resp.status));
    }
    return body;
  }

  /* Marks the outermost visible elements whose text is one of `blocks`
   * (each block once, in document order); returns how many. */
  function markBlocks(blocks) {
    clearMarks();
    var wanted = new F.Set();
    for (var i = 0; i < blocks.length; i++) wanted.add(normaliseText(blocks[i]));
    var none = new F.Set();
    var count = 0;
    var all = doc.body ? doc.body.getElementsByTagName('*') : [];
    for (i = 0; i < all.length && wanted.size > 0; i++) {
      var el = all[i];
      var skip = suppressed(el);
      for (var a = el.parentElement; a && !skip; a = a.parentElement) {
        skip = a.hasAttribute('data-spider') || suppressed(a);
      }
      if (skip) continue;
      var text = normaliseText(textOf(el, none));
      if (text !== '' && wanted.has(text)) {
        wanted.delete(text);
        mark(el, 'content');
        count++;
      }
    }
    return count;
  }

  /* Outlines what the rules select. Where they select nothing (a layout the
   * training pages did not show), the server's extractor falls back to the
   * container's text or Readability: the blocks it finds are outlined
   * instead, and the badge says so. */
  async function showMatched(rules, site, source) {
    checkCurrent();
    var n = highlight(rules);
    var of = ' (rules v' + rules.version + ' of ' + (rules.site || site) + ')';
    if (n > 0) {
      show('matched', 'spider: ' + n + ' block' + (n === 1 ? '' : 's') + ' matched' + of +
        sourceNote(source.from));
      return;
    }
    show('matched', 'spider: the rules select nothing here' + of + '; asking the server…');
    var extracted = await extractOnServer(source.html);
    checkCurrent();
    var m = markBlocks(extracted.blocks || []);
    show('matched', 'spider: the rules select nothing here' + of + '; ' + m + ' block' +
      (m === 1 ? '' : 's') + ' matched by the fallback' +
      (extracted.fallback ? ' (' + extracted.fallback + ')' : '') + sourceNote(source.from));
  }

  async function waitForRules(site, pages, source) {
    var started = new F.Date().getTime();
    var failures = 0;
    var settled = 0;
    for (;;) {
      await sleep(POLL_MS);
      checkCurrent();
      var body;
      try {
        body = await fetchRules(site);
        failures = 0;
      } catch (e) {
        if (e === STALE) throw e;
        /* A server restart or a dropped connection: try again a few times. */
        if (++failures >= 3) throw e;
        continue;
      }
      checkCurrent();
      if (body.rules) {
        await showMatched(body.rules, site, source);
        return;
      }
      var learn = body.learn || {};
      if (learn.state === 'failed') {
        throw new Error('spider: learning ' + site + ' failed: ' + (learn.error || 'no reason given'));
      }
      if (learn.state !== 'queued' && learn.state !== 'running') {
        /* Finished without rules, or nothing to wait for. */
        if (++settled >= 3) {
          throw new Error('spider: learning ' + site + ' from ' + (body.pages || pages) +
            ' pages gave no rules' + (learn.error ? ': ' + learn.error : ''));
        }
      } else {
        settled = 0;
      }
      if (new F.Date().getTime() - started > POLL_FOR_MS) {
        throw new Error('spider: still learning ' + site + ' after ' + POLL_FOR_MS / 1000 +
          ' s; run the bookmarklet again later');
      }
    }
  }

  async function work() {
    if (!server || !token) {
      throw new Error('spider: the bookmarklet has no server or token; make a new one on the spider server\'s page');
    }
    if (!capturer || typeof capturer.capture !== 'function') {
      throw new Error('spider: the capture script did not load (spiderCapture is missing)');
    }
    /* Earlier runs' loader scripts, and their outlines, which would change
     * the styles the capture records. */
    var loaders = doc.querySelectorAll('script[data-spider-token]');
    for (var i = 0; i < loaders.length; i++) {
      if (loaders[i] !== script) removeNode(loaders[i]);
    }
    clearMarks();
    show('capturing', 'spider: capturing this page…');
    openFrame();
    doc.addEventListener('securitypolicyviolation', onViolation);
    if (frame && frame.contentDocument) {
      frame.contentDocument.addEventListener('securitypolicyviolation', onViolation);
    }
    /* Let the badge paint before the capture holds the page. */
    await sleep(30);
    checkCurrent();

    var cap;
    var reattach = badge.detach();
    try {
      cap = capturer.capture({ maxBlocks: 20000 });
    } finally {
      reattach();
    }
    /* Styled only now, for the same reason as the badge. */
    if (frame) {
      css(frame, { display: 'none', position: 'absolute', width: '0', height: '0', border: '0' });
    }
    var source = await pageSource();
    checkCurrent();

    var capture = {
      schema: 1,
      site: siteOf(location.hostname),
      url: pageUrl(),
      captured_at: new F.Date().toISOString(),
      viewport: cap.viewport,
      lang: cap.lang,
      meta: cap.meta,
      html: source.html,
      blocks: cap.blocks,
      truncated: cap.truncated,
      agent: 'spider-bookmarklet/1 ' + navigator.userAgent
    };
    var json = capturer.toJson(capture);
    show('uploading', 'spider: uploading ' + cap.blocks.length + ' blocks to ' + server + '…');
    var answer = await upload(json);
    checkCurrent();

    var site = answer.site || capture.site;
    var pages = answer.pages;
    var learn = answer.learn || {};
    var note = sourceNote(source.from);
    if (answer.rules) {
      await showMatched(answer.rules, site, source);
    } else if (learn.state === 'queued' || learn.state === 'running') {
      show('learning', 'spider: uploaded; learning ' + site + ' from ' + pages + ' pages…' + note);
      await waitForRules(site, pages, source);
    } else if (learn.state === 'failed') {
      throw new Error('spider: uploaded, but learning ' + site + ' failed: ' +
        (learn.error || 'no reason given'));
    } else if (typeof answer.min_pages === 'number' && pages < answer.min_pages) {
      show('uploaded', 'spider: uploaded (' + pages + ' of ' + answer.min_pages + ' pages of ' +
        site + ' needed to learn its rules)' + note);
    } else {
      show('uploaded', 'spider: uploaded (' + pages + ' pages of ' + site +
        '; no rules learned yet)' + note);
    }
  }

  async function main() {
    try {
      await work();
    } catch (e) {
      if (e !== STALE) {
        var message = e && e.message ? String(e.message) : String(e);
        if (message.indexOf('spider:') !== 0) message = 'spider: ' + message;
        try {
          show('error', message);
        } catch (ignored) {
          /* A newer run owns the badge. */
        }
      }
    } finally {
      doc.removeEventListener('securitypolicyviolation', onViolation);
      closeFrame();
    }
  }

  main();
})();
