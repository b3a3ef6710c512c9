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

  function labelOf(node) { return node && node.classList && node.classList.contains("day-separator") ? node.getAttribute("aria-label") : null; }

  function insertOlder(doc) {
    var fetched = doc.querySelector(".history ol.messages");
    var edge = doc.querySelector(".history .history-edge");
    if (!fetched) return false;
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
    if (jump) jump.hidden = fromBottom() < 2 * pane.clientHeight;
  }

  function toPresent() {
    pane.scrollTop = reversed ? 0 : pane.scrollHeight;
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
  check();
})();
