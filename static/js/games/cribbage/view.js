/* Cribbage's table, drawn from the controller's state (table.js). Rendering only: every click
 * calls back into the controller (`t.toggle`, `t.layAway`, `t.play`, `t.closeShow`).
 *
 * Layout (static/css/cribbage.css): the other player on top, the peg board, the starter / the
 * count / the crib in the middle, the viewer at the bottom with their hand, the action bar
 * under the felt; scores, the last show and the log at the side (below the felt on phones).
 * A spectator sees seat 0 at the bottom, face down. Any hand the state names is drawn face up
 * (a seat's own; every hand in a finished game's full replay).
 *
 * The same drawing serves the replay page (replay.js): `t.root` is then the replay's board (the
 * elements are looked up inside it, never in the whole page) and `t.replay` is true, which
 * leaves out what only a live table has: the action bar, countdowns, the page title, focus,
 * the show's buttons.
 */
import { cardBack, cardFace, cardSpoken, cardText } from "../../table/cards.js";
import { button, el } from "../../table/dom.js";
import { fmt, gettext, ngettext } from "../../table/i18n.js";
import { dialogActions, dialogPanel, drawTable, part, scoreTable, statusBar, youOr } from "../../table/parts.js";
import { botBadge } from "../../table/sitin.js";
import { paintBoard } from "./board.js";
import { goFor, hisHeelsFor, pegPhrases, showItems, showPhrases, spokenShow } from "./spoken.js";

/** The labels of the show's breakdown, summed by kind ("fifteens 6 · pair 2"). */
function breakdownSummary(b) {
  const sums = {};
  showItems(b).forEach(function (it) { sums[it.kind] = (sums[it.kind] || 0) + it.points; });
  const names = { fifteen: gettext("fifteens"), pair: gettext("pairs"), run: gettext("runs"),
    flush: gettext("flush"), nobs: gettext("nobs") };
  return ["fifteen", "pair", "run", "flush", "nobs"].filter(function (k) { return sums[k]; })
    .map(function (k) { return names[k] + " " + sums[k]; }).join(" · ");
}

function seatChip(cls, text, title) {
  const c = el("span", "seat-chip " + cls, text);
  if (title) { c.title = title; c.setAttribute("aria-label", title); }
  return c;
}

function cardRow(cards, cls, extra) {
  const row = el("div", "crib-row " + (cls || ""));
  (cards || []).forEach(function (c) { row.appendChild(cardFace(c, extra || "small")); });
  return row;
}

function renderSeat(t, st, s, box) {
  box.textContent = "";
  const mine = s === t.you;
  const playing = st.status === "playing";
  const awaitingLay = playing && st.phase === "lay_away" && !st.laid_away[s];
  const onTurn = playing && st.phase === "play" && st.turn && st.turn.seat === s;
  box.className = "crib-seat " + (box.id === "seat-top" ? "crib-top" : "crib-bottom") +
    (mine ? " mine" : "") + (onTurn || awaitingLay ? " active" : "") + " seat-" + s;
  box.dataset.seat = String(s);
  box.setAttribute("aria-label", mine ? gettext("Your seat") : fmt(gettext("%(name)s's seat"), { name: t.names[s] || "" }));

  const head = el("div", "seat-head");
  const dot = el("span", "presence");
  dot.dataset.presenceSeat = String(s);
  head.appendChild(dot);
  head.appendChild(el("span", "peg-swatch peg-" + s));
  const name = el("span", "seat-name", youOr(t, s));
  name.title = t.names[s] || "";
  head.appendChild(name);
  head.appendChild(botBadge(s));
  if (st.dealer === s) {
    const dm = el("span", "dealer-chip", gettext("D"));
    const label = mine ? gettext("You deal: the crib is yours") : gettext("Dealer: the crib is theirs");
    dm.title = label;
    dm.setAttribute("aria-label", label);
    head.appendChild(dm);
  }
  if (playing && st.phase === "play" && st.go[s]) head.appendChild(seatChip("go-chip", gettext("Go"), gettext("cannot play on this count")));
  if (playing && st.phase === "lay_away" && st.laid_away[s]) head.appendChild(seatChip("laid-chip", "✓ " + gettext("crib"), gettext("has laid away")));
  if (t.timedOut(s)) head.appendChild(seatChip("timeout-chip", "⏱ " + gettext("time up"), gettext("ran out of time")));
  const score = el("span", "seat-score", String(st.scores[s]));
  score.title = gettext("Score");
  head.appendChild(score);
  box.appendChild(head);

  const body = el("div", "crib-seat-body");
  // Cards played this hand stay face up in front of their player (C12).
  const played = el("div", "crib-played");
  played.setAttribute("aria-label", gettext("Played"));
  (st.played[s] || []).forEach(function (c) {
    played.appendChild(cardFace(c, "mini" + (t.justPlayed === c ? " landed" : "")));
  });
  if (!st.played[s].length) played.classList.add("empty");
  body.appendChild(played);

  const hand = el("div", "crib-hand");
  if (mine && st.you && playing) {
    renderMyHand(t, st, hand);
  } else if (st.hands[s]) {
    st.hands[s].forEach(function (c) { hand.appendChild(cardFace(c, "")); });
  } else {
    for (let i = 0; i < st.hand_sizes[s]; i++) hand.appendChild(cardBack(t.dealing ? "dealt" : ""));
  }
  if (!hand.children.length) hand.classList.add("empty");
  hand.setAttribute("aria-label", mine ? gettext("Your hand")
    : fmt(ngettext("%(n)s card in hand", "%(n)s cards in hand", st.hand_sizes[s]), { n: st.hand_sizes[s] }));
  body.appendChild(hand);
  box.appendChild(body);
}

