import { createHash } from 'node:crypto';

/**
 * Static assets are compiled into the build as strings: no copy step, no file lookups, and the
 * content hash in the URL lets browsers cache them forever.
 */
export const APP_CSS = `
:root{--bg:#f6f7f9;--panel:#fff;--text:#1c1e21;--muted:#5f6670;--line:#dde1e6;--accent:#4f46e5;--accent-ink:#fff;--danger:#c62828;--ok:#1b7f3b;--radius:10px;
  font-family:system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif;color-scheme:light dark}
@media (prefers-color-scheme:dark){:root{--bg:#16181c;--panel:#1f2227;--text:#e8eaed;--muted:#a0a6ad;--line:#33373d;--accent:#818cf8;--accent-ink:#0b0b10}}
*{box-sizing:border-box}
body{margin:0;background:var(--bg);color:var(--text);line-height:1.5;font-size:16px}
a{color:var(--accent)}
header.top{display:flex;align-items:center;gap:1rem;flex-wrap:wrap;padding:.6rem 1rem;background:var(--panel);border-bottom:1px solid var(--line)}
header.top .brand{font-weight:700;text-decoration:none;color:var(--text);font-size:1.1rem}
header.top nav{display:flex;gap:.9rem;flex-wrap:wrap;align-items:center;margin-left:auto}
header.top nav a{text-decoration:none;color:var(--muted)}
header.top nav a:hover{color:var(--text)}
header.top form{margin:0}
main{max-width:960px;margin:0 auto;padding:1.25rem 1rem 3rem}
main.narrow{max-width:460px}
h1{font-size:1.5rem;margin:.2rem 0 1rem}
h2{font-size:1.15rem;margin:1.5rem 0 .6rem}
.card{background:var(--panel);border:1px solid var(--line);border-radius:var(--radius);padding:1.1rem 1.2rem;margin:0 0 1rem}
.card>:first-child{margin-top:0}
.card>:last-child{margin-bottom:0}
.muted{color:var(--muted)}
.small{font-size:.875rem}
label{display:block;font-weight:600;margin:.8rem 0 .25rem}
label.check{display:flex;gap:.5rem;align-items:flex-start;font-weight:400;margin:.35rem 0}
label.check input{margin-top:.3rem}
input[type=text],input[type=password],input[type=email],input[type=url],input[type=number],select,textarea{width:100%;padding:.55rem .65rem;border:1px solid var(--line);border-radius:8px;background:var(--bg);color:var(--text);font:inherit}
textarea{min-height:5rem}
.hint{font-size:.85rem;color:var(--muted);margin:.2rem 0 0}
button,.button{display:inline-block;padding:.55rem 1rem;border-radius:8px;border:1px solid var(--accent);background:var(--accent);color:var(--accent-ink);font:inherit;font-weight:600;cursor:pointer;text-decoration:none}
button.secondary,.button.secondary{background:transparent;color:var(--text);border-color:var(--line)}
button.danger{background:var(--danger);border-color:var(--danger);color:#fff}
button.link{background:none;border:none;color:var(--muted);padding:0;font-weight:400}
.actions{display:flex;gap:.6rem;flex-wrap:wrap;margin-top:1rem}
.error{background:#fdecea;color:#8a1c1c;border:1px solid #f5c2c0;border-radius:8px;padding:.6rem .8rem;margin:.6rem 0}
.notice{background:#e8f5ec;color:#145c2c;border:1px solid #b8e0c4;border-radius:8px;padding:.6rem .8rem;margin:.6rem 0}
@media (prefers-color-scheme:dark){.error{background:#3a1e1e;color:#f5c2c0;border-color:#5c2b2b}.notice{background:#1b3324;color:#b8e0c4;border-color:#2b5c3b}}
ul.plain{list-style:none;padding:0;margin:0}
ul.plain li{padding:.45rem 0;border-bottom:1px solid var(--line)}
ul.plain li:last-child{border-bottom:none}
table{width:100%;border-collapse:collapse}
th,td{text-align:left;padding:.45rem .4rem;border-bottom:1px solid var(--line);vertical-align:top}
.layout{display:grid;grid-template-columns:220px 1fr;gap:1rem}
@media (max-width:700px){.layout{grid-template-columns:1fr}}
.sidebar a{display:block;padding:.3rem .5rem;border-radius:6px;text-decoration:none;color:var(--text)}
.sidebar a.active,.sidebar a:hover{background:var(--bg)}
.messages{list-style:none;padding:0;margin:0}
.message{display:flex;gap:.7rem;padding:.55rem 0;border-bottom:1px solid var(--line)}
.message:last-child{border-bottom:none}
.avatar{width:40px;height:40px;border-radius:50%;background:var(--line);flex:none;object-fit:cover;display:flex;align-items:center;justify-content:center;font-weight:700;color:var(--muted)}
.message .meta{font-size:.85rem;color:var(--muted)}
.message .author{font-weight:700;color:var(--text);margin-right:.35rem}
.message .body{white-space:pre-wrap;overflow-wrap:anywhere}
.badge{display:inline-block;font-size:.68rem;font-weight:700;letter-spacing:.02em;background:var(--accent);color:var(--accent-ink);border-radius:4px;padding:0 .3rem;margin-right:.35rem;vertical-align:1px}
.pill{display:inline-block;font-size:.8rem;border:1px solid var(--line);border-radius:999px;padding:0 .5rem;margin:.1rem .2rem .1rem 0}
code,.mono{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:.9em}
.secret{display:block;padding:.6rem;border:1px dashed var(--accent);border-radius:8px;overflow-wrap:anywhere;background:var(--bg)}
.grid2{display:grid;grid-template-columns:repeat(auto-fill,minmax(240px,1fr));gap:.2rem 1rem}
.consent-head{display:flex;gap:.9rem;align-items:center}
.consent-head h1,.consent-head h2{margin:0;font-size:1.2rem;line-height:1.3;overflow-wrap:anywhere}
.consent-head p{margin:.15rem 0 0}
.app-tile{border-radius:12px;background:var(--accent);color:var(--accent-ink)}
.app-tile.large{width:64px;height:64px;border-radius:16px;font-size:1.8rem}
.consent-description{margin:.8rem 0 0;overflow-wrap:anywhere}
.consent-who{display:flex;gap:.7rem;align-items:center;padding:.7rem 0;margin:.9rem 0 0;border-top:1px solid var(--line);border-bottom:1px solid var(--line)}
.consent-who p{margin:0}
.scope-list li{display:flex;gap:.5rem}
.scope-mark{color:var(--ok);font-weight:700}
.consent-actions button{flex:1}
[hidden]{display:none!important}
/* Issue #21 §4: every element a chosen name is shown in is a bidi isolate (UAX #9 §2.7, CSS Writing
   Modes §2.2), so a name's direction controls cannot reorder the APP badge, the time or the text
   beside it. New names may not hold such controls at all (core/names.ts); older ones stay contained. */
bdi,a,strong,b,em,code,label,option,summary,td,th,h1,h2,h3,h4,p,li,.author,.pill,.badge,.muted,.small,.embed-author,.embed-title,.embed-field-name,.consent-head,.consent-who{unicode-bidi:isolate}
.copyrow{display:flex;gap:.5rem;align-items:center}
.copyrow input,.copyrow textarea{flex:1;min-width:0}
/* Bot install consent and Integrations (authorize.page.ts, installs.page.ts). */
fieldset.permission-list{border:none;padding:0;margin:1rem 0 0;min-width:0}
fieldset.permission-list legend{font-weight:600;padding:0;margin-bottom:.3rem}
.not-grantable{color:var(--muted)}
.server-picker{margin:.9rem 0 0}
.server-picker .copyrow select{flex:1;min-width:0}
.install-server{margin:.9rem 0 0}
.installed-apps h3{margin:0;font-size:1.05rem}
.installed-apps h4{margin:.8rem 0 .2rem;font-size:.9rem}
/* Channel view (messages.page.ts, embeds.page.ts): avatars over initials, Markdown, embeds. */
.avatar.stacked{position:relative;overflow:hidden}
.avatar.stacked img{position:absolute;inset:0;width:100%;height:100%;object-fit:cover;border-radius:50%}
.message-main{flex:1;min-width:0}
.message .body code,.embed code{background:var(--bg);border:1px solid var(--line);border-radius:4px;padding:0 .25rem}
.message .body pre,.embed pre{white-space:pre-wrap;overflow-wrap:anywhere;background:var(--bg);border:1px solid var(--line);border-radius:6px;padding:.45rem .6rem;margin:.3rem 0}
.message .body pre code,.embed pre code{border:none;padding:0;background:none}
.embed pre,.embed code{background:var(--panel)}
.embeds{display:grid;gap:.4rem;margin-top:.35rem;max-width:520px}
.embed{position:relative;display:grid;grid-template-columns:minmax(0,1fr);gap:.8rem;background:var(--bg);border:1px solid var(--line);border-radius:6px;padding:.55rem .8rem .65rem 1rem;overflow:hidden}
.embed.has-thumbnail{grid-template-columns:minmax(0,1fr) 80px}
.embed-bar{position:absolute;left:0;top:0;width:4px;height:100%}
.embed-bar rect.default{fill:var(--line)}
.embed-main{min-width:0;display:grid;gap:.3rem;font-size:.9rem;align-content:start}
.embed-author{display:flex;align-items:center;gap:.45rem;font-weight:600;font-size:.85rem;overflow-wrap:anywhere}
.embed-author a,.embed-author span{color:var(--text)}
.embed-author a,.embed-title a{text-decoration:none}
.embed-author a:hover,.embed-title a:hover{text-decoration:underline}
.embed-icon{border-radius:50%;flex:none;object-fit:cover}
.embed-title{font-weight:700;font-size:1rem;line-height:1.35;overflow-wrap:anywhere}
.embed-description,.embed-field-value{white-space:pre-wrap;overflow-wrap:anywhere}
.embed-fields{display:grid;grid-template-columns:repeat(3,minmax(0,1fr));gap:.45rem .9rem;margin-top:.1rem}
.embed-field{grid-column:1/-1;min-width:0}
.embed-field.inline{grid-column:auto}
.embed-field-name{font-weight:700;font-size:.85rem;overflow-wrap:anywhere}
.embed-image{display:block;width:fit-content;max-width:100%;margin-top:.2rem}
.embed-image img{display:block;max-width:100%;max-height:300px;height:auto;border-radius:4px}
.embed-thumbnail{width:80px;height:80px;object-fit:contain;border-radius:4px}
.embed-footer{font-size:.78rem;color:var(--muted);margin-top:.15rem;overflow-wrap:anywhere}
.embed-footer .embed-icon{vertical-align:middle;margin-right:.4rem}
@media (max-width:500px){.embed-fields{grid-template-columns:repeat(2,minmax(0,1fr))}.embed.has-thumbnail{grid-template-columns:minmax(0,1fr) 56px}.embed-thumbnail{width:56px;height:56px}}
`;

