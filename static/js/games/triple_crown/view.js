/* Triple Crown's table, drawn from the controller's state (table.js). Rendering only: every
 * click calls back into the controller (`t.tapCard`, `t.declare`, `t.closeReveal`, ...).
 *
 * Layout (static/css/triple_crown.css): the viewer sits at the bottom with the fanned hand;
 * the next seats clockwise sit left, top and right (play goes clockwise, T1); the trick is in
 * the middle, each card in front of the seat that played it. A spectator sees seat 1 at the
 * bottom (no hand, no badge).
 *
 * Roles: only `st.you.role` (the viewer's own, sent to nobody else) is ever drawn during a
 * hand; other seats get no role-shaped mark at all -- not even an empty one -- until the
 * hand's result names every role. The one exception is a state that itself names other seats'
 * roles or hands: a finished game's full replay (roleOf, memoOf); the live server never sends
 * one.
 *
 * The same drawing serves the replay page (replay.js): `t.root` is then the replay's board (the
 * elements are looked up inside it, never in the whole page) and `t.replay` is true, which
 * leaves out what only a live table has: the action bar, countdowns, the page title, focus,
 * buttons.
 */
import { button, el } from "../../table/dom.js";
import { fmt, gettext, ngettext } from "../../table/i18n.js";
import {
  actionBox, dialogActions, dialogPanel, drawTable, part, scoreTable, statusBar, winnersLine, youOr,
} from "../../table/parts.js";
import { botBadge } from "../../table/sitin.js";
import { cardFace, cardSpoken, cardText, SUIT } from "../../table/cards.js";
import {
  earlyEndText, MEMO_WORD, reasonText, ROLE_GOAL, ROLE_NAME, SUIT_WORD, trumpsText, tricksText,
} from "./words.js";

const PLACE = ["bottom", "left", "top", "right"];

/** What one seat's entry of a by-seat field says: a list or an object keyed by seat. */
function bySeat(field, s) {
  if (Array.isArray(field)) return field[s];
  if (field && typeof field === "object") return field[String(s)];
  return undefined;
}

/** Seat `s`'s role, if the state names it: the viewer's own (`you.role`), or any seat's in a
 *  state that carries every role (a finished game's full replay: `roles` by seat, each a name
 *  or `{role, memo}`, or a seat's `role` in `seat_info`). Tolerant of whichever is there. */
export function roleOf(t, st, s) {
  if (s === t.you && st.you && st.you.role) return st.you.role;
  const entry = bySeat(st.roles, s);
  if (typeof entry === "string") return entry;
  if (entry && typeof entry === "object" && typeof entry.role === "string") return entry.role;
  const info = bySeat(st.seat_info, s);
  if (info && typeof info.role === "string") return info.role;
  return null;
}

/** The Double Stakes seat's secret memo, if the state names it (the viewer's own, or a full
 *  replay's `memo` / `{role, memo}` entry). */
export function memoOf(t, st, s) {
  if (s !== st.double_stakes) return null;
  if (s === t.you && st.you && st.you.memo) return st.you.memo;
  const entry = bySeat(st.roles, s);
  if (entry && typeof entry === "object" && typeof entry.memo === "string") return entry.memo;
  if (typeof st.memo === "string") return st.memo;
  return null;
}

/** A seat's hand when the state names it (the viewer's own; every hand in a full replay). */
function handOf(st, s) {
  const h = bySeat(st.hands, s);
  return Array.isArray(h) ? h : null;
}

