/*
 * spider's bookmarklet loader: the code behind the bookmark's `javascript:`
 * URL. The server's index page puts its origin and the reader's upload token
 * in place of the two placeholders, then makes the link
 * 'javascript:' + encodeURIComponent(code). It only loads
 * <server>/bookmarklet.js (capture.js + bookmarklet.js), which does the work;
 * when the page will not let that script load (its Content-Security-Policy,
 * or the server is down) it says so in the same badge bookmarklet.js uses.
 * No line comments: the code may become one line.
 */
(function () {
  var server = '__SPIDER_SERVER__';
  var token = '__SPIDER_TOKEN__';
  var d = document;
  var root = d.documentElement;
  var blocked = false;
  var done = false;

  function badge(text) {
    var old = d.getElementById('spider-badge');
    if (old) old.parentNode.removeChild(old);
    var b = d.createElement('spider-badge');
    b.id = 'spider-badge';
    b.setAttribute('data-state', 'error');
    b.setAttribute('role', 'status');
    b.textContent = text;
    var s = b.style;
    var css = {
      all: 'initial', position: 'fixed', right: '12px', bottom: '12px',
      'z-index': '2147483647', display: 'block', 'max-width': '420px',
      padding: '8px 12px', 'border-radius': '6px', background: '#8b1a1a',
      color: '#fff', font: '13px/1.4 system-ui, sans-serif', cursor: 'pointer',
      'box-shadow': '0 2px 8px rgba(0,0,0,.35)', 'white-space': 'normal'
    };
    for (var k in css) s.setProperty(k, css[k], 'important');
    b.addEventListener('click', function () {
      if (b.parentNode) b.parentNode.removeChild(b);
    });
    root.appendChild(b);
  }

  function fail() {
    if (done) return;
    done = true;
    d.removeEventListener('securitypolicyviolation', onViolation);
    badge(blocked ?
      'spider: this page\'s Content-Security-Policy blocks scripts from ' + server +
        '; spider cannot run here' :
      'spider: cannot load ' + server + '/bookmarklet.js; is the spider server running?');
  }

  function onViolation(e) {
    if (String(e.blockedURI || '').indexOf(server) === 0) {
      blocked = true;
      fail();
    }
  }

  d.addEventListener('securitypolicyviolation', onViolation);
  var el = d.createElement('script');
  el.setAttribute('data-spider-server', server);
  el.setAttribute('data-spider-token', token);
  el.addEventListener('load', function () {
    done = true;
    d.removeEventListener('securitypolicyviolation', onViolation);
  });
  el.addEventListener('error', function () {
    /* The violation event may come just after the error: wait for it. */
    try { setTimeout(fail, 150); } catch (e) { fail(); }
  });
  var src = server + '/bookmarklet.js?t=' + Date.now();
  try {
    el.src = src;
  } catch (e) {
    /* Pages that enforce Trusted Types refuse plain strings. */
    try {
      el.src = window.trustedTypes.createPolicy('spider', {
        createScriptURL: function (u) { return u; }
      }).createScriptURL(src);
    } catch (e2) {
      done = true;
      badge('spider: this page does not allow loading scripts (' + e2.message + '); spider cannot run here');
      return;
    }
  }
  (d.body || root).appendChild(el);
})();
