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
.copyrow{display:flex;gap:.5rem;align-items:center}
.copyrow input,.copyrow textarea{flex:1;min-width:0}
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