/** The role badge of seat `s` (`mine`: the viewer's own, with its "only you" wording). */
function roleBadge(t, st, s, mine) {
  const role = roleOf(t, st, s);
  if (!role || st.phase === "over") return null;
  const badge = el("span", "tc-role tc-role-" + role);
  if (mine) badge.id = "role-badge";
  badge.dataset.role = role;
  badge.dataset.seat = String(s);
  badge.appendChild(el("strong", "", ROLE_NAME[role] || role));
  let goal = ROLE_GOAL[role] || "";
  const memo = memoOf(t, st, s);
  if (memo) {
    goal += " " + (mine ? fmt(gettext("Your secret memo: %(memo)s."), { memo: MEMO_WORD[memo] || memo })
      : fmt(gettext("Secret memo: %(memo)s."), { memo: MEMO_WORD[memo] || memo }));
  }
  badge.title = (mine ? gettext("Only you can see your role.") + " " : "") + goal;
  badge.setAttribute("aria-label", (mine ? fmt(gettext("Your role: %(role)s."), { role: ROLE_NAME[role] || role })
    : fmt(gettext("%(name)s's role: %(role)s."), { name: t.names[s] || "", role: ROLE_NAME[role] || role })) + " " + goal);
  badge.appendChild(el("span", "tc-role-goal", goal));
  return badge;
}
const RANKS = "23456789TJQKA";

/** Where seat `s` sits for this viewer: 0 bottom (the viewer), then clockwise left, top, right. */
export function placeOf(t, s, seats) {
  const base = t.you === null ? 0 : t.you;
  return (s - base + seats) % seats;
}

/** The hand in display order: suits alternating in colour (♠ ♥ ♣ ♦), trumps first, high to low. */
export function displayOrder(cards, trumps) {
  let suits = ["S", "H", "C", "D"];
  if (trumps && trumps !== "NT") suits = [trumps].concat(suits.filter((x) => x !== trumps));
  return cards.slice().sort((a, b) => {
    const sa = suits.indexOf(a[1]);
    const sb = suits.indexOf(b[1]);
    return sa !== sb ? sa - sb : RANKS.indexOf(b[0]) - RANKS.indexOf(a[0]);
  });
}

function chip(cls, text, title) {
  const c = el("span", "tc-chip " + cls, text);
  if (title) { c.title = title; c.setAttribute("aria-label", title); }
  return c;
}

function dealerChip() {
  const d = el("span", "dealer-chip", "D");
  d.title = gettext("Dealer");
  d.setAttribute("aria-label", gettext("Dealer"));
  return d;
}

/** A seat's numbers say what they are: "2 tricks", "13 pts", "13 cards" (issue 22: three bare
 *  numbers side by side meant nothing to a new player). */
function tricksChip(n) {
  return chip("tc-taken", tricksText(n), tricksText(n));
}

function scoreChip(n) {
  return chip("tc-score", fmt(gettext("%(n)s pts"), { n: n }), fmt(gettext("Score: %(n)s"), { n: n }));
}

/** How many cards a seat holds, as a few card backs and the number (never which cards). */
function backsOf(n) {
  const backs = el("span", "tc-backs");
  backs.setAttribute("role", "img");
  backs.setAttribute("aria-label", fmt(ngettext("%(n)s card in hand", "%(n)s cards in hand", n), { n: n }));
  for (let i = 0; i < Math.min(n, 5); i++) backs.appendChild(el("span", "tc-back"));
  backs.appendChild(el("span", "tc-count", fmt(ngettext("%(n)s card", "%(n)s cards", n), { n: n })));
  return backs;
}

function playing(st) { return st.status === "playing" && st.phase !== "over"; }