function renderMyHand(t, st, hand) {
  const cards = st.you.hand || [];
  const laying = t.canLayAway(st);
  const playing = t.canPlay(st);
  const playable = st.you.playable || [];
  cards.forEach(function (c) {
    let slot;
    if (laying || (playing && playable.indexOf(c) >= 0)) {
      slot = el("button", "crib-card pickable");
      slot.type = "button";
      slot.dataset.key = "card-" + c;
      slot.dataset.card = c;
      if (laying) {
        const on = t.selected.indexOf(c) >= 0;
        slot.classList.toggle("chosen", on);
        slot.setAttribute("aria-pressed", on ? "true" : "false");
        slot.setAttribute("aria-label", fmt(gettext("%(card)s: choose for the crib"), { card: cardSpoken(c) }));
        slot.addEventListener("click", function () { t.toggle(c); });
      } else {
        slot.setAttribute("aria-label", fmt(gettext("Play %(card)s"), { card: cardSpoken(c) }));
        slot.addEventListener("click", function () { t.play(c); });
      }
      slot.disabled = t.sending;
    } else {
      slot = el("span", "crib-card" + (playing ? " dead" : ""));
      if (playing) slot.title = fmt(gettext("%(card)s would take the count past 31"), { card: cardText(c) });
    }
    slot.appendChild(cardFace(c, t.dealing ? "dealt" : ""));
    hand.appendChild(slot);
  });
  // My two crib cards, which only I may see, stay beside my hand until the crib is shown.
  if (st.you.discards && !st.crib && st.status === "playing") {
    const mine = el("div", "my-discards");
    mine.title = gettext("Your two cards in the crib");
    mine.appendChild(el("span", "mini-label", gettext("in the crib")));
    st.you.discards.forEach(function (c) { mine.appendChild(cardFace(c, "mini")); });
    hand.appendChild(mine);
  }
}

function renderCentre(t, st) {
  const starter = part(t, "starter");
  starter.textContent = "";
  starter.appendChild(cardBack("stock"));
  if (st.starter) starter.appendChild(cardFace(st.starter, "starter" + (t.starterNew ? " landed" : "")));
  starter.setAttribute("aria-label", st.starter ? fmt(gettext("Starter: %(card)s"), { card: cardSpoken(st.starter) }) : gettext("The stock, face down"));

  const crib = part(t, "crib");
  crib.textContent = "";
  if (st.crib) {
    crib.classList.add("open");
    st.crib.forEach(function (c) { crib.appendChild(cardFace(c, "mini")); });
  } else {
    crib.classList.remove("open");
    for (let i = 0; i < Math.max(1, Math.min(4, st.crib_size)); i++) {
      crib.appendChild(i < st.crib_size ? cardBack("small") : el("span", "pcard small empty", ""));
    }
  }
  const owner = st.crib_owner;
  part(t, "crib-label").textContent = owner === t.you ? gettext("Your crib")
    : fmt(gettext("%(name)s's crib"), { name: t.names[owner] });

  const count = part(t, "count");
  count.textContent = "";
  if (st.phase !== "play" || st.status !== "playing") {
    count.classList.add("idle");
    count.appendChild(el("span", "count-label", gettext("Count")));
    count.appendChild(el("span", "count-value", "–"));
    return;
  }
  count.classList.remove("idle");
  let seq = st.sequence;
  let value = st.count;
  let over = null;
  if (!seq.length && t.lastCount && t.lastCount.round === st.round) {
    seq = t.lastCount.seq;
    value = t.lastCount.count;
    over = value === 31 ? gettext("31 — the count starts again") : gettext("go — the count starts again");
  }
  count.appendChild(el("span", "count-label", gettext("Count")));
  count.appendChild(el("span", "count-value" + (over ? " over" : ""), String(value)));
  const row = el("div", "count-cards" + (over ? " over" : ""));
  seq.forEach(function (p, i) {
    row.appendChild(cardFace(p.card, "small by-" + p.seat + (i === seq.length - 1 && !over && t.justPlayed === p.card ? " landed" : "")));
  });
  count.appendChild(row);
  if (over) count.appendChild(el("span", "count-note", over));
}

