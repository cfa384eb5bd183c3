/* Triple Crown's replay renderer: each frame of a finished game drawn by the live table's own
 * view.js (static/js/replay/README.md), read-only.
 *
 * The controller the live table passes to view.js (table.js) is replaced by one built from the
 * frame alone: nothing can be clicked, no clock runs. What the live table marks for a moment is
 * read from the frames: the card just played, a seat whose time ran out, the last trick of the
 * previous hand until the new one's first lead, and the reveal of a hand that just ended
 * (drawn under the table instead of over it). The hand's tricks so far, a dialog live, are a
 * folded list beside the table. Every hand and role the frame's state names is drawn (view.js).
 */
import { gettext } from "../../table/i18n.js";
import { el } from "../../table/dom.js";
import {
  eventsOf, mount, namesOf, part, register, showLog, showsState, skeletonOf, viewerSeat,
} from "../../replay/table_kit.js";
import { describer } from "./describe.js";
import { renderAll } from "./view.js";

/** The felt of templates/games/triple_crown/_table.html, without its buttons. */
function skeleton(ctx) {
  const felt = part("div", "tc-felt", "felt");
  const info = part("div", "tc-info", "tc-info");
  info.appendChild(part("span", "tc-trumps", "tc-trumps"));
  info.appendChild(part("span", "tc-hand-no", "tc-hand-no"));
  info.appendChild(part("span", "tc-tricks-button", "tc-tricks-button"));
  felt.appendChild(info);
  felt.appendChild(part("div", "tc-seats", "tc-seats"));
  const centre = part("div", "tc-centre", "tc-centre");
  centre.appendChild(part("div", "tc-trick", "tc-trick"));
  centre.appendChild(part("div", "tc-trick-note", "tc-trick-note"));
  const declare = part("div", "tc-declare", "tc-declare");
  declare.hidden = true;
  centre.appendChild(declare);
  felt.appendChild(centre);
  const me = part("div", "tc-me", "tc-me");
  me.appendChild(part("div", "tc-me-head", "tc-me-head"));
  const hand = part("div", "tc-hand", "tc-hand");
  hand.setAttribute("aria-label", gettext("Your hand"));
  me.appendChild(hand);
  felt.appendChild(me);
  const root = skeletonOf(ctx, "tc-replay", felt, ["tc-replay-reveal", "reveal"]);
  // The hand's tricks so far (live: a dialog), folded away under the story until opened.
  const tricks = el("details", "card tc-replay-tricks");
  tricks.appendChild(el("summary", "", gettext("Tricks of this hand")));
  tricks.appendChild(part("ol", "tc-trick-list", "tricks-dialog-body"));
  root.querySelector(".replay-side").appendChild(tricks);
  return root;
}

/** The last trick_won at or before frame `index`, with the hand it ended (T26: the state
 *  forgets it the moment its hand ends; the live table keeps it from the event). */
function lastTrickBefore(ctx, index) {
  for (let i = index; i >= 0; i--) {
    const f = ctx.frames[i];
    const won = eventsOf(f, ["trick_won"]);
    if (!won.length) continue;
    const d = won[won.length - 1].data || {};
    const over = eventsOf(f, ["hand_over"]);
    const round = over.length ? over[0].data.round : (f.state ? f.state.round : null);
    return {
      round: round, no: d.trick, winner: d.winner, leader: d.cards[0][0],
      cards: d.cards.map(function (c) { return { seat: c[0], card: c[1] }; }),
    };
  }
  return null;
}

/** The read-only controller view.js draws from (the live one is table.js's TripleCrownTable). */
function controller(root, frame, ctx) {
  const you = viewerSeat(ctx);
  const names = namesOf(ctx);
  const st = frame.state;
  const timeouts = {};
  let freshCard = null;
  let revealResult = null;
  eventsOf(frame, ["card_played", "declared", "hand_over"]).forEach(function (ev) {
    const d = ev.data || {};
    if (ev.type === "card_played") freshCard = d.card;
    if (ev.type === "hand_over") revealResult = d;
    if (d.timeout) timeouts[d.seat] = true;
  });
  if (!revealResult && st.status === "finished" && st.last_hand && ctx.index === ctx.frames.length - 1) {
    revealResult = st.last_hand;  // the end: the result, as the live table shows it
  }
  const nameIn = function (seat) {
    if (seat === null || seat === undefined) return "";
    return names[seat] || "";
  };
  return {
    root: root,
    replay: true,
    you: you,
    names: names,
    lifted: null,
    pick: { trumps: null, memo: null },
    dealing: eventsOf(frame, ["round_dealt"]).length > 0,
    freshCard: freshCard,
    revealResult: revealResult,
    nameIn: nameIn,
    nameOf: function (seat) { return seat === you ? gettext("You") : nameIn(seat); },
    legal: function () { return []; },
    canPlay: function () { return false; },
    canDeclare: function () { return false; },
    timedOut: function (seat) { return !!timeouts[seat]; },
    lastTrickOf: function (s) {
      if (s.tricks.length || s.trick.length) return null;
      const lt = lastTrickBefore(ctx, ctx.index);
      return lt && lt.round === s.round - 1 ? lt : null;
    },
  };
}

function render(container, frame, ctx) {
  const root = mount(container, "triple_crown", function () { return skeleton(ctx); });
  const has = showsState(root, frame);
  root.querySelector(".tc-replay-tricks").hidden = !(frame.state && frame.state.tricks.length);
  if (has) renderAll(controller(root, frame, ctx), frame.state, "");
  // The story in the live log's words (describe.js), from the viewer's seat.
  const you = viewerSeat(ctx);
  const names = namesOf(ctx);
  showLog(root, ctx, describer({
    you: you,
    name: function (s) { return s === you ? gettext("You") : (names[s] || ""); },
  }));
}

register("triple_crown", render);