function renderOpponent(t, st, s) {
  const active = playing(st) && st.turn === s;
  const box = el("section", "tc-seat tc-" + PLACE[placeOf(t, s, st.seats)] +
    (active ? " active" : "") + (t.timedOut(s) ? " timed-out" : ""));
  box.dataset.seat = String(s);
  box.setAttribute("aria-label", fmt(gettext("%(name)s's seat"), { name: t.names[s] || "" }));
  const head = el("div", "tc-seat-head");
  const dot = el("span", "presence");
  dot.dataset.presenceSeat = String(s);
  head.appendChild(dot);
  const name = el("span", "tc-seat-name", t.names[s] || "");
  name.title = t.names[s] || "";
  head.appendChild(name);
  if (st.dealer === s) head.appendChild(dealerChip());
  box.appendChild(head);
  const row = el("div", "tc-seat-row");
  const known = handOf(st, s);
  if (!known) row.appendChild(backsOf(st.hand_sizes[s]));
  row.appendChild(tricksChip(st.taken[s]));
  row.appendChild(scoreChip(st.scores[s]));
  box.appendChild(row);
  box.appendChild(botBadge(s));
  if (known) {
    const open = el("div", "mini-hand tc-open-hand");
    open.setAttribute("aria-label", fmt(gettext("%(name)s's hand"), { name: t.names[s] || "" }));
    displayOrder(known, st.trumps).forEach((c) => open.appendChild(cardFace(c, "mini")));
    box.appendChild(open);
  }
  if (st.double_stakes === s && st.phase !== "over") {
    box.appendChild(chip("tc-ds", gettext("Double Stakes"), gettext("Holds A♠ and 2♦: plays alone against the other three")));
  }
  const badge = roleBadge(t, st, s, false);
  if (badge) box.appendChild(badge);
  if (t.timedOut(s)) box.appendChild(chip("tc-timeout", gettext("time up"), gettext("ran out of time")));
  return box;
}

export function renderSeats(t, st) {
  const box = part(t, "tc-seats");
  box.textContent = "";
  const felt = part(t, "felt");
  felt.classList.toggle("spectating", t.you === null);
  for (let s = 0; s < st.seats; s++) {
    if (s === t.you) continue;
    if (t.you === null && s === 0) continue;  // a spectator's bottom seat is drawn below
    box.appendChild(renderOpponent(t, st, s));
  }
}

/** The viewer's own line: name, dealer, tricks, score, and the role badge only they see. */
export function renderMe(t, st) {
  const head = part(t, "tc-me-head");
  head.textContent = "";
  const me = t.you === null ? 0 : t.you;
  const active = playing(st) && st.turn === me;
  head.className = "tc-me-head" + (active ? " active" : "") + (t.timedOut(me) ? " timed-out" : "");
  head.dataset.seat = String(me);
  const dot = el("span", "presence");
  dot.dataset.presenceSeat = String(me);
  head.appendChild(dot);
  head.appendChild(el("span", "tc-seat-name", youOr(t, me)));
  head.appendChild(botBadge(me));
  if (st.dealer === me) head.appendChild(dealerChip());
  head.appendChild(tricksChip(st.taken[me]));
  head.appendChild(scoreChip(st.scores[me]));
  if (t.you === null) {
    if (st.double_stakes === me && st.phase !== "over") head.appendChild(chip("tc-ds", gettext("Double Stakes")));
    if (!handOf(st, me)) head.appendChild(backsOf(st.hand_sizes[me]));
    const seen = roleBadge(t, st, me, false);  // a full replay's bottom seat
    if (seen) head.appendChild(seen);
    return;
  }
  const badge = roleBadge(t, st, me, true);
  if (badge) head.appendChild(badge);
}

