"use strict";
/**
 * Copy buttons (developer portal): progressive enhancement only. A `<button data-copy="ID" hidden>`
 * is revealed when the Clipboard API exists and copies the value of element ID; without
 * JavaScript the readonly field beside it is selected and copied by hand. Read-only fields marked
 * `data-select` select their whole text on focus. Served by web/assets.ts under a content-hashed URL.
 */
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
