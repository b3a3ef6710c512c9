"use strict";
/**
 * The channel composer (issue #24 "Writing"): Enter sends, Shift+Enter adds a line, and sending
 * does not reload the page. The form is posted with fetch asking for JSON (messages.routes.ts
 * answers 201 with the rendered message); the message is handed to live.js, which places it by
 * id, so the same message arriving over the live stream replaces it rather than doubling it.
 * Any other answer to a text message (a refused message, a lost connection) submits the form as
 * without JavaScript, so the server's message shows beside it.
 *
 * Files (issue #42 §2, when the form has data-max-bytes: the person may attach files): an
 * "Attach files" button, files dropped on the channel and images pasted into the box become chips
 * (name, size, a description for images, Remove) checked against the server's limits; sending
 * posts them once as multipart/form-data with XMLHttpRequest, whose upload progress a
 * role=progressbar shows. A refusal shows the server's sentence and is never posted again: an
 * upload sent twice would be two messages.
 */
(function () {
  var box = document.querySelector("textarea[data-composer]");
  if (!box || !box.form || !window.fetch || !window.URLSearchParams) return;
  var form = box.form;
  var list = document.querySelector("ol.messages[data-live]");
  var sending = false;
  var commandsOnly = box.getAttribute("data-composer") === "commands";
  var files = [];
  var attach = form.hasAttribute("data-max-bytes") && window.FormData && window.XMLHttpRequest ? setUpFiles() : null;

  function hasFiles() {
    return files.length > 0;
  }

  box.addEventListener("keydown", function (event) {
    if (event.key !== "Enter" || event.shiftKey || event.altKey || event.ctrlKey || event.metaKey || event.isComposing) return;
    event.preventDefault();
    if (box.value.trim() === "" && !hasFiles()) return;
    if (form.requestSubmit) form.requestSubmit();
    else form.dispatchEvent(new window.Event("submit", { cancelable: true }));
  });

  function showError(text) {
    var error = form.querySelector(".error");
    if (!error) {
      error = document.createElement("div");
      error.className = "error";
      error.setAttribute("role", "alert");
      form.insertBefore(error, form.querySelector("label[for=content]"));
    }
    error.textContent = text;
  }

  function clearError() {
    var error = form.querySelector(".error");
    if (error) error.remove();
  }

  function sent(answer) {
    box.value = "";
    clearError();
    if (list) list.dispatchEvent(new window.CustomEvent("gatehouse:upsert", { detail: answer.html }));
    sending = false;
    box.focus();
  }

  form.addEventListener("submit", function (event) {
    if (hasFiles()) {
      event.preventDefault();
      if (!sending) attach.upload();
      return;
    }
    if (box.value.trim() === "") return;
    // A /command is answered with the page (an ephemeral answer, the app's failure), and so is
    // everything sent from a composer of commands only (a DM with an app's bot, dms.routes.ts,
    // data-composer="commands"): posting it with fetch first would send it twice when that
    // answer falls back to the form.
    if (/^\s*\//.test(box.value) || commandsOnly) return;
    event.preventDefault();
    if (sending) return;
    sending = true;
    var data = new window.FormData(form);
    // A text message goes as a small form (the file input, if any, left out).
    data.delete("files");
    var body = new window.URLSearchParams(data);
    window.fetch(form.action, { method: "POST", body: body, credentials: "same-origin", headers: { Accept: "application/json" } })
      .then(function (response) {
        if (response.status !== 201) throw new Error("not sent");
        return response.json();
      })
      .then(sent)
      .catch(function () {
        form.submit();
      });
  });

  /** The file part of the composer; returns what the submit handler needs. */
  function setUpFiles() {
    var maxBytes = Number(form.getAttribute("data-max-bytes"));
    var maxFiles = Number(form.getAttribute("data-max-files")) || 10;
    var field = form.querySelector("[data-attach]");
    var input = form.querySelector("input[type=file]");
    if (!field || !input) return null;
    var paragraph = input.closest("p");
    var more = field.querySelector("[data-attach-more]");
    if (more) more.hidden = false;

    // The native input stays in the page (it is what the button opens) but out of sight and of
    // the tab order: the button, a real <button>, is what keyboards and screen readers meet.
    var button = document.createElement("button");
    button.type = "button";
    button.className = "secondary attach-button";
    button.textContent = "Attach files";
    button.setAttribute("aria-describedby", "files-hint");
    if (paragraph) paragraph.hidden = true;
    input.tabIndex = -1;
    // Beside Send, so the composer grows by no row of its own.
    var actions = form.querySelector(".actions");
    if (actions) actions.insertBefore(button, actions.firstChild);
    else field.insertBefore(button, field.firstChild);
    button.addEventListener("click", function () {
      input.click();
    });

    var chips = document.createElement("ul");
    chips.className = "chips";
    chips.setAttribute("aria-label", "Files to send");
    chips.hidden = true;
    field.appendChild(chips);

    // Told to screen readers; the chips say it on screen.
    var status = document.createElement("p");
    status.className = "attach-status";
    status.setAttribute("role", "status");
    field.appendChild(status);

    var progress = document.createElement("div");
    progress.className = "upload-progress";
    progress.hidden = true;
    var bar = document.createElement("div");
    bar.className = "progressbar";
    bar.setAttribute("role", "progressbar");
    bar.setAttribute("aria-label", "Uploading files");
    bar.setAttribute("aria-valuemin", "0");
    bar.setAttribute("aria-valuemax", "100");
    bar.setAttribute("aria-valuenow", "0");
    var fill = document.createElement("span");
    bar.appendChild(fill);
    var percent = document.createElement("span");
    percent.className = "small muted";
    progress.appendChild(bar);
    progress.appendChild(percent);
    field.appendChild(progress);

    function readable(bytes) {
      if (bytes < 1000) return bytes + " bytes";
      var units = ["kB", "MB", "GB"];
      var value = bytes / 1000;
      var unit = 0;
      while (value >= 1000 && unit < units.length - 1) {
        value /= 1000;
        unit += 1;
      }
      return (value < 10 ? value.toFixed(1) : String(Math.round(value))) + " " + units[unit];
    }

    function total() {
      var sum = 0;
      for (var i = 0; i < files.length; i += 1) sum += files[i].file.size;
      return sum;
    }

    function isImage(file) {
      return /^image\/(png|jpeg|gif|webp)$/.test(file.type);
    }

    function render() {
      chips.textContent = "";
      files.forEach(function (entry, index) {
        var chip = document.createElement("li");
        chip.className = "chip";
        var name = document.createElement("span");
        name.className = "chip-name";
        name.textContent = entry.file.name;
        var size = document.createElement("span");
        size.className = "small muted";
        size.textContent = readable(entry.file.size);
        chip.appendChild(name);
        chip.appendChild(document.createTextNode(" "));
        chip.appendChild(size);
        if (isImage(entry.file)) {
          var description = document.createElement("input");
          description.type = "text";
          description.maxLength = 1024;
          description.className = "chip-description";
          description.placeholder = "Description (alt text)";
          description.setAttribute("aria-label", "Description of " + entry.file.name + " (alt text)");
          description.value = entry.description;
          description.addEventListener("input", function () {
            entry.description = description.value;
          });
          chip.appendChild(description);
        }
        var remove = document.createElement("button");
        remove.type = "button";
        remove.className = "icon secondary";
        remove.textContent = "×";
        remove.setAttribute("aria-label", "Remove " + entry.file.name);
        remove.addEventListener("click", function () {
          files.splice(index, 1);
          render();
          status.textContent = entry.file.name + " removed.";
          // Focus stays in the list: the Remove button now in this place (or the last one), else Attach files.
          var next = chips.querySelectorAll("button")[Math.min(index, files.length - 1)];
          (next || button).focus();
        });
        chip.appendChild(remove);
        chips.appendChild(chip);
      });
      chips.hidden = files.length === 0;
    }

    /** Adds files within the server's limits (GATEHOUSE_ATTACHMENT_MAX_BYTES in all, 10 files); says which were left out. */
    function add(chosen) {
      var refused = [];
      for (var i = 0; i < chosen.length; i += 1) {
        var file = chosen[i];
        if (files.length >= maxFiles) refused.push(file.name + " (at most " + maxFiles + " files per message)");
        else if (total() + file.size > maxBytes) refused.push(file.name + " (at most " + readable(maxBytes) + " of files per message)");
        else files.push({ file: file, description: "" });
      }
      render();
      if (refused.length > 0) showError("Not added: " + refused.join("; ") + ".");
      else clearError();
      status.textContent = files.length === 1 ? "1 file to send." : files.length + " files to send.";
    }

    input.addEventListener("change", function () {
      add(input.files);
      // The chips hold the files now; the input is emptied so a file chosen again is seen again.
      input.value = "";
    });

    // Dropped anywhere on the channel (the history and the composer).
    var zone = form.closest("section") || form;
    function carriesFiles(event) {
      var types = event.dataTransfer && event.dataTransfer.types;
      return !!types && Array.prototype.indexOf.call(types, "Files") !== -1;
    }
    zone.addEventListener("dragover", function (event) {
      if (!carriesFiles(event)) return;
      event.preventDefault();
      event.dataTransfer.dropEffect = "copy";
      zone.classList.add("dropping");
    });
    zone.addEventListener("dragleave", function (event) {
      if (!zone.contains(event.relatedTarget)) zone.classList.remove("dropping");
    });
    zone.addEventListener("drop", function (event) {
      zone.classList.remove("dropping");
      if (!carriesFiles(event)) return;
      event.preventDefault();
      add(event.dataTransfer.files);
      box.focus();
    });

    // A pasted image (a screenshot from the clipboard) becomes a chip; pasted text stays text.
    box.addEventListener("paste", function (event) {
      var pasted = event.clipboardData && event.clipboardData.files;
      if (!pasted || pasted.length === 0) return;
      event.preventDefault();
      add(pasted);
    });

    function setProgress(value) {
      bar.setAttribute("aria-valuenow", String(value));
      fill.style.width = value + "%";
      percent.textContent = value + " %";
    }

    function done() {
      sending = false;
      form.removeAttribute("aria-busy");
      progress.hidden = true;
    }

    function upload() {
      sending = true;
      clearError();
      var data = new window.FormData();
      var payload = { content: box.value, attachments: [] };
      files.forEach(function (entry, index) {
        payload.attachments.push(entry.description.trim() === "" ? { id: index } : { id: index, description: entry.description.trim() });
      });
      data.append("payload_json", JSON.stringify(payload));
      files.forEach(function (entry, index) {
        data.append("files[" + index + "]", entry.file, entry.file.name);
      });
      var token = form.querySelector("input[name=_csrf]");
      var request = new window.XMLHttpRequest();
      request.open("POST", form.action);
      request.setRequestHeader("Accept", "application/json");
      if (token) request.setRequestHeader("X-CSRF-Token", token.value);
      request.upload.addEventListener("progress", function (event) {
        if (event.lengthComputable) setProgress(Math.floor((event.loaded / event.total) * 100));
      });
      request.addEventListener("load", function () {
        var answer = null;
        try {
          answer = JSON.parse(request.responseText);
        } catch {
          answer = null;
        }
        done();
        if (request.status === 201 && answer) {
          files = [];
          render();
          status.textContent = "Sent.";
          sent(answer);
          return;
        }
        // The server's own sentence; the files stay as chips, to send again (or change) by hand.
        showError(answer && (answer.error || answer.message) ? answer.error || answer.message : "The message was not sent (" + request.status + "). Reload the page and try again.");
      });
      request.addEventListener("error", function () {
        done();
        showError("The upload was cut off before the server answered. Check your connection, and the channel, before sending again.");
      });
      form.setAttribute("aria-busy", "true");
      setProgress(0);
      progress.hidden = false;
      request.send(data);
    }

    return { upload: upload };
  }
})();