/** The fanned hand. Tap a legal card to lift it; tap it again (or "Play") to play it. */
export function renderHand(t, st) {
  const box = part(t, "tc-hand");
  box.textContent = "";
  // The bottom seat's hand: the viewer's own, or (a full replay) the bottom seat's.
  const mine = handOf(st, t.you === null ? 0 : t.you);
  if (!mine) { box.hidden = true; return; }
  box.hidden = false;
  const cards = displayOrder(mine, st.trumps);
  const legal = t.legal(st);
  const myTurn = t.canPlay(st);
  box.style.setProperty("--n", String(cards.length));
  box.classList.toggle("my-turn", myTurn);
  cards.forEach((c, i) => {
    const ok = myTurn && legal.indexOf(c) >= 0;
    const b = el(t.replay ? "span" : "button", "tc-card" + (ok ? " playable" : "") + (myTurn && !ok ? " illegal" : "") +
      (t.lifted === c ? " lifted" : "") + (st.trumps && st.trumps !== "NT" && c[1] === st.trumps ? " trump" : ""));
    if (!t.replay) b.type = "button";
    b.dataset.key = "card-" + c;
    b.dataset.card = c;
    b.style.setProperty("--k", String(i - (cards.length - 1) / 2));
    b.style.setProperty("--i", String(i));
    if (!t.replay) b.disabled = !ok;
    let label = cardSpoken(c);
    if (ok) label += " — " + (t.lifted === c ? gettext("tap again to play") : gettext("tap to lift"));
    else if (myTurn) label += " — " + gettext("you must follow suit");
    b.setAttribute("aria-label", label);
    if (!t.replay) b.setAttribute("aria-pressed", t.lifted === c ? "true" : "false");
    b.appendChild(cardFace(c, t.dealing ? "dealt" : ""));
    if (!t.replay) b.addEventListener("click", () => t.tapCard(c));
    box.appendChild(b);
  });
}

/** The trick in the middle; between tricks, the last one with its winner until the next lead. */
export function renderTrick(t, st) {
  const box = part(t, "tc-trick");
  const note = part(t, "tc-trick-note");
  box.textContent = "";
  note.textContent = "";
  let cards = st.trick;
  let leader = st.leader;
  let winner = null;
  let no = st.tricks.length + 1;
  let done = false;
  if (!cards.length && st.phase !== "declare") {
    const last = st.tricks.length ? st.tricks[st.tricks.length - 1] : t.lastTrickOf(st);
    if (last) {
      cards = last.cards;
      leader = last.leader;
      winner = last.winner;
      no = last.no;
      done = true;
    }
  }
  box.classList.toggle("done", done);
  box.hidden = st.phase === "declare";
  for (let p = 0; p < 4; p++) box.appendChild(el("div", "tc-slot tc-" + PLACE[p]));
  const slots = box.children;
  cards.forEach((pc) => {
    const slot = slots[placeOf(t, pc.seat, st.seats)];
    const fresh = !done && t.freshCard === pc.card;
    slot.appendChild(cardFace(pc.card, (fresh ? "landed" : "") + (pc.seat === winner ? " winner" : "")));
    slot.dataset.seat = String(pc.seat);
    if (pc.seat === leader) {
      const tag = el("span", "tc-led", gettext("led"));
      tag.title = fmt(gettext("%(name)s led this trick"), { name: t.nameIn(leader) });
      slot.appendChild(tag);
    }
  });
  if (done && winner !== null) {
    note.textContent = winner === t.you ? fmt(gettext("Trick %(n)s: you take it."), { n: no })
      : fmt(gettext("Trick %(n)s: %(name)s takes it."), { n: no, name: t.nameIn(winner) });
  } else if (playing(st) && st.phase === "play" && !cards.length) {
    note.textContent = st.leader === t.you ? gettext("Your lead: play any card.")
      : fmt(gettext("%(name)s leads."), { name: t.nameIn(st.leader) });
  } else if (cards.length) {
    note.textContent = fmt(gettext("Trick %(n)s · %(name)s led %(suit)s"),
      { n: no, name: t.nameIn(leader), suit: SUIT[cards[0].card[1]] + " " + SUIT_WORD[cards[0].card[1]] });
  }
}

