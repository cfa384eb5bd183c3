/* The replay player: fetches a finished game's frames from the API and steps through them.
 *
 * It opens at the first deal (the lobby's frames, people joining, are folded into it), or at the
 * moment a link names. Controls: the move list (every move's lines, each a button), first /
 * previous / next / last, a slider, play at a chosen speed (the game's own
 * pace between moves, sped up, each pause between 0.1 s and 3 s), the view (full, a seat's, a
 * spectator's) and a shareable link (?at=<version>&view=...). Keyboard: ← → Home End, space.
 * Each frame goes to the renderer registered for the game's kind,
 * window.CrispReplayRenderers[kind], else to the textual renderer (text.js). README.md beside
 * this file is the renderer contract.
 */
(function () {
  "use strict";

  var boot = JSON.parse(document.getElementById("replay-boot").textContent);
  var t = boot.i18n;
  var $ = function (id) { return document.getElementById(id); };
  var board = $("replay-board");
  var slider = $("replay-slider");
  var position = $("replay-position");
  var viewSelect = $("replay-view");
  var speedSelect = $("replay-speed");
  var playButton = $("replay-play");
  var link = $("replay-link");

  var frames = [];
  var index = 0;
  var timer = null;
  var loadToken = 0;

  function renderer() {
    var registry = window.CrispReplayRenderers || {};
    return registry[boot.kind] || window.CrispReplayText;
  }

  function viewParams() {
    var v = viewSelect.value;
    if (v.indexOf("seat:") === 0) return { view: "seat", seat: v.slice(5) };
    return { view: v };
  }

  function query(params) {
    return Object.keys(params).map(function (k) {
      return encodeURIComponent(k) + "=" + encodeURIComponent(params[k]);
    }).join("&");
  }

  function shareUrl() {
    var frame = frames[index];
    var params = viewParams();
    if (frame) params.at = frame.version;
    return location.pathname + "?" + query(params);
  }

  function show(i) {
    if (!frames.length) return;
    index = Math.max(0, Math.min(frames.length - 1, i));
    var frame = frames[index];
    slider.value = String(index + 1);
    position.textContent = window.CrispReplayText.fill(t.version, { n: index + 1, total: frames.length });
    link.href = shareUrl();
    history.replaceState(null, "", link.href);
    var ctx = {
      kind: boot.kind, view: viewParams().view, seat: viewParams().seat === undefined ? null : Number(viewParams().seat),
      seats: boot.seats, frames: frames, index: index, i18n: t,
      go: function (i) { stop(); show(i); },  // the move list's buttons
    };
    try {
      renderer().render(board, frame, ctx);
    } catch (err) {
      // A broken visual renderer must not hide the game: fall back to the words.
      window.CrispReplayText.render(board, frame, ctx);
      if (window.console) console.error(err);
    }
  }

  function stop() {
    if (timer !== null) clearTimeout(timer);
    timer = null;
    playButton.textContent = t.play;
    playButton.setAttribute("aria-pressed", "false");
  }

  function tick() {
    if (index >= frames.length - 1) { stop(); return; }
    var here = frames[index].at, next = frames[index + 1].at;
    var gap = (here && next) ? (next - here) : 1000;
    var wait = Math.max(100, Math.min(3000, gap / Number(speedSelect.value)));
    timer = setTimeout(function () { show(index + 1); tick(); }, wait);
  }

  function play() {
    if (timer !== null) { stop(); return; }
    if (index >= frames.length - 1) show(0);
    playButton.textContent = t.pause;
    playButton.setAttribute("aria-pressed", "true");
    tick();
  }

  function fetchAll(params, start, acc, token) {
    var p = Object.assign({}, params, { start: start, limit: 1000 });
    return fetch(boot.api + "?" + query(p), { credentials: "same-origin", headers: { Accept: "application/json" } })
      .then(function (r) {
        return r.json().then(function (body) {
          if (!r.ok) throw new Error(body.detail || t.failed);
          return body;
        });
      })
      .then(function (body) {
        if (token !== loadToken) return null;
        acc = acc.concat(body.frames);
        var last = acc.length ? acc[acc.length - 1].version : 0;
        if (last < body.version && body.frames.length) return fetchAll(params, last + 1, acc, token);
        return acc;
      });
  }

  /** The frames to step through: the lobby's (people joining, before the first deal) have no
   *  table to show, so they are folded into the first deal's frame, their lines first. A game
   *  abandoned in its lobby keeps them all. */
  function fromFirstDeal(all) {
    var first = all.findIndex(function (f) { return !!f.state; });
    if (first <= 0) return all;
    var lobby = all.slice(0, first);
    var deal = Object.assign({}, all[first]);
    // Each list as a frame has it; a frame without a "_later" list tells its moves the same way.
    function list(f, key) { return f[key] || f[key.replace("_later", "")] || []; }
    ["events", "events_later", "lines", "lines_later"].forEach(function (key) {
      var before = [];
      lobby.forEach(function (f) { before = before.concat(list(f, key)); });
      deal[key] = before.concat(list(all[first], key));
    });
    return [deal].concat(all.slice(first + 1));
  }

  function load(atVersion) {
    stop();
    var token = ++loadToken;
    board.textContent = t.loading;
    fetchAll(viewParams(), 1, [], token).then(function (all) {
      if (all === null) return;
      frames = fromFirstDeal(all);
      slider.max = String(frames.length);
      // A link's moment (a lobby moment is the first deal's); else the first deal.
      var at = frames.findIndex(function (f) { return f.version >= atVersion; });
      show(atVersion !== undefined && at >= 0 ? at : 0);
    }).catch(function (err) {
      board.textContent = "";
      var p = document.createElement("p");
      p.className = "replay-error";
      p.textContent = t.failed + " " + err.message;
      board.appendChild(p);
    });
  }

  // Controls ---------------------------------------------------------------------------------
  $("replay-first").addEventListener("click", function () { stop(); show(0); });
  $("replay-prev").addEventListener("click", function () { stop(); show(index - 1); });
  $("replay-next").addEventListener("click", function () { stop(); show(index + 1); });
  $("replay-last").addEventListener("click", function () { stop(); show(frames.length - 1); });
  playButton.addEventListener("click", play);
  slider.addEventListener("input", function () { stop(); show(Number(slider.value) - 1); });
  /** Under another player's point of view the table says "you" to that seat: the note that
   *  names them (the template has one per seat that is not the reader's). */
  function showPovNote() {
    var p = viewParams();
    Array.prototype.forEach.call(document.querySelectorAll("[data-pov-note]"), function (n) {
      n.hidden = !(p.view === "seat" && n.getAttribute("data-pov-note") === p.seat);
    });
  }

  viewSelect.addEventListener("change", function () {
    showPovNote();
    load(frames[index] ? frames[index].version : undefined);
  });
  document.addEventListener("keydown", function (e) {
    if (e.target && /INPUT|SELECT|TEXTAREA/.test(e.target.tagName) && e.target !== slider) return;
    if (e.key === "ArrowLeft") { stop(); show(index - 1); e.preventDefault(); }
    else if (e.key === "ArrowRight") { stop(); show(index + 1); e.preventDefault(); }
    else if (e.key === "Home") { stop(); show(0); e.preventDefault(); }
    else if (e.key === "End") { stop(); show(frames.length - 1); e.preventDefault(); }
    else if (e.key === " " && e.target === document.body) { play(); e.preventDefault(); }
  });

  // Start where the link says: ?view=full|seat|spectator&seat=N&at=V; by default a player
  // sees the game from their own seat, anyone else in full.
  var url = new URLSearchParams(location.search);
  var wanted = url.get("view") === "seat" ? "seat:" + url.get("seat") : url.get("view");
  if (!wanted && boot.you !== null) wanted = "seat:" + boot.you;
  if (wanted && Array.prototype.some.call(viewSelect.options, function (o) { return o.value === wanted; })) {
    viewSelect.value = wanted;
  }
  showPovNote();
  var at = url.get("at");
  load(at && /^\d+$/.test(at) ? Number(at) : undefined);
})();
