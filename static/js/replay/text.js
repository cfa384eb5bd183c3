/* The textual replay renderer: the game told as a list of events in words, with the scores.
 *
 * Used for every kind that has no visual renderer in window.CrispReplayRenderers (see
 * README.md beside this file), and always available as an accessible event list. It shows only
 * what the frame carries: the API has already redacted it for the chosen view.
 */
(function () {
  "use strict";

  function el(tag, cls, text) {
    var node = document.createElement(tag);
    if (cls) node.className = cls;
    if (text !== undefined) node.textContent = text;
    return node;
  }

  function fill(template, params) {
    return template.replace(/%\((\w+)\)s/g, function (_, k) { return String(params[k]); });
  }

  /** Render frame `index` of `ctx.frames` into `container`. */
  function render(container, frame, ctx) {
    var t = ctx.i18n;
    container.textContent = "";
    var status = el("p", "replay-text-status",
      (t.status[frame.status] || frame.status) + " · " +
      new Date(frame.at || 0).toLocaleTimeString());
    container.appendChild(status);

    var scores = frame.state && Array.isArray(frame.state.scores) ? frame.state.scores : null;
    if (scores) {
      container.appendChild(el("h3", null, t.scores));
      var list = el("ul", "replay-text-scores");
      var winners = (frame.state && frame.state.winners) || [];
      scores.forEach(function (score, seat) {
        var name = ctx.seats[seat] ? ctx.seats[seat].name : "P" + seat;
        var item = el("li", winners.indexOf(seat) >= 0 ? "winner" : null, name + ": " + score);
        if (winners.indexOf(seat) >= 0) item.setAttribute("title", t.winner);
        list.appendChild(item);
      });
      container.appendChild(list);
    }

    container.appendChild(el("h3", null, t.events));
    var log = eventLog(ctx);
    container.appendChild(log);
    centre(log);
  }

  /** The lines of frame `i` of `ctx.frames`: as it happened (`now`), else as the viewer's log
   *  showed them once the game had moved on (a look is shown once). */
  function serverLines(ctx, i, now) {
    var f = ctx.frames[i];
    return (now ? f.lines : (f.lines_later || f.lines)) || [];
  }

  /** The game's moves as an <ol class="replay-text-log">: every frame's lines, each a button
   *  that goes to its move (`ctx.go(i)`, given by player.js) — the earlier moves as the viewer's
   *  log showed them afterwards (`lines_later`: a look is shown once), the current move's
   *  (`lines`) highlighted, the moves still to come after them, greyed. Visual renderers put the
   *  same list beside their table; `linesOf(i, now)` (optional) gives a frame's lines in the
   *  table's own words instead of the server's. */
  function eventLog(ctx, linesOf) {
    linesOf = linesOf || function (i, now) { return serverLines(ctx, i, now); };
    var t = ctx.i18n;
    var log = el("ol", "replay-text-log");
    var shown = 0;
    for (var i = 0; i < ctx.frames.length; i++) {
      var lines = linesOf(i, i === ctx.index);
      if (i === ctx.index && !lines.length) lines = [t.nothing];
      for (var j = 0; j < lines.length; j++) {
        var li = el("li", i === ctx.index ? "now" : (i > ctx.index ? "later" : null));
        li.value = ++shown;
        var go = el("button", "replay-move", lines[j]);
        go.type = "button";
        go.dataset.frame = String(i);
        if (i === ctx.index) go.setAttribute("aria-current", "step");
        if (ctx.go) go.addEventListener("click", ctx.go.bind(null, i));
        li.appendChild(go);
        log.appendChild(li);
      }
    }
    return log;
  }

  /** Scroll `log` (once it is in the page) so the current move's lines are in its middle. */
  function centre(log) {
    var last = log.querySelector("li.now:last-of-type") || log.querySelector("li.now");
    if (last && last.scrollIntoView) {
      log.scrollTop = last.offsetTop - log.offsetTop - log.clientHeight / 2;
    }
  }

  window.CrispReplayText = { render: render, fill: fill, eventLog: eventLog, centre: centre };
})();