function renderActions(t, st) {
  const box = part(t, "actions");
  box.textContent = "";
  if (st.status !== "playing") {
    box.appendChild(el("p", "hint", st.status === "finished" ? gettext("Game over.") : gettext("The game was abandoned.")));
    if (st.status === "finished") {
      box.appendChild(button(gettext("Show the result"), "secondary", "show-result", function () { t.openResult(); }));
    }
    return;
  }
  if (t.you === null) {
    box.appendChild(el("p", "hint", gettext("You are watching this game.")));
    return;
  }
  const other = t.names[1 - t.you];
  if (t.canLayAway(st)) {
    const forWhom = st.crib_owner === t.you ? gettext("Choose two cards for your crib.")
      : fmt(gettext("Choose two cards for %(name)s's crib."), { name: other });
    box.appendChild(el("p", "hint", forWhom));
    const ready = t.selected.length === 2;
    const label = ready ? fmt(gettext("Lay away %(a)s %(b)s"), { a: cardText(t.selected[0]), b: cardText(t.selected[1]) })
      : gettext("Lay away");
    const b = button(label, "", "lay-away", function () { t.layAway(); });
    b.disabled = !ready || t.sending;
    box.appendChild(b);
    return;
  }
  if (st.phase === "lay_away") {
    box.appendChild(el("p", "hint", fmt(gettext("Waiting for %(name)s to lay away…"), { name: other })));
    return;
  }
  if (t.canPlay(st)) {
    box.appendChild(el("p", "hint", st.count ? fmt(gettext("Your turn: tap a card to play (the count is %(n)s)."), { n: st.count })
      : gettext("Your lead: tap a card to play.")));
    return;
  }
  if (st.turn) box.appendChild(el("p", "hint", fmt(gettext("%(name)s is playing…"), { name: other })));
}

function renderStatus(t, st, baseTitle) {
  let text;
  let until = null;
  if (st.status === "finished") {
    const w = st.winners[0];
    text = w === t.you ? gettext("Game over — you win!") : fmt(gettext("Game over — %(name)s wins."), { name: t.names[w] });
  } else if (st.status === "abandoned") {
    text = gettext("The game was abandoned.");
  } else if (st.phase === "lay_away") {
    text = fmt(gettext("Hand %(n)s · laying away"), { n: st.round });
    if (st.lay_away_deadline && (t.you === null || !st.laid_away[t.you])) until = st.lay_away_deadline;
  } else {
    const who = st.turn && st.turn.seat === t.you ? gettext("your turn")
      : fmt(gettext("%(name)s's turn"), { name: st.turn ? t.names[st.turn.seat] : "" });
    text = fmt(gettext("Hand %(n)s · the play · %(who)s"), { n: st.round, who: who });
    if (st.turn && st.turn.deadline) until = st.turn.deadline;
  }
  statusBar(t, st, {
    yourMove: t.canLayAway(st) || t.canPlay(st), word: gettext("Your move"), title: baseTitle,
    text: text, until: until,
    after: [el("span", "status-target", fmt(gettext("to %(n)s"), { n: st.target_score }))],
  });
}

function renderScores(t, st) {
  // While a hand is played, its points so far ("now") before the Total.
  const now = st.status !== "playing" ? [] : [{
    head: gettext("now"), title: gettext("This hand so far"),
    cell: function (s) { return String(st.hand_points[s]); },
  }];
  scoreTable(t, st, {
    rounds: st.history,
    head: function (n) { return [fmt(gettext("H%(n)s"), { n: n }), fmt(gettext("Hand %(n)s"), { n: n })]; },
    cell: function (h, s) { return String(h[s]); },
    extra: now,
    name: function (s) {
      const cell = document.createDocumentFragment();
      cell.appendChild(el("span", "peg-swatch peg-" + s));
      cell.appendChild(document.createTextNode(youOr(t, s)));
      return cell;
    },
    note: fmt(gettext("First to %(n)s points wins, the moment they reach it."), { n: st.target_score }),
  });
}

