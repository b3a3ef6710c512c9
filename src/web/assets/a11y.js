"use strict";
/**
 * Focus after a refused form (issue #24, WCAG 3.3.1 / 2.4.3): a page that comes back with an
 * error message (`.error[role=alert]`, web/components.ts formError() and field()) moves focus to
 * the first one, so keyboard and screen-reader users land on what went wrong rather than at the
 * top of the page. Without JavaScript the message is still first in its form's reading order.
 * Served on every page by web/layout.ts under a content-hashed URL (CSP script-src 'self').
 */
(function () {
  var summary = document.querySelector("main .error[role=alert], main [data-error-summary]");
  if (!summary) return;
  if (!summary.hasAttribute("tabindex")) summary.setAttribute("tabindex", "-1");
  summary.focus();
})();
