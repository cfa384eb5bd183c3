/* Crisp's table, drawn from the controller's state (table.js). Rendering only: every click
 * calls back into the controller (`t.act`, `t.setMode`, `t.pickSlot`).
 *
 * The same drawing serves the replay page (replay.js): `t.root` is then the replay's board (the
 * elements are looked up inside it, never in the whole page) and `t.replay` is true, which
 * leaves out what only a live table has: the action bar, countdowns, the page title, focus.
 *
 * Layout (static/css/crisp.css): opponents in #seats (round an oval on desktops, a grid on
 * phones), the deck / drawn card / pile in the middle, the viewer's own seat in #my-seat at the
 * bottom, the action buttons under the felt. Brief animations mark what just happened; they
 * only ever add a class to an element that already shows the new state, so turning them off
 * (prefers-reduced-motion) hides nothing.
 */
import { button, el } from "../../table/dom.js";
import { fmt, gettext, ngettext } from "../../table/i18n.js";
import {
  actionBox, dialogActions, dialogPanel, drawTable, part, scoresTable, scoreTable, statusBar, winnersLine, youOr,
} from "../../table/parts.js";
import { botBadge } from "../../table/sitin.js";
import { cardBack, cardFace, cardText, isCourt, PLACE_WORD, PLACES } from "./cards.js";

/** Opponents round an oval, clockwise from the viewer (who sits at the bottom, off the oval).
 * `x` and `y` are percentages of the seats' box, 0 to 100: crisp.css moves a seat back by the
 * same share of its own size, so a seat at 0 % touches the felt's left edge and one at 100 % its
 * right edge, never beyond, whatever the seat's width. */
function seatPositions(n, you) {
  const out = [];
  const base = you === null ? 0 : you;
  for (let i = 0; i < n; i++) {
    const k = (i - base + n) % n;
    const a = Math.PI / 2 + (2 * Math.PI * k) / n;
    const round = function (v) { return Math.round(v * 10) / 10; };
    out[i] = { x: round(50 + 50 * Math.cos(a)), y: round(50 + 50 * Math.sin(a)), k: k };
  }
  return out;
}

function chip(cls, text, title) {
  const c = el("span", "seat-chip " + cls, text);
  if (title) { c.title = title; c.setAttribute("aria-label", title); }
  return c;
}