/** Trumps / no-trump, the hand number, and the Double Stakes announcement (public). */
export function renderInfo(t, st) {
  const tr = part(t, "tc-trumps");
  tr.textContent = "";
  tr.className = "tc-trumps";
  if (st.kind === "double_stakes") {
    tr.classList.add("ds");
    if (st.trumps) {
      tr.appendChild(el("span", "tc-trumps-label", gettext("Trumps")));
      tr.appendChild(el("strong", st.trumps === "D" || st.trumps === "H" ? "red" : "", trumpsText(st.trumps)));
    } else {
      tr.appendChild(el("strong", "", gettext("Double Stakes")));
      tr.appendChild(el("span", "tc-trumps-label", gettext("trumps not named yet")));
    }
  } else {
    tr.appendChild(el("strong", "", gettext("No trump")));
    tr.appendChild(el("span", "tc-trumps-label", gettext("Crown hand")));
  }
  part(t, "tc-hand-no").textContent = fmt(gettext("Hand %(n)s"), { n: st.round });
  const tb = part(t, "tc-tricks-button");
  tb.textContent = fmt(gettext("Tricks: %(n)s"), { n: st.tricks.length });
  tb.disabled = !st.tricks.length;
  tb.title = gettext("Every trick of this hand so far");
  renderTrickList(t, st);
}

/** The hand's finished tricks, oldest first (T27d: the whole trick history is public). */
export function renderTrickList(t, st) {
  const list = part(t, "tricks-dialog-body");
  if (!list) return;
  list.textContent = "";
  st.tricks.forEach((tr) => {
    const li = el("li", "tc-trick-row");
    li.appendChild(el("span", "tc-trick-no", String(tr.no)));
    const cards = el("span", "tc-trick-cards");
    tr.cards.forEach((pc) => {
      const cell = el("span", "tc-trick-card" + (pc.seat === tr.winner ? " winner" : ""));
      cell.appendChild(cardFace(pc.card, "mini"));
      cell.appendChild(el("span", "tc-trick-who", t.names[pc.seat] || ""));
      cards.appendChild(cell);
    });
    li.appendChild(cards);
    li.appendChild(el("span", "tc-trick-winner", "→ " + t.nameOf(tr.winner)));
    list.appendChild(li);
  });
}

/** The Double Stakes seat's one move before the first lead: trumps and the secret memo. */
export function renderDeclare(t, st) {
  const box = part(t, "tc-declare");
  const show = playing(st) && st.phase === "declare";
  box.hidden = !show;
  if (!show) { box.textContent = ""; return; }
  const mine = t.canDeclare(st);
  const key = mine + ":" + (t.pick.trumps || "") + ":" + (t.pick.memo || "") + ":" + st.round;
  if (box.dataset.key === key) return;  // keep focus and the choice while the clock ticks
  box.dataset.key = key;
  box.textContent = "";
  if (!mine) {
    box.appendChild(el("p", "tc-declare-wait", fmt(gettext("%(name)s is Double Stakes and is naming trumps…"),
      { name: t.nameIn(st.double_stakes) })));
    return;
  }
  box.appendChild(el("h3", "", gettext("You are Double Stakes")));
  box.appendChild(el("p", "tc-declare-help", gettext("Name trumps, then write your secret memo. Either way you score 5 if you take no trick or at least 5.")));
  const trumps = el("div", "tc-choice");
  trumps.setAttribute("role", "radiogroup");
  trumps.setAttribute("aria-label", gettext("Trumps"));
  ["S", "H", "D", "C", "NT"].forEach((x) => {
    const b = button(x === "NT" ? gettext("No trump") : SUIT[x], "secondary tc-pick" +
      (x === "D" || x === "H" ? " red" : "") + (t.pick.trumps === x ? " chosen" : ""),
      "trumps-" + x, () => t.choose("trumps", x), trumpsText(x));
    b.setAttribute("role", "radio");
    b.setAttribute("aria-checked", t.pick.trumps === x ? "true" : "false");
    trumps.appendChild(b);
  });
  box.appendChild(trumps);
  const memo = el("div", "tc-choice");
  memo.setAttribute("role", "radiogroup");
  memo.setAttribute("aria-label", gettext("Secret memo"));
  [["high", gettext("High: 5+ tricks")], ["low", gettext("Low: no trick")]].forEach((m) => {
    const b = button(m[1], "secondary tc-pick tc-memo" + (t.pick.memo === m[0] ? " chosen" : ""),
      "memo-" + m[0], () => t.choose("memo", m[0]));
    b.setAttribute("role", "radio");
    b.setAttribute("aria-checked", t.pick.memo === m[0] ? "true" : "false");
    memo.appendChild(b);
  });
  const memoRow = el("div", "tc-memo-row");
  memoRow.appendChild(el("span", "tc-memo-label", gettext("Secret memo")));
  memoRow.appendChild(memo);
  box.appendChild(memoRow);
  box.appendChild(el("p", "tc-declare-help small", gettext("The memo only matters if you fail: it decides what the other three score.")));
  const go = button(gettext("Declare"), "tc-declare-go", "declare", () => t.declare());
  go.disabled = !(t.pick.trumps && t.pick.memo);
  box.appendChild(go);
}

