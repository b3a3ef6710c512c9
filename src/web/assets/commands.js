"use strict";
/**
 * The composer's `/` list of app commands (issue #40 §2), after the WAI-ARIA combobox pattern
 * (https://www.w3.org/WAI/ARIA/apg/patterns/combobox/): the textarea is the combobox, the list a
 * listbox it controls, and the highlighted command its aria-activedescendant, so focus stays in
 * the textarea and a screen reader reads the command as it is reached.
 *
 * Typing `/` at the start lists the commands reachable here (the page's `data-commands` JSON,
 * interactions.service.ts commandsForComposer); typing on filters them by name. Up/Down move,
 * Enter or Tab choose, Escape closes; choosing writes `/name ` and shows the command's options
 * below the composer as hints. Sending stays the form's: without this script the typed
 * `/name option:value` is run the same way.
 */
(function () {
  var box = document.querySelector("textarea[data-commands]");
  if (!box) return;
  var commands;
  try {
    commands = JSON.parse(box.getAttribute("data-commands"));
  } catch {
    return;
  }
  if (!Array.isArray(commands) || commands.length === 0) return;

  var list = document.createElement("ul");
  list.id = "command-list";
  list.className = "command-list";
  list.setAttribute("role", "listbox");
  list.setAttribute("aria-label", "Commands");
  list.hidden = true;
  box.parentNode.insertBefore(list, box);

  var options = document.createElement("div");
  options.id = "command-options";
  options.className = "command-options";
  options.setAttribute("aria-live", "polite");
  options.hidden = true;
  box.parentNode.insertBefore(options, box.nextSibling);

  box.setAttribute("role", "combobox");
  box.setAttribute("aria-autocomplete", "list");
  box.setAttribute("aria-haspopup", "listbox");
  box.setAttribute("aria-controls", "command-list");
  box.setAttribute("aria-expanded", "false");

  var shown = [];
  var active = -1;
  // Escape closes the list until what is typed changes.
  var dismissed = null;

  /** The name being typed: the text is `/` and a name so far, nothing after it; else null. */
  function typedName() {
    var match = /^\/([^\s]*)$/.exec(box.value);
    return match ? match[1].toLowerCase() : null;
  }

  function text(tag, className, content) {
    var element = document.createElement(tag);
    if (className) element.className = className;
    element.textContent = content;
    return element;
  }

  function isOpen() {
    return !list.hidden;
  }

  function close() {
    list.hidden = true;
    box.setAttribute("aria-expanded", "false");
    box.removeAttribute("aria-activedescendant");
    active = -1;
  }

  function highlight(index) {
    active = index;
    for (var i = 0; i < list.children.length; i += 1) {
      list.children[i].setAttribute("aria-selected", i === index ? "true" : "false");
    }
    if (index < 0) {
      box.removeAttribute("aria-activedescendant");
      return;
    }
    var item = list.children[index];
    box.setAttribute("aria-activedescendant", item.id);
    if (item.scrollIntoView) item.scrollIntoView({ block: "nearest" });
  }

  function open(name) {
    shown = commands.filter(function (c) {
      return c.name.indexOf(name) === 0;
    });
    list.textContent = "";
    if (shown.length === 0) return close();
    shown.forEach(function (command, i) {
      var item = document.createElement("li");
      item.id = "command-" + i;
      item.setAttribute("role", "option");
      item.appendChild(text("span", "command-name", "/" + command.name));
      item.appendChild(text("span", "command-description", command.description));
      item.appendChild(text("span", "command-app", command.app));
      item.addEventListener("mousedown", function (event) {
        // Keeps the focus (and the caret) in the textarea.
        event.preventDefault();
      });
      item.addEventListener("click", function () {
        choose(i);
      });
      list.appendChild(item);
    });
    list.hidden = false;
    box.setAttribute("aria-expanded", "true");
    highlight(0);
  }

  /** The options of the command written at the start of the text, as hints below the composer. */
  function showOptions() {
    var match = /^\/([^\s]+)\s/.exec(box.value);
    var command = match &&
      commands.filter(function (c) {
        return c.name === match[1].toLowerCase();
      })[0];
    options.textContent = "";
    if (!command) {
      options.hidden = true;
      return;
    }
    var title = text("p", "hint", "/" + command.name + " · " + command.app + (command.options.length ? ": write each option as name:value, a value with spaces in double quotes." : ": no options."));
    options.appendChild(title);
    if (command.options.length) {
      var ul = document.createElement("ul");
      ul.className = "hint";
      command.options.forEach(function (option) {
        var li = document.createElement("li");
        li.appendChild(text("code", "", option.name + ":"));
        var what = " " + option.kind + (option.choices ? " (one of " + option.choices.join(", ") + ")" : "") + (option.required ? ", required" : ", optional");
        li.appendChild(document.createTextNode(what + (option.description ? " — " + option.description : "")));
        ul.appendChild(li);
      });
      options.appendChild(ul);
    }
    options.hidden = false;
  }

  function choose(index) {
    var command = shown[index];
    if (!command) return;
    box.value = "/" + command.name + " ";
    close();
    box.focus();
    box.setSelectionRange(box.value.length, box.value.length);
    showOptions();
  }

  function update() {
    var name = typedName();
    if (name === null || box.value === dismissed) close();
    else open(name);
    showOptions();
  }

  box.addEventListener("input", function () {
    if (box.value !== dismissed) dismissed = null;
    update();
  });
  box.addEventListener("blur", close);

  // Capture: at the textarea this runs before composer.js's Enter-sends listener, which must not
  // see the Enter that chooses a command.
  box.addEventListener(
    "keydown",
    function (event) {
      if (event.altKey || event.ctrlKey || event.metaKey || event.isComposing) return;
      if (!isOpen()) {
        if (event.key === "ArrowDown" && typedName() !== null) {
          dismissed = null;
          open(typedName());
          event.preventDefault();
        }
        return;
      }
      if (event.key === "ArrowDown" || event.key === "ArrowUp") {
        var step = event.key === "ArrowDown" ? 1 : -1;
        highlight((active + step + shown.length) % shown.length);
      } else if ((event.key === "Enter" && !event.shiftKey) || (event.key === "Tab" && !event.shiftKey)) {
        choose(active < 0 ? 0 : active);
      } else if (event.key === "Escape") {
        dismissed = box.value;
        close();
      } else {
        return;
      }
      event.preventDefault();
      event.stopImmediatePropagation();
    },
    true,
  );

  update();
})();