function renderSeat(t, st, s, pos) {
  const mine = s === t.you;
  const revealed = !!st.reveal;
  const active = st.turn && st.turn.seat === s && !revealed && st.status === "playing";
  const seat = el("section", "seat" + (mine ? " mine" : "") + (active ? " active" : "") +
    (st.caller === s ? " caller" : "") + (t.timedOut(s) ? " timed-out" : ""));
  seat.dataset.seat = String(s);
  if (!mine) {
    seat.style.setProperty("--x", pos.x + "%");
    seat.style.setProperty("--y", pos.y + "%");
    seat.style.order = String(pos.k);
  }
  seat.setAttribute("aria-label", mine ? gettext("Your seat") : fmt(gettext("%(name)s's seat"), { name: t.names[s] || "" }));
  const head = el("div", "seat-head");
  const dot = el("span", "presence");
  dot.dataset.presenceSeat = String(s);
  head.appendChild(dot);
  const name = el("span", "seat-name", youOr(t, s));
  name.title = t.names[s] || "";
  head.appendChild(name);
  if (st.dealer === s) {
    const dm = el("span", "dealer-chip", "D");
    dm.title = gettext("Dealer");
    dm.setAttribute("aria-label", gettext("Dealer"));
    head.appendChild(dm);
  }
  head.appendChild(el("span", "seat-score", String(st.scores[s])));
  seat.appendChild(head);

  const badges = el("div", "seat-badges");
  badges.appendChild(botBadge(s));
  if (st.caller === s) badges.appendChild(chip("crisp-chip", gettext("CRISP"), mine ? gettext("You called crisp") : gettext("called crisp")));
  // A King's extra draws still to play, the one under way included (the engine's
  // extra_draws_left counts those after it).
  const kingDraws = active ? st.turn.extra_draws_left + (st.turn.draw_no > 1 ? 1 : 0) : 0;
  if (kingDraws > 0) {
    badges.appendChild(chip("king-chip", fmt(gettext("K +%(n)s"), { n: kingDraws }),
      fmt(ngettext("%(n)s King's draw to play", "%(n)s King's draws to play", kingDraws), { n: kingDraws })));
  }
  if (t.timedOut(s)) badges.appendChild(chip("timeout-chip", gettext("time up"), gettext("ran out of time")));
  // In the name's row, before the dealer's mark and the score: a seat's badges take no height
  // of their own (eight seats share a phone's felt) and never sit on its edge.
  if (badges.children.length) head.insertBefore(badges, name.nextSibling);

  const pickOwn = t.mode && t.mode.kind === "queen" && !t.mode.place;
  const pickOther = t.mode && t.mode.kind === "queen" && t.mode.place;
  const swapping = t.holding(st) && !t.mode && st.held.card &&
    (st.held.source === "pile" || !isCourt(st.held.card));
  const row = el("div", "hand");
  for (let i = 0; i < 3; i++) {
    const place = PLACES[i];
    const card = st.hands[s][i];
    const pk = t.peekAt(s, place);
    const mark = t.markAt(s, place);
    const clickable = (mine && (swapping || pickOwn)) || (!mine && pickOther);
    let slot;
    if (clickable) {
      slot = el("button", "slot pickable");
      slot.type = "button";
      slot.dataset.key = "slot-" + s + "-" + place;
      let label;
      if (swapping) label = fmt(gettext("Swap into your %(place)s place"), { place: PLACE_WORD[place] });
      else if (pickOwn) label = fmt(gettext("Give your %(place)s card"), { place: PLACE_WORD[place] });
      else label = fmt(gettext("Take %(name)s's %(place)s card"), { name: t.names[s], place: PLACE_WORD[place] });
      slot.setAttribute("aria-label", label);
      slot.title = label;
      slot.addEventListener("click", function () { t.pickSlot(s, place); });
    } else {
      slot = el("div", "slot");
      slot.setAttribute("aria-label", PLACE_WORD[place]);
    }
    slot.dataset.place = place;
    if (t.mode && t.mode.place === place && mine) slot.classList.add("chosen");
    if (mark) {
      slot.classList.add("moved");
      if (mark.fresh) slot.classList.add("moved-new");
      mark.fresh = false;
    }
    if (card) {
      slot.appendChild(cardFace(card, t.dealing ? "dealt" : ""));
    } else if (pk) {
      // The class that animates the flip is set only the first time the look is drawn:
      // re-renders keep the card still (no flicker while the player memorises it).
      slot.appendChild(cardFace(pk.card, "peek" + (pk.fresh ? " peek-new" : "")));
      pk.fresh = false;
      slot.classList.add("peeking");
    } else {
      slot.appendChild(cardBack(t.dealing ? "dealt" : ""));
    }
    slot.appendChild(el("span", "place-label", PLACE_WORD[place]));
    if (mark && mark.from) slot.appendChild(el("span", "moved-from", mark.from));
    row.appendChild(slot);
  }
  seat.appendChild(row);
  if (mine && !revealed && st.status === "playing") {
    const until = t.peekUntil();
    if (until) {
      const pt = el("div", "peek-timer", gettext("Memorise!"));
      // R28: no memorise countdown in a turn-based game (nothing waits on it).
      if (!(t.turnBased && t.turnBased(st))) {
        const pc = el("span", "countdown");
        pc.dataset.until = String(Math.round(until));
        pt.appendChild(pc);
      }
      seat.appendChild(pt);
    }
  }
  if (revealed) {
    const total = st.reveal.totals[s];
    const rs = st.reveal.round_scores[s];
    const sum = el("div", "seat-result", fmt(gettext("%(total)s points"), { total: total }));
    if (st.caller === s) sum.appendChild(el("span", "bonus " + (rs < total ? "good" : "bad"), rs < total ? " −5" : " +5"));
    seat.appendChild(sum);
  }
  return seat;
}