export const APP_CSS_PATH = `/assets/app.${createHash('sha256').update(APP_CSS).digest('hex').slice(0, 12)}.css`;

/**
 * Copy buttons (developer portal): progressive enhancement only. A `<button data-copy="ID" hidden>`
 * is revealed when the Clipboard API exists and copies the value of element ID; without
 * JavaScript the readonly field beside it is selected and copied by hand. Read-only fields marked
 * `data-select` select their whole text on focus.
 */
export const APP_JS = `"use strict";
(function () {
  document.querySelectorAll("[data-select]").forEach(function (field) {
    field.addEventListener("focus", function () { field.select(); });
  });
  // Choices that reload the page (the install consent's server picker) apply on change; their
  // submit button is only needed without JavaScript.
  document.querySelectorAll("select[data-autosubmit]").forEach(function (select) {
    var fallback = select.form && select.form.querySelector("[data-autosubmit-fallback]");
    if (fallback) fallback.hidden = true;
    select.addEventListener("change", function () { if (select.value) select.form.submit(); });
  });
  if (!navigator.clipboard) return;
  document.querySelectorAll("button[data-copy]").forEach(function (button) {
    var target = document.getElementById(button.getAttribute("data-copy"));
    if (!target) return;
    var label = button.textContent;
    button.hidden = false;
    button.addEventListener("click", function () {
      navigator.clipboard.writeText("value" in target ? target.value : target.textContent).then(function () {
        button.textContent = "Copied";
        setTimeout(function () { button.textContent = label; }, 1500);
      }, function () {
        target.focus();
      });
    });
  });
})();
`;

