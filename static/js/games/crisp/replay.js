/* Crisp's replay renderer: each frame of a finished game drawn by the live table's own view.js
 * (static/js/replay/README.md), read-only.
 *
 * The controller the live table passes to view.js (table.js) is replaced by one built from the
 * frame alone: nothing can be clicked, no clock runs. What the live table shows for a moment is
 * read from the frame's events: a seat's own look / Jack / Queen cards (in that seat's view,
 * the only frame that carries them), the two places a Queen swapped, a swapped-in card, a
 * timeout; the pile and the drawn card are marked when they changed since the previous frame.
 */
import { gettext } from "../../table/i18n.js";
import { el } from "../../table/dom.js";
import {
  eventsOf, mount, namesOf, part, previousFrame, register, showLog, showsState, skeletonOf, viewerSeat,
} from "../../replay/table_kit.js";
import { renderAll } from "./view.js";

/** The felt of templates/games/crisp/_table.html, without its buttons. */
function skeleton(ctx) {
  const felt = part("div", "felt", "felt");
  felt.appendChild(part("div", "seats", "seats"));
  const centre = part("div", "centre", "centre");
  const deckStack = el("div", "pile-stack");
  const deck = part("div", "deck", "deck");
  deck.setAttribute("role", "img");
  deck.appendChild(el("span", "pcard back"));
  deck.appendChild(part("span", "deck-count", "deck-count"));
  deckStack.appendChild(deck);
  deckStack.appendChild(el("span", "pile-label", gettext("Deck")));
  centre.appendChild(deckStack);
  const heldWrap = part("div", "pile-stack held-stack", "held-wrap");
  heldWrap.hidden = true;
  heldWrap.appendChild(part("div", "held", "held"));
  heldWrap.appendChild(part("span", "pile-label", "held-label"));
  centre.appendChild(heldWrap);
  const pileStack = el("div", "pile-stack");
  const pile = part("div", "pile", "pile");
  pile.setAttribute("role", "img");
  pileStack.appendChild(pile);
  pileStack.appendChild(el("span", "pile-label", gettext("Discard pile")));
  centre.appendChild(pileStack);
  felt.appendChild(centre);
  felt.appendChild(part("div", "my-seat", "my-seat"));
  return skeletonOf(ctx, "crisp-replay", felt, ["", "reveal"]);
}

function pileKey(st) { return st ? st.pile.length + ":" + (st.pile[st.pile.length - 1] || "") : ""; }
function heldKey(st) {
  return st && st.held && st.turn ? st.held.seat + ":" + (st.held.card || "?") + ":" + st.turn.no + ":" + st.turn.draw_no : "";
}

/** The read-only controller view.js draws from (the live one is table.js's CrispTable). */
function controller(root, frame, ctx) {
  const you = viewerSeat(ctx);
  const names = namesOf(ctx);
  const now = frame.at || 0;
  const peeks = {};
  const marks = {};
  const timeouts = {};
  const peek = function (seat, place, card) { if (card) peeks[seat + ":" + place] = { card: card, fresh: true }; };
  const mark = function (seat, place, from) { marks[seat + ":" + place] = { fresh: true, from: from || null }; };
  eventsOf(frame, ["look", "jack", "queen", "swap", "timeout"]).forEach(function (ev) {
    const d = ev.data || {};
    if (ev.type === "look" && d.seat === you) {
      peek(you, "left", d.left);
      peek(you, "right", d.right);
    } else if (ev.type === "jack" && d.seat === you) {
      peek(you, "centre", d.centre);
    } else if (ev.type === "queen") {
      mark(d.seat, d.place);
      mark(d.target_seat, d.target_place);
      if (d.seat === you) peek(you, d.place, d.received);
      if (d.target_seat === you) peek(you, d.target_place, d.given);
    } else if (ev.type === "swap") {
      mark(d.seat, d.place);
      if (d.seat === you) peek(you, d.place, d.card_in);
    } else if (ev.type === "timeout") {
      timeouts[d.seat] = true;
    }
  });
  const prev = previousFrame(ctx);
  const before = prev && prev.state;
  const st = frame.state;
  return {
    root: root,
    replay: true,
    you: you,
    names: names,
    mode: null,
    dealing: eventsOf(frame, ["round_dealt"]).length > 0,
    pileChanged: !!before && pileKey(before) !== pileKey(st),
    heldChanged: heldKey(st) !== "" && heldKey(st) !== heldKey(before),
    revealShownFor: null,
    now: function () { return now; },
    nameOf: function (seat) { return seat === you ? gettext("You") : names[seat]; },
    myTurn: function (s) { return !!s.turn && s.turn.seat === you && s.status === "playing" && !s.reveal; },
    canDraw: function () { return false; },
    canPile: function () { return false; },
    holding: function () { return false; },
    myWindow: function () { return null; },
    peekAt: function (seat, place) { return peeks[seat + ":" + place] || null; },
    peekUntil: function () { return 0; },
    markAt: function (seat, place) { return marks[seat + ":" + place] || null; },
    timedOut: function (seat) { return !!timeouts[seat]; },
  };
}

function render(container, frame, ctx) {
  const root = mount(container, "crisp", function () { return skeleton(ctx); });
  if (showsState(root, frame)) renderAll(controller(root, frame, ctx), frame.state, "");
  showLog(root, ctx);
}

register("crisp", render);