export function renderSeats(t, st) {
  const box = part(t, "seats");
  const mineBox = part(t, "my-seat");
  box.textContent = "";
  mineBox.textContent = "";
  const felt = part(t, "felt");
  const others = st.seats - (t.you === null ? 0 : 1);
  felt.dataset.opponents = String(others);
  felt.classList.toggle("many", others >= 4);
  felt.classList.toggle("spectating", t.you === null);
  const pos = seatPositions(st.seats, t.you);
  for (let s = 0; s < st.seats; s++) {
    const seat = renderSeat(t, st, s, pos[s]);
    (s === t.you ? mineBox : box).appendChild(seat);
  }
  mineBox.hidden = t.you === null;
}

export function renderCentre(t, st) {
  part(t, "deck-count").textContent = String(st.deck_size);
  const deck = part(t, "deck");
  const drawOk = t.canDraw(st) && !st.reveal;
  deck.disabled = !drawOk;
  deck.classList.toggle("ready", drawOk);
  deck.setAttribute("aria-label", fmt(gettext("Deck, %(n)s cards"), { n: st.deck_size }) + (drawOk ? " — " + gettext("draw") : ""));
  const pile = part(t, "pile");
  pile.textContent = "";
  if (st.pile.length) {
    if (st.pile.length > 1) pile.appendChild(cardFace(st.pile[st.pile.length - 2], "under"));
    pile.appendChild(cardFace(st.pile[st.pile.length - 1], "top" + (t.pileChanged ? " landed" : "")));
  } else {
    pile.appendChild(el("span", "pcard empty", gettext("empty")));
  }
  const pileOk = t.canPile(st) && !st.reveal;
  pile.classList.toggle("ready", pileOk);
  pile.setAttribute("aria-label", pileOk ? gettext("Take the top card of the discard pile")
    : fmt(gettext("Discard pile, %(n)s cards — view all"), { n: st.pile.length }));
  const wrap = part(t, "held-wrap");
  const held = part(t, "held");
  const label = part(t, "held-label");
  held.textContent = "";
  const kings = (st.turn && st.turn.kings_in_play) || [];
  if (st.held && !st.reveal) {
    wrap.hidden = false;
    held.appendChild(st.held.card ? cardFace(st.held.card, "lift" + (t.heldChanged ? " drawn" : ""))
      : cardBack("lift" + (t.heldChanged ? " drawn" : "")));
    label.textContent = st.held.seat === t.you ? gettext("Your drawn card")
      : fmt(gettext("%(name)s's drawn card"), { name: t.names[st.held.seat] });
  } else if (kings.length && !st.reveal) {
    wrap.hidden = false;
    kings.forEach(function (k) { held.appendChild(cardFace(k, "small")); });
    label.textContent = gettext("King in play");
  } else {
    wrap.hidden = true;
  }
  wrap.classList.toggle("kings", !!kings.length && !!st.held);
  if (kings.length && st.held && !st.reveal) {
    const k = el("span", "king-beside");
    kings.forEach(function (c) { k.appendChild(cardFace(c, "mini")); });
    held.appendChild(k);
  }
}

