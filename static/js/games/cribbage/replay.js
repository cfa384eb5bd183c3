/* Cribbage's replay renderer: each frame of a finished game drawn by the live table's own
 * view.js and peg board (static/js/replay/README.md), read-only.
 *
 * The controller the live table passes to view.js (table.js) is replaced by one built from the
 * frame alone: nothing can be clicked, no clock runs. What the live table marks for a moment is
 * read from the frame's events: the card just played, the starter just cut, the count that
 * just ended (31 or a go), a seat whose time ran out, and the show of a hand that just ended
 * (drawn under the table instead of over it). The peg board is kept from frame to frame, so a
 * peg that moved shows its "+n" as it does live.
 */
import { gettext } from "../../table/i18n.js";
import { el } from "../../table/dom.js";
import {
  eventsOf, mount, namesOf, part, previousFrame, register, showLog, showsState, skeletonOf, viewerSeat,
} from "../../replay/table_kit.js";
import { buildBoard } from "./board.js";
import { describer } from "./describe.js";
import { renderAll } from "./view.js";

const SVG = "http://www.w3.org/2000/svg";

/** The felt of templates/games/cribbage/_table.html, without its buttons. */
function skeleton(ctx) {
  const felt = part("div", "crib-felt", "felt");
  felt.appendChild(part("section", "crib-seat crib-top", "seat-top"));
  const wrap = el("div", "crib-board-wrap");
  const svg = document.createElementNS(SVG, "svg");
  svg.setAttribute("class", "crib-board");
  svg.id = "board";
  wrap.appendChild(svg);
  felt.appendChild(wrap);
  const centre = part("div", "crib-centre", "centre");
  const starter = el("div", "crib-pile");
  starter.appendChild(part("div", "crib-stack", "starter"));
  starter.appendChild(el("span", "pile-label", gettext("Starter")));
  centre.appendChild(starter);
  centre.appendChild(part("div", "crib-count", "count"));
  const crib = el("div", "crib-pile");
  crib.appendChild(part("div", "crib-stack", "crib"));
  crib.appendChild(part("span", "pile-label", "crib-label", gettext("Crib")));
  centre.appendChild(crib);
  felt.appendChild(centre);
  felt.appendChild(part("section", "crib-seat crib-bottom", "seat-bottom"));
  // The last hand's show, as the live table's side panel has it.
  const last = part("section", "card crib-last", "last-hand-card");
  last.hidden = true;
  last.appendChild(part("h2", "", "last-title"));
  last.appendChild(part("div", "", "last-hand"));
  return skeletonOf(ctx, "crib-replay", felt, ["", "show-overlay"], [last]);
}

/** The seat that played `card` this hand (the state lists each seat's played cards). */
function seatOf(st, card) {
  for (let s = 0; s < 2; s++) if ((st.played[s] || []).indexOf(card) >= 0) return s;
  return null;
}

/** The read-only controller view.js draws from (the live one is table.js's CribbageTable). */
function controller(root, frame, ctx) {
  const you = viewerSeat(ctx);
  const names = namesOf(ctx);
  const st = frame.state;
  const prev = previousFrame(ctx);
  const before = prev && prev.state;
  const timeouts = {};
  let justPlayed = null;
  let lastPlay = null;
  let lastCount = null;
  let overlayHand = null;
  eventsOf(frame, ["play", "laid_away", "count_over", "hand_over"]).forEach(function (ev) {
    const d = ev.data || {};
    if (ev.type === "play") {
      justPlayed = d.card;
      lastPlay = { round: d.round, sequence: d.sequence || [], count: d.count };
    } else if (ev.type === "count_over" && d.next_lead !== null) {
      // The count that just ended stays on show, as live: its cards from this move's play,
      // else (a go) from the count the previous frame showed.
      const seq = lastPlay && lastPlay.round === d.round ? lastPlay.sequence
        : (before && before.round === d.round ? before.sequence.map(function (p) { return p.card; }) : []);
      lastCount = { round: d.round, count: d.count, seq: seq.map(function (c) { return { card: c, seat: seatOf(st, c) }; }) };
    } else if (ev.type === "hand_over" && (d.shows || []).length) {
      overlayHand = d;
    }
    if ((ev.type === "play" || ev.type === "laid_away") && d.timeout) timeouts[d.seat] = true;
  });
  if (!overlayHand && st.status === "finished" && st.last_hand && ctx.index === ctx.frames.length - 1) {
    overlayHand = st.last_hand;  // the end: the result, as the live table shows it
  }
  if (!root.board) root.board = buildBoard(root.querySelector("#board"), null);
  return {
    root: root,
    replay: true,
    you: you,
    names: names,
    board: root.board,
    selected: [],
    sending: false,
    dealing: eventsOf(frame, ["round_dealt"]).length > 0,
    justPlayed: justPlayed,
    starterNew: eventsOf(frame, ["starter_cut"]).length > 0,
    lastCount: lastCount,
    overlayHand: overlayHand,
    overlayKey: overlayHand ? "replay:" + frame.version : "",
    nameOf: function (seat) { return seat === you ? gettext("you") : names[seat]; },
    canLayAway: function () { return false; },
    canPlay: function () { return false; },
    timedOut: function (seat) { return !!timeouts[seat]; },
  };
}

function render(container, frame, ctx) {
  const root = mount(container, "cribbage", function () { return skeleton(ctx); });
  if (showsState(root, frame)) renderAll(controller(root, frame, ctx), frame.state, "");
  // The story in the live log's words (describe.js), from the viewer's seat.
  const you = viewerSeat(ctx);
  const names = namesOf(ctx);
  showLog(root, ctx, describer({
    you: you,
    name: function (s) { return s === you ? gettext("you") : names[s]; },
    seatName: function (s) { return names[s]; },
  }));
}

register("cribbage", render);