export function renderActions(t, st) {
  const box = actionBox(t);
  if (!box || !playing(st)) return;
  if (t.canPlay(st)) {
    if (t.lifted) {
      box.appendChild(button(fmt(gettext("Play %(card)s"), { card: cardText(t.lifted) }), "tc-play", "play",
        () => t.tapCard(t.lifted)));
      box.appendChild(button(gettext("Cancel"), "secondary", "cancel", () => t.lift(null)));
    } else {
      const follow = st.trick.length ? st.trick[0].card[1] : null;
      const must = follow && t.legal(st).some((c) => c[1] === follow);
      box.appendChild(el("p", "hint", must
        ? fmt(gettext("Follow suit: play a %(suit)s. Tap a card to lift it, tap again to play."), { suit: SUIT[follow] + " " + SUIT_WORD[follow] })
        : gettext("Your turn: tap a card to lift it, tap again to play.")));
    }
  } else if (t.canDeclare(st)) {
    box.appendChild(el("p", "hint", gettext("Name trumps and write your memo above.")));
  } else if (st.turn !== null) {
    box.appendChild(el("p", "hint muted", fmt(gettext("Waiting for %(name)s…"), { name: t.nameIn(st.turn) })));
  }
}

export function renderStatus(t, st, baseTitle) {
  let text;
  if (st.status === "finished") text = gettext("Game over.");
  else if (st.status === "abandoned") text = gettext("The game was abandoned.");
  else if (st.phase === "declare") {
    text = t.canDeclare(st) ? gettext("Your move: name trumps and write your memo")
      : fmt(gettext("%(name)s is naming trumps"), { name: t.nameIn(st.double_stakes) });
  } else if (st.turn !== null && st.turn !== undefined) {
    text = st.turn === t.you ? gettext("Your turn") : fmt(gettext("%(name)s's turn"), { name: t.nameIn(st.turn) });
  } else text = "";
  statusBar(t, st, {
    yourMove: t.canPlay(st) || t.canDeclare(st), title: baseTitle, text: text,
    until: playing(st) ? st.move_deadline : null, clockTitle: gettext("Time left for this move"),
    after: [el("span", "tc-goal", fmt(gettext("First to %(n)s points"), { n: st.settings.target_score }))],
  });
}

export function renderScores(t, st) {
  const box = scoreTable(t, st, {
    rounds: st.history,
    head: (n) => [fmt(gettext("H%(n)s"), { n: n }), fmt(gettext("Hand %(n)s"), { n: n })],
    cell: (h, s) => (h[s] ? "+" + h[s] : "0"),
    extra: [{ head: gettext("Tricks"), cell: (s) => (st.phase === "over" ? "" : String(st.taken[s])) }],
    note: fmt(gettext("The game ends when someone reaches %(n)s points; the highest total wins."),
      { n: st.settings.target_score }),
  });
  if (st.last_hand && !t.replay) {
    box.appendChild(button(fmt(gettext("Results of hand %(n)s"), { n: st.last_hand.round }), "secondary small",
      "last-hand", () => t.showReveal(st.last_hand)));
  }
}

