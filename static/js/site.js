/* Crisp online — small behaviours of every page, without inline handlers.
 *
 * The Content-Security-Policy allows no inline script (no onchange="…" attributes), so the
 * markup only declares what it wants and this file wires it up:
 *   form.lang select           — the header's language menu submits on change;
 *   form[data-confirm]         — asks before submitting (e.g. revoking a token);
 *   [data-copy-target="id"]    — copies that input's value, then shows its data-done text;
 *   [data-select-on-focus]     — selects its text on focus (a token's key).
 * Without JavaScript each still works: the language menu has a submit button in <noscript>.
 */
(function () {
  "use strict";

  document.querySelectorAll("form.lang select").forEach(function (select) {
    select.addEventListener("change", function () { select.form.submit(); });
  });

  document.querySelectorAll("form[data-confirm]").forEach(function (form) {
    form.addEventListener("submit", function (event) {
      if (!window.confirm(form.dataset.confirm)) event.preventDefault();
    });
  });

  document.querySelectorAll("[data-copy-target]").forEach(function (button) {
    button.addEventListener("click", function () {
      var source = document.getElementById(button.dataset.copyTarget);
      if (!source || !navigator.clipboard) return;
      navigator.clipboard.writeText(source.value).then(function () {
        if (button.dataset.done) button.textContent = button.dataset.done;
      });
    });
  });

  document.querySelectorAll("[data-select-on-focus]").forEach(function (input) {
    input.addEventListener("focus", function () { input.select(); });
  });
})();
