"use strict";
/**
 * The channel composer (issue #24 "Writing"): Enter sends, Shift+Enter adds a line, and sending
 * does not reload the page. The form is posted with fetch asking for JSON (messages.routes.ts
 * answers 201 with the rendered message); the message is handed to live.js, which places it by
 * id, so the same message arriving over the live stream replaces it rather than doubling it.
 * Any other answer (a refused message, a lost connection) submits the form as without
 * JavaScript, so the server's message shows beside it.
 */
(function () {
  var box = document.querySelector("textarea[data-composer]");
  if (!box || !box.form || !window.fetch || !window.URLSearchParams) return;
  var form = box.form;
  var list = document.querySelector("ol.messages[data-live]");
  var sending = false;

  box.addEventListener("keydown", function (event) {
    if (event.key !== "Enter" || event.shiftKey || event.altKey || event.ctrlKey || event.metaKey || event.isComposing) return;
    event.preventDefault();
    if (box.value.trim() === "") return;
    if (form.requestSubmit) form.requestSubmit();
    else form.dispatchEvent(new window.Event("submit", { cancelable: true }));
  });

  form.addEventListener("submit", function (event) {
    if (box.value.trim() === "") return;
    // A /command is answered with the page (an ephemeral answer, the app's failure): posting it
    // with fetch first would send the interaction twice when that answer falls back to the form.
    if (/^\s*\//.test(box.value)) return;
    event.preventDefault();
    if (sending) return;
    sending = true;
    var body = new window.URLSearchParams(new window.FormData(form));
    window.fetch(form.action, { method: "POST", body: body, credentials: "same-origin", headers: { Accept: "application/json" } })
      .then(function (response) {
        if (response.status !== 201) throw new Error("not sent");
        return response.json();
      })
      .then(function (answer) {
        box.value = "";
        var error = form.querySelector(".error");
        if (error) error.remove();
        if (list) list.dispatchEvent(new window.CustomEvent("gatehouse:upsert", { detail: answer.html }));
        sending = false;
        box.focus();
      })
      .catch(function () {
        form.submit();
      });
  });
})();