/** Whose hand a show item is, in words ("Your crib", "Bob's hand"). */
function showTitle(t, item) {
  const mine = item.seat === t.you;
  if (item.what === "crib") return mine ? gettext("Your crib") : fmt(gettext("%(name)s's crib"), { name: t.names[item.seat] });
  return mine ? gettext("Your hand") : fmt(gettext("%(name)s's hand"), { name: t.names[item.seat] });
}

/** The show of one hand (`hand`: a hand_over's data / state.last_hand), hand by hand. */
export function showBlock(t, hand, compact) {
  const box = el("div", "crib-show" + (compact ? " compact" : ""));
  (hand.shows || []).forEach(function (item) {
    const row = el("section", "show-item show-" + item.what);
    row.dataset.what = item.what;
    const head = el("div", "show-head");
    head.appendChild(el("span", "peg-swatch peg-" + item.seat));
    head.appendChild(el("span", "show-who", showTitle(t, item)));
    const pts = el("span", "show-points", fmt(ngettext("%(n)s point", "%(n)s points", item.points), { n: item.points }));
    head.appendChild(pts);
    row.appendChild(head);
    const cards = el("div", "show-cards");
    item.cards.forEach(function (c) { cards.appendChild(cardFace(c, compact ? "mini" : "small")); });
    cards.appendChild(el("span", "show-plus", "+"));
    cards.appendChild(cardFace(item.starter, (compact ? "mini" : "small") + " starter"));
    row.appendChild(cards);
    const words = el("p", "show-words", spokenShow(item.breakdown));
    words.lang = document.documentElement.lang;
    row.appendChild(words);
    const sum = breakdownSummary(item.breakdown);
    if (sum && !compact) row.appendChild(el("p", "show-sum muted small", sum));
    if (item.scored < item.points) {
      row.appendChild(el("p", "show-capped small", fmt(gettext("Only %(n)s counted: that reached the target."), { n: item.scored })));
    }
    box.appendChild(row);
  });
  if (!hand.complete) {
    box.appendChild(el("p", "show-stopped muted small", gettext("The game ended there: nothing more was played or scored.")));
  }
  return box;
}

function handSummary(t, hand) {
  const bits = [];
  if (hand.his_heels) {
    bits.push(fmt(gettext("His heels: %(name)s +2"), { name: t.names[hand.dealer] }));
  }
  bits.push(fmt(gettext("Pegging: %(a)s %(pa)s, %(b)s %(pb)s"),
    { a: t.names[0], pa: hand.pegged[0], b: t.names[1], pb: hand.pegged[1] }));
  return bits.join(" · ");
}

function renderLastHand(t, st) {
  const card = part(t, "last-hand-card");
  const hand = st.last_hand;
  if (!hand || !(hand.shows || []).length) { card.hidden = true; return; }
  card.hidden = false;
  part(t, "last-title").textContent = fmt(gettext("Hand %(n)s: the show"), { n: hand.round });
  const box = part(t, "last-hand");
  box.textContent = "";
  box.appendChild(el("p", "muted small", handSummary(t, hand)));
  box.appendChild(showBlock(t, hand, true));
}

