"use strict";
/**
 * Edit and Delete on a message without leaving the page (issue #24 "Writing"). The links lead to
 * the edit form and the delete confirmation (message-actions.page.ts); here Edit opens the text
 * in place (Enter saves, Shift+Enter adds a line, Escape cancels) and Delete asks once in place.
 * Both post with fetch asking for JSON; the answer goes to live.js (`gatehouse:upsert`,
 * `gatehouse:remove`), which also receives other people's edits and deletes over the stream. A
 * refused edit or a lost connection submits the small form as without JavaScript, so the
 * server's own page explains. "Dismiss message" on an app's ephemeral message (issue #40 §2)
 * posts at once, as on Discord; should that fail, its confirmation page takes over.
 */
(function () {
  var list = document.querySelector("ol.messages[data-live]");
  if (!list || !window.fetch || !window.URLSearchParams) return;
  var tokenField = document.querySelector('input[name="_csrf"]');
  var token = tokenField ? tokenField.value : "";

  function element(tag, attributes, text) {
    var node = document.createElement(tag);
    Object.keys(attributes).forEach(function (name) { node.setAttribute(name, attributes[name]); });
    if (text) node.textContent = text;
    return node;
  }
  function postForm(action, className) {
    var form = element("form", { method: "post", action: action, class: className });
    form.appendChild(element("input", { type: "hidden", name: "_csrf", value: token }));
    return form;
  }
  function send(form) {
    return window.fetch(form.action, { method: "POST", body: new window.URLSearchParams(new window.FormData(form)), credentials: "same-origin", headers: { Accept: "application/json" } });
  }
  function closeOpen(item) {
    item.querySelectorAll(".inline-edit, .inline-delete").forEach(function (node) { node.remove(); });
    var body = item.querySelector(".body");
    if (body) body.hidden = false;
  }

  function startEdit(link, item) {
    closeOpen(item);
    var form = postForm(link.href, "inline-edit");
    var box = element("textarea", { name: "content", rows: "3", required: "", "aria-label": "Edit message" });
    var hint = element("p", { class: "hint" }, "Enter saves · Escape cancels · Shift+Enter adds a line");
    var actions = element("div", { class: "actions" });
    actions.appendChild(element("button", { type: "submit" }, "Save"));
    var cancel = element("button", { type: "button", class: "secondary" }, "Cancel");
    actions.appendChild(cancel);
    form.appendChild(box);
    form.appendChild(hint);
    form.appendChild(actions);
    // Issue #36 §5: the editor takes the text's place. A grouped message (every one after the
    // first of a run, server-rendered or regrouped by history.js when it arrived live) has no
    // header, so the place is found from the text and embeds, which every message has.
    var main = item.querySelector(".message-main") || item;
    var body = main.querySelector(":scope > .body");
    main.insertBefore(form, body || main.querySelector(":scope > .embeds"));
    box.disabled = true;
    function stop() {
      closeOpen(item);
      link.focus();
    }
    // The text as typed, not as rendered: the edit page holds it.
    window.fetch(link.href, { credentials: "same-origin" })
      .then(function (response) { return response.ok ? response.text() : Promise.reject(new Error("no form")); })
      .then(function (markup) {
        var page = new window.DOMParser().parseFromString(markup, "text/html");
        var source = page.querySelector("textarea[name=content]");
        box.value = source ? source.value : "";
        box.disabled = false;
        if (body) body.hidden = true;
        box.focus();
        box.setSelectionRange(box.value.length, box.value.length);
      })
      .catch(function () { window.location.href = link.href; });
    cancel.addEventListener("click", stop);
    box.addEventListener("keydown", function (event) {
      if (event.key === "Escape") { event.preventDefault(); stop(); return; }
      if (event.key !== "Enter" || event.shiftKey || event.isComposing) return;
      event.preventDefault();
      if (form.requestSubmit) form.requestSubmit();
    });
    form.addEventListener("submit", function (event) {
      if (box.value.trim() === "") return;
      event.preventDefault();
      send(form)
        .then(function (response) { return response.ok ? response.json() : Promise.reject(new Error("not saved")); })
        .then(function (answer) {
          list.dispatchEvent(new window.CustomEvent("gatehouse:upsert", { detail: answer.html }));
          var again = document.querySelector("#m" + answer.id + " [data-edit]");
          if (again) again.focus();
        })
        .catch(function () { form.submit(); });
    });
  }

  // Focus would fall to the page's start with the removed message: it goes to a neighbour's
  // first action, or to the list itself.
  function keepFocusNear(neighbour) {
    var target = neighbour && neighbour.querySelector("a[data-edit], a[data-delete]");
    if (!target) {
      list.setAttribute("tabindex", "-1");
      target = list;
    }
    target.focus({ preventScroll: true });
  }

  function startDelete(link, item) {
    closeOpen(item);
    var form = postForm(link.href, "inline-delete");
    form.setAttribute("role", "group");
    form.setAttribute("aria-label", "Delete this message?");
    form.appendChild(element("span", {}, "Delete this message? "));
    var confirm = element("button", { type: "submit", class: "danger" }, "Delete");
    var cancel = element("button", { type: "button", class: "secondary" }, "Cancel");
    form.appendChild(confirm);
    form.appendChild(cancel);
    item.querySelector(".message-main").appendChild(form);
    confirm.focus();
    function stop() {
      closeOpen(item);
      link.focus();
    }
    cancel.addEventListener("click", stop);
    form.addEventListener("keydown", function (event) {
      if (event.key === "Escape") { event.preventDefault(); stop(); }
    });
    form.addEventListener("submit", function (event) {
      event.preventDefault();
      send(form)
        .then(function (response) {
          if (response.status !== 204) throw new Error("not deleted");
          var neighbour = item.nextElementSibling || item.previousElementSibling;
          list.dispatchEvent(new window.CustomEvent("gatehouse:remove", { detail: item.getAttribute("data-id") }));
          keepFocusNear(neighbour);
        })
        .catch(function () { form.submit(); });
    });
  }

  function dismiss(link, item) {
    send(postForm(link.href, "inline-dismiss"))
      .then(function (response) {
        if (response.status !== 204) throw new Error("not dismissed");
        var neighbour = item.nextElementSibling || item.previousElementSibling;
        list.dispatchEvent(new window.CustomEvent("gatehouse:remove", { detail: item.getAttribute("data-id") }));
        keepFocusNear(neighbour);
      })
      .catch(function () { window.location.href = link.href; });
  }

  list.addEventListener("click", function (event) {
    var dismissLink = event.target.closest("a[data-dismiss]");
    if (dismissLink && dismissLink.closest("li.message")) {
      event.preventDefault();
      dismiss(dismissLink, dismissLink.closest("li.message"));
      return;
    }
    var link = event.target.closest("a[data-edit], a[data-delete]");
    if (!link) return;
    var item = link.closest("li.message");
    if (!item) return;
    event.preventDefault();
    // Issue #36 §5: the click is already taken; should the page ever lack what the inline
    // editor needs, the link's own page does the job instead of nothing happening.
    try {
      if (link.hasAttribute("data-edit")) startEdit(link, item);
      else startDelete(link, item);
    } catch (error) {
      closeOpen(item);
      window.location.href = link.href;
      throw error;
    }
  });
})();