/** The reveal (T20): every role, the memo, the tricks and each seat's points, with why. */
export function renderReveal(t, st) {
  const ov = part(t, "reveal");
  const r = t.revealResult;
  if (!r) { ov.hidden = true; ov.textContent = ""; return; }
  const over = st.status === "finished" && st.last_hand && st.last_hand.round === r.round;
  const key = r.round + ":" + over + ":" + t.canPlay(st) + ":" + t.canDeclare(st);
  if (!ov.hidden && ov.dataset.key === key) return;
  const first = ov.hidden;
  ov.dataset.key = key;
  ov.hidden = false;
  ov.textContent = "";
  const panel = dialogPanel(t, "tc-reveal", "reveal-title",
    over ? gettext("Game over") : fmt(gettext("Hand %(n)s: the reveal"), { n: r.round }));
  panel.id = "reveal-panel";
  if (over) panel.appendChild(winnersLine(t, st.winners));
  if (r.kind === "double_stakes") {
    panel.appendChild(el("p", "tc-reveal-kind", fmt(gettext("Double Stakes hand: %(name)s played alone with trumps %(trumps)s; the secret memo said %(memo)s."),
      { name: t.nameIn(r.double_stakes), trumps: trumpsText(r.trumps), memo: MEMO_WORD[r.memo] || "" })));
  } else {
    panel.appendChild(el("p", "tc-reveal-kind", gettext("Crown hand, no trump.")));
  }
  const early = earlyEndText(r.early_end, t.nameIn(r.double_stakes));
  if (early) panel.appendChild(el("p", "tc-early", early + " " + fmt(ngettext("%(n)s trick was played.", "%(n)s tricks were played.", r.tricks_played), { n: r.tricks_played })));
  const list = el("ol", "tc-results");
  for (let s = 0; s < r.roles.length; s++) {
    const li = el("li", "tc-result tc-role-" + r.roles[s] + (r.points[s] > 0 ? " scored" : ""));
    li.dataset.seat = String(s);
    li.dataset.role = r.roles[s];
    const who = el("div", "tc-result-who");
    who.appendChild(el("span", "tc-result-name", t.nameOf(s)));
    who.appendChild(el("span", "tc-result-role", ROLE_NAME[r.roles[s]] || r.roles[s]));
    li.appendChild(who);
    li.appendChild(el("span", "tc-result-points", "+" + r.points[s]));
    li.appendChild(el("div", "tc-result-sub", tricksText(r.tricks[s]) + " · " +
      fmt(gettext("total %(n)s"), { n: r.scores[s] })));
    const why = el("ul", "tc-why");
    (r.reasons[s] || []).forEach((x) => why.appendChild(el("li", "", reasonText(x) + " → +" + x.points)));
    li.appendChild(why);
    const left = (r.unplayed && r.unplayed[s]) || [];
    if (left.length) {
      const cards = el("div", "mini-hand tc-unplayed");
      cards.setAttribute("aria-label", gettext("Cards not played"));
      displayOrder(left, r.trumps).forEach((c) => cards.appendChild(cardFace(c, "mini")));
      li.appendChild(cards);
    }
    list.appendChild(li);
  }
  panel.appendChild(list);
  if (t.replay) { ov.appendChild(panel); return; }  // beside the table: nothing to close
  const label = over ? gettext("Show the table")
    : t.canPlay(st) || t.canDeclare(st) ? gettext("Continue — your turn") : gettext("Continue");
  const go = button(label, over ? "secondary" : "", "reveal-close", () => t.closeReveal());
  panel.appendChild(dialogActions(t, over, go));
  ov.appendChild(panel);
  if (first) go.focus();
}

export function renderAll(t, st, baseTitle) {
  drawTable(t, st, baseTitle, {
    felt: function () {
      renderInfo(t, st);
      renderSeats(t, st);
      renderMe(t, st);
      renderTrick(t, st);
      renderDeclare(t, st);
      renderHand(t, st);
    },
    actions: renderActions, status: renderStatus, scores: renderScores, dialog: renderReveal,
  });
}
