//! The server's one HTML page (`GET /`): what spider is, the bookmarklet to
//! drag to the bookmarks bar, and the sites with their pages and rules.

use crate::store::{JobState, SiteOverview};

/// The loader that becomes the bookmark's `javascript:` URL; the page fills
/// in the server's origin and the reader's token.
const LOADER: &str = include_str!("../../bookmarklet/loader.js");

/// HTML-escapes text for element content and quoted attributes.
fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

fn state_label(site: &SiteOverview, min_pages: usize) -> String {
    match site.learn {
        JobState::None => format!("needs {} of {min_pages} pages", site.pages),
        JobState::Queued => "learn queued".into(),
        JobState::Running => "learning".into(),
        JobState::Done => "learned".into(),
        JobState::Failed => "last learn failed".into(),
    }
}

/// The index page.
pub fn index(sites: &[SiteOverview], min_pages: usize) -> String {
    let mut rows = String::new();
    for site in sites {
        let name = escape(site.site.as_str());
        rows.push_str(&format!(
            "<tr><td><a href=\"/api/sites/{name}\">{name}</a></td><td class=n>{}</td><td>{}</td><td>{}</td></tr>\n",
            site.pages,
            site.rules_version
                .map(|v| format!("<a href=\"/api/sites/{name}/rules\">v{v}</a>"))
                .unwrap_or_else(|| "none yet".into()),
            escape(&state_label(site, min_pages)),
        ));
    }
    if sites.is_empty() {
        rows.push_str(
            "<tr><td colspan=4>No pages yet: use the bookmarklet on an article.</td></tr>\n",
        );
    }
    // A JSON string is a JS string literal; `</` is escaped so the loader
    // cannot end the <script> element early.
    // The loader's header comment is for readers of the file, not for
    // every bookmark.
    let code = match LOADER.trim_start().strip_prefix("/*") {
        Some(rest) => rest
            .split_once("*/")
            .map_or(LOADER, |(_, code)| code.trim_start()),
        None => LOADER,
    };
    let loader = serde_json::to_string(code)
        .expect("a string serialises")
        .replace("</", "<\\/");
    format!(
        r##"<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>spider</title>
<style>
body {{ font: 16px/1.5 system-ui, sans-serif; max-width: 46rem; margin: 2rem auto; padding: 0 1rem; color: #222; }}
h1 {{ margin-bottom: 0; }}
.lead {{ color: #555; margin-top: .2rem; }}
#bookmarklet {{ display: inline-block; padding: .4rem .9rem; border-radius: 1rem; background: #e8890c; color: #fff; font-weight: 600; text-decoration: none; }}
#bookmarklet.disabled {{ background: #bbb; pointer-events: none; }}
input {{ font: inherit; width: 100%; box-sizing: border-box; padding: .3rem; }}
table {{ border-collapse: collapse; width: 100%; }}
td, th {{ text-align: left; padding: .25rem .5rem; border-bottom: 1px solid #ddd; }}
.n {{ text-align: right; }}
code {{ background: #f3f3f3; padding: 0 .2rem; }}
</style>
</head>
<body>
<h1>spider</h1>
<p class="lead">learns how to read a website by looking at it.</p>
<p>Article pages of one site share a template. The bookmarklet sends the page
you are reading as its text blocks, with their style and place on the page;
once a site has {min_pages} pages, spider
learns which blocks are the article and which are the site's template, and
writes rules that extract new pages of the site without a browser.</p>

<h2>The bookmarklet</h2>
<ol>
<li>Make an upload token where spider runs: <code>spider token create NAME</code>.</li>
<li>Paste it here: <input id="token" type="password" autocomplete="off" placeholder="spt_..." aria-label="upload token"></li>
<li>Drag this link to your bookmarks bar: <a id="bookmarklet" class="disabled" href="#">spider</a></li>
<li>On an article, click the bookmark. A badge in the corner says what happened;
once the site's rules are learned, the blocks they select are outlined.</li>
</ol>
<p>The token stays in your bookmark and this page; the server keeps only its hash.</p>

<h2>Sites</h2>
<table>
<thead><tr><th>site</th><th class=n>pages</th><th>rules</th><th>status</th></tr></thead>
<tbody>
{rows}</tbody>
</table>

<h2>API</h2>
<p>Described in <a href="/api/openapi.json">/api/openapi.json</a>. Uploads
(<code>POST /api/captures</code>) need <code>Authorization: Bearer TOKEN</code>;
reads and <code>POST /api/extract</code> do not.</p>

<script>
(function () {{
  var loader = {loader};
  var input = document.getElementById('token');
  var link = document.getElementById('bookmarklet');
  function update() {{
    var token = input.value.trim();
    var code = loader.split('__SPIDER_SERVER__').join(location.origin)
      .split('__SPIDER_TOKEN__').join(token);
    link.href = token ? 'javascript:' + encodeURIComponent(code) : '#';
    link.className = token ? '' : 'disabled';
  }}
  input.addEventListener('input', update);
  update();
}})();
</script>
</body>
</html>
"##
    )
}
