"use strict";
// Channel names as Discord shows them while typing (issue #24): "Dev Ops!" becomes dev-ops.
// The same rule as channelSlug in src/modules/directory/channels.ts (typing = true: a trailing
// dash stays so the next word can follow); the server applies it again on save, so without
// this script the result is the same. Served from /assets under the strict CSP.
(function () {
  function slug(raw) {
    return raw
      .toLowerCase()
      .replace(/[\s-]+/gu, '-')
      .replace(/[^\p{L}\p{N}_-]/gu, '')
      .replace(/-{2,}/gu, '-')
      .replace(/^-+/u, '');
  }

  document.addEventListener('input', function (event) {
    var field = event.target;
    if (!field || field.tagName !== 'INPUT' || !field.hasAttribute('data-channel-slug')) return;
    var before = field.value;
    var after = slug(before);
    if (after === before) return;
    // Keep the caret where it was, counted in characters kept before it.
    var caret = field.selectionStart === null ? before.length : field.selectionStart;
    var caretAfter = slug(before.slice(0, caret)).length;
    field.value = after;
    field.setSelectionRange(caretAfter, caretAfter);
  });
})();
