/* Crisp online — the games lobby keeps its lists fresh without a reload.
 *
 * Every few seconds (only while the tab is visible) it fetches this same page and swaps in the
 * "Open games" and "My games" lists and the count of people online, unless the keyboard focus is
 * inside one of them.
 */
(function () {
  "use strict";
  var regions = document.querySelectorAll("[data-live-region]");
  if (!regions.length || !window.fetch || !window.DOMParser) return;

  function refresh() {
    if (document.hidden) return;
    fetch(location.href, { credentials: "same-origin", headers: { "X-Requested-With": "fetch" } })
      .then(function (r) { return r.ok && !r.redirected ? r.text() : null; })
      .then(function (html) {
        if (!html) return;
        var doc = new DOMParser().parseFromString(html, "text/html");
        regions.forEach(function (region) {
          var fresh = doc.getElementById(region.id);
          if (!fresh || region.contains(document.activeElement)) return;
          if (fresh.innerHTML !== region.innerHTML) region.innerHTML = fresh.innerHTML;
        });
      })
      .catch(function () { /* offline: try again next time */ });
  }
  setInterval(refresh, 8000);
  document.addEventListener("visibilitychange", function () { if (!document.hidden) refresh(); });
})();

/* The create and vs-computer forms show the settings of the game picked (one fieldset per kind;
 * the others are disabled so they are not submitted). Without JavaScript only the default kind's
 * show. Within a kind, the pace menu (issue 26) shows the time-per-move menu of the chosen pace
 * only: `[data-pace-only]` fields of the other pace are hidden and disabled. */
(function () {
  "use strict";
  function syncPace(fs) {
    var picker = fs.querySelector("[data-pace-picker]");
    var pace = picker ? picker.value : "live";
    fs.querySelectorAll("[data-pace-only]").forEach(function (field) {
      var on = !fs.disabled && field.getAttribute("data-pace-only") === pace;
      field.hidden = !on;
      field.querySelectorAll("select, input").forEach(function (input) { input.disabled = !on; });
    });
  }
  document.querySelectorAll("[data-kind-picker]").forEach(function (picker) {
    var form = picker.form;
    function sync() {
      form.querySelectorAll("fieldset.kind-settings").forEach(function (fs) {
        var on = fs.getAttribute("data-kind") === picker.value;
        fs.hidden = !on;
        fs.disabled = !on;
        syncPace(fs);
      });
    }
    picker.addEventListener("change", sync);
    form.querySelectorAll("[data-pace-picker]").forEach(function (p) {
      p.addEventListener("change", sync);
    });
    sync();
  });
})();
