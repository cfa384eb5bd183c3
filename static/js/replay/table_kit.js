/* What every game's visual replay renderer (static/js/games/<kind>/replay.js) shares: the
 * registration in window.CrispReplayRenderers, the board skeleton kept between frames, the
 * viewer's seat and the names, the previous frame, and the events column beside the table.
 *
 * A renderer draws its frame with its table's own view.js, given a controller-like object `t`
 * with `t.root` (the skeleton, where view.js looks up its elements) and `t.replay = true` (no
 * action bar, no countdowns, no title, no focus): README.md beside this file.
 */
import { el } from "../table/dom.js";

/** Register `render(container, frame, ctx)` for `kind` (player.js calls it for each frame). */
export function register(kind, render) {
  window.CrispReplayRenderers = window.CrispReplayRenderers || {};
  window.CrispReplayRenderers[kind] = { render: render };
}

/** The skeleton `build()` makes, kept in `container` from one frame to the next (a peg board
 *  moves its pegs, the log keeps its place) and made again when something else (the text
 *  fallback, "Loading…") replaced it. */
export function mount(container, key, build) {
  const first = container.firstElementChild;
  if (first && first.dataset.replayTable === key && container.children.length === 1) return first;
  container.textContent = "";
  const root = build();
  root.dataset.replayTable = key;
  container.appendChild(root);
  return root;
}

/** Show the felt and the scores only for a frame with a state (the lobby's frames have none:
 *  their story is all there is). Returns whether there is a state to draw. */
export function showsState(root, frame) {
  const has = !!frame.state;
  root.querySelector(".replay-main").hidden = !has;
  const scores = root.querySelector(".replay-side .scoreboard");
  if (scores) scores.hidden = !has;
  return has;
}

/** The seat whose view this is (null: the full view or a spectator's). */
export function viewerSeat(ctx) {
  return ctx.view === "seat" && ctx.seat !== null && ctx.seat !== undefined ? ctx.seat : null;
}

/** {seat: name} of the players. */
export function namesOf(ctx) {
  const names = {};
  (ctx.seats || []).forEach(function (s) { names[s.seat] = s.name; });
  return names;
}

/** The frame before the one shown (null at the first): what changed is drawn against it. */
export function previousFrame(ctx) {
  return ctx.index > 0 ? ctx.frames[ctx.index - 1] : null;
}

/** The current frame's events of one of `types`, in order. */
export function eventsOf(frame, types) {
  return (frame.events || []).filter(function (ev) { return types.indexOf(ev.type) >= 0; });
}

/** The side column: the scoreboard (`#scoreboard`, filled by view.js), any `extra` sections,
 *  then "What happened" (filled by showLog). */
export function sideColumn(ctx, extra) {
  const side = el("aside", "replay-side");
  const scores = el("section", "scoreboard card");
  scores.appendChild(el("h2", "", ctx.i18n.scores));
  const board = el("div");
  board.id = "scoreboard";
  scores.appendChild(board);
  side.appendChild(scores);
  (extra || []).forEach(function (x) { side.appendChild(x); });
  const events = el("section", "card replay-events");
  events.appendChild(el("h2", "", ctx.i18n.events));
  events.appendChild(el("div", "replay-events-body"));
  side.appendChild(events);
  return side;
}

const told = new WeakMap();  // frame -> {now, later}: its lines in the table's words

/** `linesOf(i, now)` for text.js's list in the table's own words: `describe` (the kind's
 *  describe.js, as the live log uses it) of frame i's `events`, or for an earlier frame its
 *  `events_later` (told as history: a look is shown once). */
function tableLines(ctx, describe) {
  return function (i, now) {
    const f = ctx.frames[i];
    let memo = told.get(f);
    if (!memo) { memo = {}; told.set(f, memo); }
    const key = now ? "now" : "later";
    if (!memo[key]) {
      memo[key] = [];
      ((now ? f.events : (f.events_later || f.events)) || []).forEach(function (ev) {
        let out = null;
        try { out = describe(ev, { history: !now }); } catch (err) { out = null; }
        if (out) memo[key].push(typeof out === "string" ? out : out.text);
      });
    }
    return memo[key];
  };
}

/** The story so far in the side column (text.js's list: `lines`, and `lines_later` for the
 *  earlier moves; or, given the kind's `describe`, the same events in the live log's words),
 *  the current move's lines in view. */
export function showLog(root, ctx, describe) {
  const body = root.querySelector(".replay-events-body");
  if (!body || !window.CrispReplayText) return;
  body.textContent = "";
  const log = window.CrispReplayText.eventLog(ctx, describe ? tableLines(ctx, describe) : undefined);
  body.appendChild(log);
  window.CrispReplayText.centre(log);
}

/** A renderer's board: the status bar, the kind's `felt` (built with `part`, mirroring its live
 *  template) and under it the round's results panel, hidden until a frame has one (`reveal`:
 *  [more classes, the id the live table's dialog has]), in `.replay-main`; then the side
 *  column (`sideColumn(ctx, extra)`). `cls`: the kind's class for the board. */
export function skeletonOf(ctx, cls, felt, reveal, extra) {
  const root = el("div", "replay-table " + cls);
  const main = el("div", "replay-main");
  main.appendChild(part("div", "status-bar", "status-bar"));
  main.appendChild(felt);
  const results = part("div", "replay-reveal" + (reveal[0] ? " " + reveal[0] : ""), reveal[1]);
  results.hidden = true;
  main.appendChild(results);
  root.appendChild(main);
  root.appendChild(sideColumn(ctx, extra));
  return root;
}

/** `el` with an id (the skeletons mirror the live table's templates, whose ids view.js uses). */
export function part(tag, cls, id, text) {
  const node = el(tag, cls, text);
  if (id) node.id = id;
  return node;
}