export function renderActions(t, st) {
  const box = actionBox(t);
  if (!box) return;
  const w = t.myWindow(st);
  if (w) {
    const call = button(gettext("Call CRISP!"), "crisp-button", "call", function () { t.act({ type: "call" }); });
    const cd = el("span", "countdown");
    cd.dataset.until = String(w.closes_at);
    call.appendChild(cd);
    box.appendChild(call);
  }
  if (st.status !== "playing" || st.reveal) return;
  const tb = t.turnBased(st);
  if (tb && t.canLook(st)) {
    // R28: the opening look waits for the player, until their first draw.
    if (t.canDraw(st)) box.appendChild(el("p", "hint", gettext("Look first: your first draw ends your look.")));
    box.appendChild(button(gettext("Look at your two cards"), t.myTurn(st) ? "" : "secondary", "look",
      function () { t.look(); }));
  }
  if (tb && t.askedToCall(st)) {
    // R28: the last step of your turn.
    box.appendChild(el("p", "hint call-question", gettext("Call crisp?")));
    box.appendChild(button(gettext("Call CRISP!"), "crisp-button", "call", function () { t.act({ type: "call" }); }));
    box.appendChild(button(gettext("No"), "secondary", "pass", function () { t.act({ type: "pass" }); }));
    return;
  }
  if (t.canDraw(st)) {
    // R28: while the look is still to take, it is the first thing offered; drawing comes second.
    box.appendChild(button(gettext("Draw from the deck"), tb && t.canLook(st) ? "secondary" : "", "draw-deck",
      function () { t.act({ type: "draw", source: "deck" }); }));
    if (t.canPile(st)) {
      box.appendChild(button(fmt(gettext("Take %(card)s from the pile"), { card: cardText(st.pile[st.pile.length - 1]) }),
        "secondary", "draw-pile", function () { t.act({ type: "draw", source: "pile" }); }));
    }
  } else if (t.holding(st)) {
    const card = st.held.card;
    const special = st.held.source === "deck" && isCourt(card);
    if (t.mode && t.mode.kind === "queen") {
      box.appendChild(el("p", "hint", t.mode.place
        ? fmt(gettext("Now pick an opponent's card to swap with your %(place)s card."), { place: PLACE_WORD[t.mode.place] })
        : gettext("Pick one of your cards to give away.")));
      box.appendChild(button(gettext("Cancel"), "secondary", "cancel", function () { t.setMode(null); }));
      return;
    }
    if (st.held.source === "pile") {
      box.appendChild(el("p", "hint", gettext("A card from the pile must be swapped in: tap one of your cards.")));
    } else if (!special) {
      box.appendChild(el("p", "hint", gettext("Tap one of your cards to swap it, or discard.")));
    }
    if (card[0] === "K" && special) {
      box.appendChild(button(gettext("Use the King: two extra draws"), "", "king", function () { t.act({ type: "king" }); }));
    } else {
      if (card[0] === "J" && special) {
        box.appendChild(button(gettext("Use the Jack: look at your centre card"), "", "jack", function () { t.act({ type: "jack" }); }));
      }
      if (card[0] === "Q" && special) {
        box.appendChild(button(gettext("Use the Queen: swap blind with an opponent"), "", "queen", function () { t.setMode({ kind: "queen" }); }));
      }
      if (st.held.source !== "pile") {
        box.appendChild(button(fmt(gettext("Discard %(card)s"), { card: cardText(card) }), "secondary", "discard",
          function () { t.act({ type: "discard" }); }));
      }
    }
  } else if (t.myTurn(st) && st.turn.phase === "start") {
    box.appendChild(el("p", "hint", gettext("Get ready — your turn starts in a moment.")));
  }
}

export function renderStatus(t, st, baseTitle) {
  const yourMove = st.status === "playing" && !st.reveal && (t.myTurn(st) || !!t.myWindow(st));
  let text = "";
  let until = null;
  const tn = st.turn;
  if (st.status === "finished") {
    text = gettext("Game over.");
  } else if (st.status === "abandoned") {
    text = gettext("The game was abandoned.");
  } else if (st.reveal) {
    text = fmt(gettext("Round %(n)s is over."), { n: st.round });
    if (st.next_round_at && !t.replay) { until = st.next_round_at; text += " " + gettext("Next round in"); }
  } else if (tn) {
    const who = tn.seat === t.you ? gettext("Your turn") : fmt(gettext("%(name)s's turn"), { name: t.names[tn.seat] });
    text = fmt(gettext("Round %(n)s · %(who)s"), { n: st.round, who: who });
    if (tn.final) text += " · " + gettext("final turn");
    if (tn.draw_no > 1 && tn.phase !== "call") text += " · " + gettext("King's extra draw");
    if (tn.phase === "call") text += " · " + gettext("Call crisp?");
    if (tn.extra_draws_left) text += " · " + fmt(ngettext("%(n)s extra draw left", "%(n)s extra draws left", tn.extra_draws_left), { n: tn.extra_draws_left });
    // A replay's clock does not run: no countdown there, nor words that wait for one.
    if (!t.replay && tn.phase === "start" && tn.start_at > t.now()) {
      until = tn.start_at;
      text += " · " + (tn.no === 1 && tn.draw_no <= 1 ? gettext("memorise! play starts in") : gettext("may start in"));
    } else if (!t.replay && (tn.draw_deadline || (tn.phase === "start" && st.settings.draw_seconds))) {
      // The draw clock runs from start_at; no frame announces that instant (PROTOCOL.md).
      until = tn.draw_deadline || tn.start_at + st.settings.draw_seconds * 1000;
      text += " · " + gettext("time left");
    }
  }
  let called = null;
  if (st.caller !== null && !st.reveal && st.status === "playing") {
    // "You" is its own message, never a name put into a third-person frame ("Вы объявил(а)").
    called = el("span", "called", st.caller === t.you
      ? fmt(gettext("You called crisp — final turns: %(n)s left"), { n: st.final_turns_left })
      : fmt(gettext("%(name)s called crisp — final turns: %(n)s left"), { name: t.names[st.caller], n: st.final_turns_left }));
  }
  statusBar(t, st, { yourMove: yourMove, title: baseTitle, text: text, until: until, after: [called] });
}