export const APP_JS_PATH = `/assets/app.${createHash('sha256').update(APP_JS).digest('hex').slice(0, 12)}.js`;

/**
 * Live channel view (issue #5 "new messages appear without a reload"): progressive enhancement of
 * the server-rendered list `ol.messages[data-live]`. It opens the list's event stream
 * (live.routes.ts) with EventSource, asking for what was posted after the newest message it shows;
 * `message` events carry a rendered <li> that replaces the one with the same id or is inserted in
 * id order; `delete` events carry an id; `end` means access ended (stop, no reconnect). When the
 * page was scrolled to the bottom it stays there. Times are shown in the reader's time zone.
 */
export const APP_LIVE_JS = `"use strict";
(function () {
  var list = document.querySelector("ol.messages[data-live]");
  if (!list) return;
  var empty = list.parentNode.querySelector("[data-empty]");

  function localTimes(root) {
    root.querySelectorAll("time[datetime]").forEach(function (t) {
      var d = new Date(t.getAttribute("datetime"));
      if (isNaN(d.getTime())) return;
      t.title = t.getAttribute("datetime");
      t.textContent = d.toLocaleString([], { dateStyle: "medium", timeStyle: "short" });
    });
  }
  function avatars(root) {
    root.querySelectorAll(".avatar.stacked img").forEach(function (img) {
      if (img.complete && img.naturalWidth === 0) img.remove();
      else img.addEventListener("error", function () { img.remove(); });
    });
  }
  localTimes(list);
  avatars(list);
  if (!window.EventSource) return;

  // Snowflake ids are decimal strings: a shorter one is older.
  function older(a, b) { return a.length !== b.length ? a.length < b.length : a < b; }
  function newestId() {
    var items = list.querySelectorAll("li[data-id]");
    return items.length ? items[items.length - 1].getAttribute("data-id") : "";
  }
  function atBottom() {
    var doc = document.documentElement;
    return window.innerHeight + window.scrollY >= doc.scrollHeight - 48;
  }
  function toBottom() { window.scrollTo(0, document.documentElement.scrollHeight); }
  function settle(wasAtBottom, item) {
    if (empty) empty.hidden = list.children.length > 0;
    if (!wasAtBottom) return;
    toBottom();
    // Pictures load after the item is placed and make it taller: keep following them, unless
    // the reader has scrolled up meanwhile.
    var pinned = window.scrollY;
    if (item) item.querySelectorAll("img").forEach(function (img) {
      img.addEventListener("load", function () {
        if (window.scrollY >= pinned - 2) { toBottom(); pinned = window.scrollY; }
      });
    });
  }
  function upsert(markup) {
    var template = document.createElement("template");
    template.innerHTML = markup;
    var item = template.content.querySelector("li[data-id]");
    if (!item) return;
    var wasAtBottom = atBottom();
    var existing = document.getElementById(item.id);
    if (existing) {
      existing.replaceWith(item);
    } else {
      var id = item.getAttribute("data-id");
      var next = null;
      for (var node = list.lastElementChild; node; node = node.previousElementSibling) {
        if (older(node.getAttribute("data-id") || "", id)) break;
        next = node;
      }
      list.insertBefore(item, next);
    }
    localTimes(item);
    avatars(item);
    settle(wasAtBottom && !existing, item);
  }

  var url = list.getAttribute("data-live");
  var after = newestId();
  var source = new EventSource(after ? url + "?after=" + encodeURIComponent(after) : url);
  source.addEventListener("message", function (event) { upsert(event.data); });
  source.addEventListener("delete", function (event) {
    var item = document.getElementById("m" + event.data);
    if (item) item.remove();
    settle(false);
  });
  source.addEventListener("end", function () { source.close(); });
  list.setAttribute("data-live-state", "connecting");
  source.addEventListener("open", function () { list.setAttribute("data-live-state", "open"); });
  source.addEventListener("error", function () {
    list.setAttribute("data-live-state", source.readyState === EventSource.CLOSED ? "closed" : "connecting");
  });
})();
`;

export const APP_LIVE_JS_PATH = `/assets/live.${createHash('sha256').update(APP_LIVE_JS).digest('hex').slice(0, 12)}.js`;