/** The show (and, at the end, the result) over the table, until the player closes it. */
function renderOverlay(t, st) {
  const ov = part(t, "show-overlay");
  const hand = t.overlayHand;
  if (!hand) { ov.hidden = true; ov.textContent = ""; return; }
  // Drawn again only when it shows something else: the show may come in our ack, before the
  // update that says the game is over or that the next hand's clock runs.
  const clockFor = st.status === "playing" && t.canLayAway(st) && st.lay_away_deadline;
  const key = t.overlayKey + ":" + st.status + ":" + (clockFor || "");
  if (ov.dataset.for === key && !ov.hidden) return;
  ov.dataset.for = key;
  ov.hidden = false;
  ov.textContent = "";
  const over = st.status === "finished";
  const panel = dialogPanel(t, "crib-show-panel", "show-title",
    over ? gettext("Game over") : fmt(gettext("Hand %(n)s: the show"), { n: hand.round }));
  if (over) {
    const w = st.winners[0];
    panel.appendChild(el("p", "winners", w === t.you ? "★ " + gettext("You win!") + " ★"
      : fmt(gettext("%(name)s wins."), { name: t.names[w] })));
    const labels = { skunk: gettext("A skunk: the loser finished on 90 or fewer."),
      double_skunk: gettext("A double skunk: the loser finished on 60 or fewer.") };
    const scoreLine = fmt(gettext("Final score: %(a)s %(pa)s, %(b)s %(pb)s."),
      { a: t.names[0], pa: st.scores[0], b: t.names[1], pb: st.scores[1] });
    panel.appendChild(el("p", "final-score", scoreLine));
    if (labels[st.result]) panel.appendChild(el("p", "muted", labels[st.result]));
  }
  panel.appendChild(el("p", "muted small", handSummary(t, hand)));
  if ((hand.shows || []).length) panel.appendChild(showBlock(t, hand, false));
  if (!over && clockFor) {
    // The next hand is already dealt (C28) and its clock runs while the show is read.
    const clock = el("p", "show-clock", gettext("The next hand is dealt: your time to lay away is running —"));
    const c = el("span", "countdown");
    c.dataset.until = String(st.lay_away_deadline);
    clock.appendChild(c);
    panel.appendChild(clock);
  }
  if (t.replay) { ov.appendChild(panel); return; }  // beside the table: nothing to close
  panel.appendChild(dialogActions(t, over, button(over ? gettext("Show the table") : gettext("Continue"),
    over ? "secondary" : "", "show-close", function () { t.closeShow(); })));
  ov.appendChild(panel);
  const focus = panel.querySelector("[data-key=show-close]");
  if (focus) focus.focus({ preventScroll: true });
}

export function renderAll(t, st, baseTitle) {
  drawTable(t, st, baseTitle, {
    felt: function () {
      const bottom = t.you === null ? 0 : t.you;
      renderSeat(t, st, 1 - bottom, part(t, "seat-top"));
      renderSeat(t, st, bottom, part(t, "seat-bottom"));
      part(t, "felt").classList.toggle("spectating", t.you === null);
      paintBoard(t.board, st.pegs, [t.names[0], t.names[1]]);
      renderCentre(t, st);
      renderLastHand(t, st);
    },
    actions: renderActions, status: renderStatus, scores: renderScores, dialog: renderOverlay,
  });
}

/* --- Callouts: why points were scored, said on the table as it happens --------------------
 * The log and the peg board's "+2" say that points were scored; a callout over the felt says
 * why, as players at a real table say it: "fifteen for 2", "thirty-one for 2", "go for 1",
 * "his heels for 2", and a show counted item by item ("fifteen two", "fifteen four", "a pair is
 * six"). One at a time, in order, each long enough to read; a long queue is read faster. */

/** The callouts of one event: [{seat, text, kind}] (none for an event that scores nothing). */
export function calloutsOf(ev) {
  const d = ev.data || {};
  switch (ev.type) {
    case "play":
      return d.points ? pegPhrases(d.items).map(function (text) { return { seat: d.seat, text: text, kind: "play" }; }) : [];
    case "last_card": return [{ seat: d.seat, text: goFor(d.points || 1), kind: "go" }];
    case "his_heels": return [{ seat: d.seat, text: hisHeelsFor(d.points || 2), kind: "heels" }];
    case "show":
      return showPhrases(d.breakdown).map(function (text) { return { seat: d.seat, text: text, kind: "show" }; });
    default: return [];
  }
}

const SHOWN_MS = 1700;
const QUICK_MS = 700;

function nextCallout(t) {
  const box = part(t, "callout");
  const q = t.callouts;
  if (!box || !q || !q.length) { if (box) box.hidden = true; t.calloutBusy = false; return; }
  t.calloutBusy = true;
  const c = q.shift();
  box.textContent = "";
  box.className = "crib-callout peg-" + c.seat + " callout-" + c.kind;
  box.dataset.seat = String(c.seat);
  box.appendChild(el("span", "callout-who", c.seat === t.you ? gettext("You") : (t.names[c.seat] || "")));
  box.appendChild(el("span", "callout-what", c.text));
  box.hidden = false;
  box.dataset.count = String((Number(box.dataset.count) || 0) + 1);
  // Restart the pop-in for each callout (the same element is reused).
  box.classList.remove("pop");
  void box.offsetWidth;
  box.classList.add("pop");
  setTimeout(function () { nextCallout(t); }, q.length > 2 ? QUICK_MS : SHOWN_MS);
}

/** Queue the callouts of `events` (live events only: a reload does not say them again). */
export function announce(t, events) {
  const fresh = [];
  (events || []).forEach(function (ev) { fresh.push.apply(fresh, calloutsOf(ev)); });
  if (!fresh.length) return;
  t.callouts = (t.callouts || []).concat(fresh);
  if (!t.calloutBusy) nextCallout(t);
}
