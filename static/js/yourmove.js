/* "Your move, everywhere" (issue 26): on every page of a signed-in person.
 *
 * The header's link (#your-move-link, rendered with the count by the server) is kept true live
 * through the person's own socket, /ws/me/, which sends {"type": "turns", "count", "etag"}
 * when it opens and whenever their list of games awaiting them changes. While the count is
 * above zero the page title starts with "(n) " and the favicon gets a badge (drawn on a canvas
 * over the site's own icon). A tab in the background (document.hidden) that gets a new move
 * plays the table's chime for a turn (table/sound.js: one synthesiser, one sound switch -- the
 * table's ♪ button, kept in localStorage "table.sound"). On the "Your move" page itself the
 * list is re-read when it changes. Nothing here knows anything of a game but that it awaits
 * you. An ES module (base.html loads it as one), run once the page is parsed.
 */
import { isMuted, turnChime } from "./table/sound.js";

(function () {

  var link = document.getElementById("your-move-link");
  if (!link || !window.WebSocket) return;
  var countEl = link.querySelector("[data-your-move-count]");
  var countWrap = link.querySelector(".your-move-count");
  var iconLink = document.querySelector("link[rel~='icon']");
  var baseIcon = iconLink ? iconLink.href : null;
  var iconImage = null;
  var count = parseInt(link.dataset.count || "0", 10) || 0;
  var etag = null;

  function chime() {
    if (isMuted()) return;
    // Counted even where the browser allows no audio yet (no gesture in this tab): tests read it.
    link.dataset.chimes = String((parseInt(link.dataset.chimes || "0", 10) || 0) + 1);
    turnChime();
  }

  function drawIcon(n) {
    if (!iconLink || !baseIcon) return;
    if (!n) { iconLink.href = baseIcon; return; }
    var paint = function () {
      var canvas = document.createElement("canvas");
      canvas.width = canvas.height = 64;
      var ctx = canvas.getContext("2d");
      if (!ctx) return;
      ctx.drawImage(iconImage, 0, 0, 64, 64);
      ctx.beginPath();
      ctx.arc(46, 18, 17, 0, 2 * Math.PI);
      ctx.fillStyle = "#d7263d";
      ctx.fill();
      ctx.lineWidth = 3;
      ctx.strokeStyle = "#ffffff";
      ctx.stroke();
      ctx.fillStyle = "#ffffff";
      ctx.font = "bold 22px sans-serif";
      ctx.textAlign = "center";
      ctx.textBaseline = "middle";
      ctx.fillText(n > 9 ? "9+" : String(n), 46, 19);
      try { iconLink.href = canvas.toDataURL("image/png"); } catch (e) { /* tainted: keep */ }
      iconLink.dataset.badge = String(n);
    };
    if (iconImage && iconImage.complete) { paint(); return; }
    iconImage = new Image();
    iconImage.onload = paint;
    iconImage.src = baseIcon;
  }

  // The title is shared: a table's page writes its own ("● Your turn · …", maybe from a title
  // it read with our prefix on), so ours is put back, once, in front of whatever it says.
  function applyTitle() {
    var now = document.title;
    var bare = now.replace(/^\(\d+\) /, "").replace(/ · \(\d+\) /g, " · ");
    var want = count > 0 ? "(" + count + ") " + bare : bare;
    if (now !== want) document.title = want;
  }
  var titleEl = document.querySelector("title");
  if (titleEl && window.MutationObserver) {
    new MutationObserver(applyTitle).observe(titleEl, { childList: true, characterData: true, subtree: true });
  }

  function show(n) {
    count = n;
    link.dataset.count = String(n);
    link.classList.toggle("has-moves", n > 0);
    if (countEl) countEl.textContent = String(n);
    if (countWrap) countWrap.hidden = n === 0;
    applyTitle();
    drawIcon(n);
  }

  function refreshList() {
    var body = document.getElementById("your-move-body");
    if (!body || !window.fetch) return;
    fetch(window.location.href, { credentials: "same-origin" })
      .then(function (r) { return r.ok ? r.text() : null; })
      .then(function (html) {
        if (!html) return;
        var doc = new DOMParser().parseFromString(html, "text/html");
        var fresh = doc.getElementById("your-move-body");
        if (fresh) { body.innerHTML = fresh.innerHTML; tick(); }
      })
      .catch(function () { /* the next change tries again */ });
  }

  // The "time left" of the list: the server's words ("2 days, 3 hours left") until the last
  // hour, then a live m:ss countdown; "time is up" when it has run out.
  function tick() {
    var now = Date.now() / 1000;
    document.querySelectorAll(".turn-left[data-deadline]").forEach(function (el) {
      var left = Math.round(parseInt(el.dataset.deadline, 10) - now);
      if (left > 3600) return;
      el.classList.add("soon");
      if (left <= 0) { el.textContent = el.dataset.over; return; }
      var m = Math.floor(left / 60);
      var s = left % 60;
      el.textContent = m + ":" + (s < 10 ? "0" : "") + s;
    });
  }
  if (document.querySelector(".turn-left[data-deadline]") || document.getElementById("your-move-body")) {
    tick();
    window.setInterval(tick, 1000);
  }

  var delay = 1000;
  function connect() {
    var scheme = window.location.protocol === "https:" ? "wss://" : "ws://";
    var ws = new WebSocket(scheme + window.location.host + "/ws/me/");
    ws.onmessage = function (event) {
      var frame;
      try { frame = JSON.parse(event.data); } catch (e) { return; }
      if (!frame || frame.type !== "turns") return;
      delay = 1000;
      var before = count;
      var changed = etag !== null && frame.etag !== etag;
      etag = frame.etag;
      show(frame.count);
      if (changed && frame.count > before && document.hidden) chime();
      if (changed) refreshList();
      link.dataset.live = "1";
    };
    ws.onclose = function (event) {
      link.dataset.live = "0";
      if (event.code === 4401) return;  // signed out: nothing to follow
      window.setTimeout(connect, delay);
      delay = Math.min(delay * 2, 30000);
    };
  }
  show(count);
  connect();
})();
