"use strict";
/**
 * Live channel view (issue #5 "new messages appear without a reload"): progressive enhancement of
 * the server-rendered list `ol.messages[data-live]`. It opens the list's event stream
 * (live.routes.ts) with EventSource, asking for what was posted after the newest message it shows;
 * `message` events carry a rendered <li> that replaces the one with the same id or is inserted in
 * id order; `delete` events carry an id; `end` means access ended (stop, no reconnect); a stream
 * the server refuses (too many open, issue #36 §1) shows a notice with Reconnect, and one it ended
 * because this page fell too far behind (`behind`) a notice with Reload. When the
 * reader was at the newest message (of the history pane, which scrolls by itself, or of the
 * window) the view stays there; scrolled up, what they read stays put and "New messages ↓"
 * appears. Times are shown in the reader's time zone.
 */
(function () {
  var list = document.querySelector("ol.messages[data-live]");
  if (!list) return;
  var empty = list.parentNode.querySelector("[data-empty]");

  function localTimes(root) {
    // Times marked data-relative are history.js's (relative labels, issue #24).
    root.querySelectorAll("time[datetime]:not([data-relative])").forEach(function (t) {
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
  // composer.js and message-actions.js hand over what their own posts answered: placed by id
  // like the stream's events, so a message both deliver shows once.
  list.addEventListener("gatehouse:upsert", function (event) { upsert(event.detail); });
  list.addEventListener("gatehouse:remove", function (event) { remove(event.detail); });
  if (!window.EventSource) return;

  // Snowflake ids are decimal strings: a shorter one is older.
  function older(a, b) { return a.length !== b.length ? a.length < b.length : a < b; }
  function newestId() {
    var items = list.querySelectorAll("li[data-id]");
    return items.length ? items[items.length - 1].getAttribute("data-id") : "";
  }
  // Where the reader scrolls: the channel view's history pane (app.css .history scrolls by itself,
  // column-reverse, at every width), else the window (the Direct messages page).
  var pane = list.closest(".history");
  function paneScrolls() {
    if (!pane) return false;
    var overflow = window.getComputedStyle(pane).overflowY;
    return overflow === "auto" || overflow === "scroll";
  }
  function reversed() { return window.getComputedStyle(pane).flexDirection === "column-reverse"; }
  // Distance from the newest message: in a column-reverse scroller scrollTop is 0 at the bottom and negative above.
  function fromBottom() {
    if (paneScrolls()) return reversed() ? Math.abs(pane.scrollTop) : pane.scrollHeight - pane.clientHeight - pane.scrollTop;
    var doc = document.documentElement;
    return doc.scrollHeight - (window.innerHeight + window.scrollY);
  }
  function fromTop() {
    return paneScrolls() ? pane.scrollHeight - pane.clientHeight - fromBottom() : window.scrollY;
  }
  function atBottom() { return fromBottom() <= 48; }
  function toBottom() {
    if (paneScrolls()) pane.scrollTop = reversed() ? 0 : pane.scrollHeight;
    else window.scrollTo(0, document.documentElement.scrollHeight);
  }
  // Keeps what the reader looks at in place: nothing above it changed, so its distance from the top holds.
  function keepTop(top) {
    if (!paneScrolls()) return;
    pane.scrollTop = reversed() ? -Math.max(0, pane.scrollHeight - pane.clientHeight - top) : top;
  }
  // A message arrived below a reader who scrolled up: "New messages ↓" (history.js shows it until they are back).
  function hint() {
    var jump = pane && pane.parentNode.querySelector("a[data-jump]");
    if (!jump) return;
    jump.setAttribute("data-new", "");
    pane.dispatchEvent(new window.Event("scroll"));
  }
  function settle(wasAtBottom, item) {
    if (empty) empty.hidden = list.children.length > 0;
    if (!wasAtBottom) return;
    toBottom();
    // Pictures load after the item is placed and make it taller: keep following them, unless
    // the reader has scrolled up meanwhile.
    if (item) item.querySelectorAll("img").forEach(function (img) {
      img.addEventListener("load", function () { if (fromBottom() <= 48 + img.height) toBottom(); });
    });
  }
  function upsert(markup) {
    var template = document.createElement("template");
    template.innerHTML = markup;
    var item = template.content.querySelector("li[data-id]");
    if (!item) return;
    var wasAtBottom = atBottom();
    var top = fromTop();
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
    // history.js regroups and colours now (not in a later microtask), so the place kept below is final.
    list.dispatchEvent(new window.CustomEvent("gatehouse:inserted"));
    if (!existing && !wasAtBottom) { keepTop(top); hint(); }
    settle(wasAtBottom && !existing, item);
  }

  function remove(id) {
    var item = document.getElementById("m" + id);
    if (item) item.remove();
    settle(false);
  }

  // Issue #36 §1: a stream the server refuses (429 beyond the open-stream caps; also 401 or 404)
  // is not retried by EventSource. The reader is told, and Reconnect tries again once they have
  // closed another view; nothing retries by itself, so a refused page adds no load.
  var notice = null;
  var behindNotice = null;
  // A status line under the message pane with its one action button.
  function liveNotice(kind, text, label, action) {
    var p = document.createElement("p");
    p.className = "error live-notice";
    p.setAttribute("role", "status");
    p.setAttribute("data-live-notice", kind);
    p.appendChild(document.createTextNode(text));
    var button = document.createElement("button");
    button.type = "button";
    button.textContent = label;
    button.addEventListener("click", action);
    p.appendChild(button);
    var anchor = pane || list;
    anchor.parentNode.insertBefore(p, anchor.nextSibling);
    return p;
  }
  // Issue #36 §1: the server ended the stream because this page read too slowly; what it missed
  // (edits and removals too) is not replayed, so the page is reloaded rather than reconnected.
  function showBehind() {
    if (!behindNotice) {
      behindNotice = liveNotice("behind", "Live updates fell behind on this connection: reload to see every change. ", "Reload", function () { window.location.reload(); });
    }
    behindNotice.hidden = false;
  }
  function showNotice() {
    if (!notice) {
      notice = liveNotice("", "Live updates stopped: new messages show when you reload, or reconnect after closing other tabs following a conversation. ", "Reconnect", function () {
        notice.hidden = true;
        connect();
      });
    }
    notice.hidden = false;
  }

  var url = list.getAttribute("data-live");
  function connect() {
    var after = newestId();
    var source = new EventSource(after ? url + "?after=" + encodeURIComponent(after) : url);
    var ended = false;
    source.addEventListener("message", function (event) { upsert(event.data); });
    source.addEventListener("delete", function (event) { remove(event.data); });
    source.addEventListener("end", function () { ended = true; source.close(); list.setAttribute("data-live-state", "closed"); });
    source.addEventListener("behind", function () { ended = true; source.close(); list.setAttribute("data-live-state", "behind"); showBehind(); });
    list.setAttribute("data-live-state", "connecting");
    source.addEventListener("open", function () { list.setAttribute("data-live-state", "open"); });
    source.addEventListener("error", function () {
      var closed = source.readyState === EventSource.CLOSED;
      list.setAttribute("data-live-state", closed ? (ended ? "closed" : "refused") : "connecting");
      if (closed && !ended) showNotice();
    });
  }
  connect();
})();