export function renderScores(t, st) {
  scoreTable(t, st, {
    rounds: st.history,
    head: function (n) { return [fmt(gettext("R%(n)s"), { n: n }), fmt(gettext("Round %(n)s"), { n: n })]; },
    cell: function (h, s) { return String(h[s]); },
    note: fmt(gettext("The game ends at %(n)s points; lowest total wins."), { n: st.settings.target_score }),
  });
}

export function renderReveal(t, st) {
  const ov = part(t, "reveal");
  if (!st.reveal && st.status !== "finished") { ov.hidden = true; t.revealShownFor = null; return; }
  const rv = st.reveal;
  const key = st.round + ":" + st.status;
  if (t.revealShownFor === key && ov.dataset.dismissed === "1") return;
  if (t.revealShownFor !== key) ov.dataset.dismissed = "0";
  const first = t.revealShownFor !== key;
  t.revealShownFor = key;
  ov.hidden = false;
  ov.textContent = "";
  const over = st.status === "finished";
  const panel = dialogPanel(t, "", "reveal-title",
    over ? gettext("Game over") : fmt(gettext("Round %(n)s results"), { n: st.round }));
  if (over) panel.appendChild(winnersLine(t, st.winners));
  const caller = rv ? st.caller : null;
  if (caller !== null) {
    panel.appendChild(el("p", "muted", rv.caller_strictly_lowest
      ? (caller === t.you ? gettext("You called crisp with the strictly lowest total: −5.")
        : fmt(gettext("%(name)s called crisp with the strictly lowest total: −5."), { name: t.nameOf(caller) }))
      : (caller === t.you ? gettext("You called crisp without the strictly lowest total: +5.")
        : fmt(gettext("%(name)s called crisp without the strictly lowest total: +5."), { name: t.nameOf(caller) }))));
  }
  // Each seat's cards face up, their sum, the round's score (the caller's ±5 in it), the Total.
  const num = function (key) { return function (s) { return rv ? String(rv[key][s]) : ""; }; };
  panel.appendChild(scoresTable(t, st, {
    cls: "reveal-table",
    name: function (s) { return t.names[s] + (s === caller ? " · " + gettext("CRISP") : ""); },
    columns: [
      { head: rv ? gettext("Cards") : "", cls: "mini-hand", cell: function (s) {
        const cards = document.createDocumentFragment();
        st.hands[s].forEach(function (c) { if (c) cards.appendChild(cardFace(c, "mini")); });
        return cards;
      } },
      { head: rv ? gettext("Sum") : "", cell: num("totals") },
      { head: rv ? gettext("Round") : "", cell: num("round_scores") },
    ],
  }));
  if (!over && st.next_round_at && !t.replay) {
    const p = el("p", "muted", gettext("Next round in") + " ");
    const c = el("span", "countdown"); c.dataset.until = String(st.next_round_at);
    p.appendChild(c);
    panel.appendChild(p);
  }
  ov.appendChild(panel);
  if (t.replay) return;  // a replay shows the results beside the table: nothing to close
  panel.appendChild(dialogActions(t, over, button(gettext("Show the table"), "secondary", "reveal-close", function () {
    ov.dataset.dismissed = "1"; ov.hidden = true;
  })));
  if (first) {
    const focus = panel.querySelector("[data-key=rematch]") || panel.querySelector("[data-key=reveal-close]");
    if (focus) focus.focus({ preventScroll: true });
  }
}

export function renderAll(t, st, baseTitle) {
  drawTable(t, st, baseTitle, {
    felt: function () { renderSeats(t, st); renderCentre(t, st); },
    actions: renderActions, status: renderStatus, scores: renderScores, dialog: renderReveal,
  });
}
