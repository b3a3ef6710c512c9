"use strict";
/**
 * Channel history (issue #24 "Reading"), an enhancement of the server-rendered pane
 * `.history[data-history]` (messages.page.ts). The pane opens at its bottom by layout; this
 * script fetches older pages as the reader nears the top — the same `?before=` URL as the
 * "Load older messages" link — and inserts their messages above, keeping what is on screen where
 * it is (in a column-reverse scroller the offset from the bottom does not move). "Jump to
 * present" shows once the reader is more than two screens up and scrolls back to the newest.
 */
(function () {
  var lists = document.querySelectorAll("ol.messages");

  // Times in the reader's time zone: the server renders UTC (deterministic for tests); here the
  // labels are redone locally, "Today at 14:03", "2 minutes ago", the hour beside grouped messages.
  function two(n) { return (n < 10 ? "0" : "") + n; }
  function hhmm(d) { return two(d.getHours()) + ":" + two(d.getMinutes()); }
  function dayNumber(d) { return Math.floor(new Date(d.getFullYear(), d.getMonth(), d.getDate()).getTime() / 864e5 + 0.5); }
  function relative(d, now) {
    var ago = now.getTime() - d.getTime();
    if (ago >= 0 && ago < 6e4) return "Just now";
    if (ago >= 0 && ago < 36e5) { var m = Math.floor(ago / 6e4); return m + (m === 1 ? " minute ago" : " minutes ago"); }
    var days = dayNumber(now) - dayNumber(d);
    if (days === 0) return "Today at " + hhmm(d);
    if (days === 1) return "Yesterday at " + hhmm(d);
    return d.toLocaleDateString() + " " + hhmm(d);
  }
  function localise(root) {
    var now = new Date();
    root.querySelectorAll("time[data-relative]").forEach(function (t) {
      var d = new Date(t.getAttribute("datetime"));
      if (isNaN(d.getTime())) return;
      t.title = d.toLocaleString([], { dateStyle: "full", timeStyle: "medium" });
      t.textContent = t.hasAttribute("data-short") ? hhmm(d) : relative(d, now);
    });
  }

  // Grouping and day separators as message-list.page.ts renders them (one author within 7
  // minutes on one UTC day shares a header; nothing in between), redone where the page grows: a
  // message that arrives live joins the group above it, and an older page's last message and
  // the first one shown before it regroup.
  var GROUP_MS = 7 * 60000;
  function has(node, name) { return !!(node && node.classList && node.classList.contains(name)); }
  function timeOf(item) { var t = item.querySelector("time[datetime]"); return t ? Date.parse(t.getAttribute("datetime")) : NaN; }
  function utcDay(ms) { return Math.floor(ms / 864e5); }
  function authorOf(item) {
    var name = item.querySelector(".meta .author") || item.querySelector(".message-main > .visually-hidden");
    return (item.getAttribute("data-author") || "") + "\n" + (name ? name.textContent : "");
  }
  function dayLabel(ms) {
    var days = utcDay(Date.now()) - utcDay(ms);
    return days === 0 ? "Today" : days === 1 ? "Yesterday" : new Date(ms).toISOString().slice(0, 10);
  }
  function nextMessage(node) { for (var n = node.nextElementSibling; n; n = n.nextElementSibling) if (has(n, "message")) return n; return null; }
  // A full message becomes a grouped one: the hour in the gutter, the name kept for screen readers.
  function joinGroup(item) {
    var meta = item.querySelector(".message-main > .meta");
    var picture = item.querySelector(".avatar");
    if (!meta || !picture) return;
    var gutter = document.createElement("span");
    gutter.className = "gutter";
    var t = meta.querySelector("time[datetime]");
    if (t) { t.setAttribute("data-short", ""); gutter.appendChild(t); }
    picture.replaceWith(gutter);
    var name = document.createElement("span");
    name.className = "visually-hidden";
    var author = meta.querySelector(".author");
    name.textContent = author ? author.textContent : "";
    var edited = meta.querySelector(".small");
    meta.replaceWith(name);
    if (edited) name.after(" ", edited);
    item.classList.add("grouped");
  }
  function regroup(list) {
    var days = !!list.closest(".history");
    var prev = null;
    for (var node = list.firstElementChild; node; ) {
      var next = node.nextElementSibling;
      if (has(node, "day-separator")) {
        // One separator per day: one between two messages of the same day is one too many.
        var following = nextMessage(node);
        if (prev && following && utcDay(timeOf(following)) === utcDay(timeOf(prev))) node.remove();
      } else if (has(node, "message")) {
        var at = timeOf(node);
        var before = node.previousElementSibling;
        var marker = has(before, "new-messages") ? before : null;
        var above = marker ? marker.previousElementSibling : before;
        var newDay = !prev || utcDay(at) !== utcDay(timeOf(prev));
        if (days && newDay && !has(above, "day-separator")) {
          var separator = document.createElement("li");
          separator.className = "day-separator";
          var label = document.createElement("span");
          label.textContent = dayLabel(at);
          separator.appendChild(label);
          list.insertBefore(separator, marker || node);
        }
        var gap = prev ? at - timeOf(prev) : -1;
        // An app's answer keeps its "<person> used /name" line and its own header (issue #40 §2).
        if (prev && before === prev && !newDay && gap >= 0 && gap <= GROUP_MS && authorOf(prev) === authorOf(node) && !has(node, "grouped") && !node.querySelector(".interaction-line")) {
          joinGroup(node);
          localise(node);
        }
        prev = node;
      }
      node = next;
    }
  }

  // Name colours (issue #24): the list's data-author-colors holds "<author id>=<light>/<dark>"
  // (made readable on each theme's panel by the server); set through the CSSOM, which the CSP
  // allows where it forbids style attributes.
  function colorsOf(list) {
    var map = {};
    (list.getAttribute("data-author-colors") || "").split(" ").forEach(function (entry) {
      var parts = /^([0-9]+)=(#[0-9a-f]{6})\/(#[0-9a-f]{6})$/.exec(entry);
      if (parts) map[parts[1]] = [parts[2], parts[3]];
    });
    return map;
  }
  function paint(list) {
    var map = colorsOf(list);
    list.querySelectorAll("li[data-author] .meta .author").forEach(function (name) {
      var colors = map[name.closest("li").getAttribute("data-author")];
      if (!colors || name.classList.contains("role-colored")) return;
      name.style.setProperty("--role-light", colors[0]);
      name.style.setProperty("--role-dark", colors[1]);
      name.classList.add("role-colored");
    });
  }
  function tidy(list) { regroup(list); paint(list); }

  lists.forEach(function (list) {
    localise(list);
    tidy(list);
    // Messages arriving live (live.js) or from older pages. live.js also asks synchronously
    // (gatehouse:inserted), so it can keep the reader's place once the list has settled.
    new window.MutationObserver(function (records) {
      records.forEach(function (r) { r.addedNodes.forEach(function (n) { if (n.querySelectorAll) localise(n); }); });
      tidy(list);
    }).observe(list, { childList: true });
    list.addEventListener("gatehouse:inserted", function () { tidy(list); });
  });
  setTimeout(function tick() { lists.forEach(localise); setTimeout(tick, 60000); }, 60000);

  var pane = document.querySelector(".history[data-history]");
  if (!pane) return;
  var list = pane.querySelector("ol.messages");
  var jump = pane.parentNode.querySelector("a[data-jump]");
  var loading = false;

  // Distance from the newest message: in a column-reverse scroller scrollTop is 0 at the bottom
  // and negative above it (Chromium, Firefox, Safari); in a normal one it grows downwards.
  var reversed = window.getComputedStyle(pane).flexDirection === "column-reverse";
  function fromBottom() { return reversed ? Math.abs(pane.scrollTop) : pane.scrollHeight - pane.clientHeight - pane.scrollTop; }
  function fromTop() { return pane.scrollHeight - pane.clientHeight - fromBottom(); }

  function labelOf(node) { return node && node.classList && node.classList.contains("day-separator") ? node.textContent : null; }

  function insertOlder(doc) {
    var fetched = doc.querySelector(".history ol.messages");
    var edge = doc.querySelector(".history .history-edge");
    if (!fetched) return false;
    // The older page's name colours join this list's (its authors may not be shown here yet).
    var more = fetched.getAttribute("data-author-colors");
    if (more) list.setAttribute("data-author-colors", ((list.getAttribute("data-author-colors") || "") + " " + more).trim());
    var firstOld = list.firstElementChild;
    var lastFetchedDay = null;
    var items = Array.prototype.slice.call(fetched.children);
    items.forEach(function (item) {
      if (labelOf(item)) lastFetchedDay = labelOf(item);
      // Already shown (a message posted live meanwhile cannot be older, but be safe).
      if (item.id && document.getElementById(item.id)) return;
      list.insertBefore(document.importNode(item, true), firstOld);
    });
    // The page boundary inside one day: one separator is enough.
    if (lastFetchedDay && labelOf(firstOld) === lastFetchedDay) firstOld.remove();
    tidy(list);
    var current = pane.querySelector(".history-edge");
    if (current && edge) current.replaceWith(document.importNode(edge, true));
    return true;
  }

  function loadOlder() {
    var link = pane.querySelector("a[data-older]");
    if (loading || !link) return;
    loading = true;
    pane.setAttribute("aria-busy", "true");
    window.fetch(link.href, { credentials: "same-origin", headers: { Accept: "text/html" } })
      .then(function (res) { if (!res.ok) throw new Error(String(res.status)); return res.text(); })
      .then(function (text) {
        insertOlder(new window.DOMParser().parseFromString(text, "text/html"));
      })
      .catch(function () { /* the link still works as a plain link */ })
      .then(function () {
        loading = false;
        pane.removeAttribute("aria-busy");
        check();
      });
  }

  function check() {
    if (fromTop() < pane.clientHeight) loadOlder();
    if (!jump) return;
    // live.js marks it data-new when a message arrives below the reader: shown until they are back at the newest.
    if (fromBottom() <= 48) jump.removeAttribute("data-new");
    var fresh = jump.hasAttribute("data-new");
    jump.hidden = !fresh && fromBottom() < 2 * pane.clientHeight;
    jump.textContent = fresh ? "New messages ↓" : "Jump to present ↓";
  }

  function toPresent() {
    pane.scrollTop = reversed ? 0 : pane.scrollHeight;
  }

  // Unread state: what arrives live while the page is visible and at its newest is read; the
  // server is told (POST /channels/:id/read) so other pages do not show it as unread.
  var csrf = document.querySelector("input[name=_csrf]");
  function newestShown() {
    var items = list.querySelectorAll("li[data-id]");
    return items.length ? items[items.length - 1].getAttribute("data-id") : "";
  }
  var reported = newestShown();
  var pending = null;
  function report() {
    pending = null;
    var newest = newestShown();
    if (!csrf || !newest || newest === reported || document.visibilityState !== "visible" || fromBottom() > 48) return;
    reported = newest;
    var body = new window.URLSearchParams({ messageId: newest, _csrf: csrf.value });
    window.fetch(pane.getAttribute("data-history") + "/read", { method: "POST", credentials: "same-origin", body: body }).catch(function () { reported = ""; });
  }
  function soon() { if (!pending) pending = setTimeout(report, 500); }
  if (list.hasAttribute("data-live")) {
    new window.MutationObserver(soon).observe(list, { childList: true });
    document.addEventListener("visibilitychange", soon);
    pane.addEventListener("scroll", soon, { passive: true });
  }

  pane.addEventListener("scroll", check, { passive: true });
  pane.addEventListener("click", function (event) {
    var link = event.target.closest && event.target.closest("a[data-older]");
    if (!link) return;
    event.preventDefault();
    loadOlder();
  });
  // On the newest page "Jump to present" scrolls; on an older page (?before=) it is a link.
  if (jump && !/[?&]before=/.test(window.location.search)) {
    jump.addEventListener("click", function (event) {
      event.preventDefault();
      toPresent();
      pane.focus({ preventScroll: true });
    });
  }
  if (!reversed) toPresent();
  // When the channel list stands above the messages (narrow screens), bring the composer into
  // view, unless the address names a place to go.
  var composer = document.getElementById("post");
  if (composer && !window.location.hash && composer.getBoundingClientRect().bottom > window.innerHeight) {
    composer.scrollIntoView({ block: "end" });
  }
  check();
})();
