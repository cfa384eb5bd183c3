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

/* The create form shows the settings of the game picked (one fieldset per kind; the others are
 * disabled so they are not submitted). Without JavaScript only the default kind's show. */
(function () {
  "use strict";
  var picker = document.querySelector("[data-kind-picker]");
  if (!picker) return;
  function sync() {
    document.querySelectorAll("fieldset.kind-settings").forEach(function (fs) {
      var on = fs.getAttribute("data-kind") === picker.value;
      fs.hidden = !on;
      fs.disabled = !on;
    });
  }
  picker.addEventListener("change", sync);
  sync();
})();
