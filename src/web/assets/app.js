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

/**
 * Issue #42 §3: a preview of the image chosen in `<input type="file" data-preview="ID">`, shown in
 * the `<img id="ID">` before it is uploaded (a data: URL: the pages' CSP allows no blob: images).
 * The form posts the file itself either way.
 */
(function () {
  document.querySelectorAll("input[type=file][data-preview]").forEach(function (input) {
    var preview = document.getElementById(input.getAttribute("data-preview"));
    if (!preview || typeof FileReader === "undefined") return;
    input.addEventListener("change", function () {
      var file = input.files && input.files[0];
      if (!file || !/^image\/(png|jpeg|gif|webp)$/.test(file.type)) { preview.hidden = true; return; }
      var reader = new FileReader();
      reader.onload = function () { preview.src = String(reader.result); preview.hidden = false; };
      reader.readAsDataURL(file);
    });
  });
})();
