/* Cribbage's live table: the entry module templates/games/table.html loads for kind
 * "cribbage".
 *
 * The controller: it holds what the server sent (the redacted state, docs/ENGINE.md
 * "Cribbage's engine") plus what only this page knows for a moment (the two cards being chosen
 * for the crib, the count that just ended, the show being looked at), decides from the state
 * what the player may do, and asks view.js to draw it. The page's lifecycle is the shared
 * controller's (static/js/table/controller.js); this module supplies Cribbage's hooks.
 *
 * The server does everything but the two moves (C26): the cut, go, the counts, the show and
 * the next deal arrive as events. A hand's show is followed at once by the next deal (C28), so
 * the show is put over the table from its `hand_over` event and stays until the player closes
 * it; the side panel keeps the last show (state.last_hand), so a reload does not lose it.
 */
import { startTable, TableController } from "../../table/controller.js";
import { fmt, gettext } from "../../table/i18n.js";
import { buildBoard } from "./board.js";
import { describer } from "./describe.js";
import { announce, renderAll } from "./view.js";

const TIMEOUT_MS = 6000;  // how long a seat whose clock ran out is marked

class CribbageTable extends TableController {
  constructor(boot) {
    super(boot);
    this.selected = [];       // the cards chosen for the crib (lay-away), at most two
    this.selectedRound = null;
    this.sending = false;     // a move is on its way: no second one until the table has it
    this.awaitVersion = null; // the version our last move made, until the table reaches it
    this.unlockTimer = null;
    this.lastCount = null;    // {round, seq: [{seat, card}], count}: the count that just ended
    this.cardSeat = {};       // card -> seat that played it (this hand)
    this.overlayHand = null;  // the show (a hand_over's data) put over the table
    this.overlayKey = "";
    this.closedResult = false;
    this.justPlayed = null;
    this.starterNew = false;
  }

  setBoot(boot) {
    super.setBoot(boot);
    [0, 1].forEach((s) => { if (!this.names[s]) this.names[s] = fmt(gettext("Seat %(n)s"), { n: s + 1 }); });
  }

  describer() {
    return describer({ you: this.you, name: (s) => this.nameOf(s), seatName: (s) => this.names[s] });
  }

  // --- facts -----------------------------------------------------------------------------
  nameOf(seat) {
    if (seat === this.you) return gettext("you");
    return super.nameOf(seat);
  }
  can(st, what) { return !!st && st.status === "playing" && ((st.you && st.you.can) || []).indexOf(what) >= 0; }
  canLayAway(st) { return this.you !== null && this.can(st, "lay_away"); }
  canPlay(st) { return this.you !== null && this.can(st, "play"); }

  // --- actions ---------------------------------------------------------------------------
  toggle(card) {
    const i = this.selected.indexOf(card);
    if (i >= 0) this.selected.splice(i, 1);
    else {
      this.selected.push(card);
      if (this.selected.length > 2) this.selected.shift();  // the newest two stay chosen
    }
    this.render();
  }

  layAway() {
    const st = this.state();
    if (!this.canLayAway(st) || this.selected.length !== 2) return;
    this.send({ type: "lay_away", cards: this.selected.slice() }, () => this.canLayAway(this.state()));
  }

  play(card) {
    const st = this.state();
    if (!this.canPlay(st) || (st.you.playable || []).indexOf(card) < 0) return;
    const move = st.turn.move;
    const round = st.round;
    this.send({ type: "play", card: card }, () => {
      const s = this.state();
      return this.canPlay(s) && s.round === round && s.turn.move === move;
    });
  }

  /** Send a move; `still()` says whether a retry (after a stale refusal) still means it.
   *  The hand stays locked until the table has caught up with the move's version: the ack
   *  can arrive before the update that carries the new state, and a tap on the old hand in
   *  between would be a move decided on a table that is already gone. */
  send(action, still) {
    if (this.sending) return;
    this.sending = true;
    this.render();
    this.conn.act(action, { retries: 1, still: still }).then((ack) => {
      this.awaitVersion = ack.version;
      // A lost update is caught up by the client's resync; never leave the hand locked.
      clearTimeout(this.unlockTimer);
      this.unlockTimer = setTimeout(() => { this.awaitVersion = null; this.unlock(); }, 4000);
      this.unlockIfCaughtUp();
    }, (f) => {
      this.awaitVersion = null;
      this.refused(f);
      this.unlock();
    });
  }

  unlockIfCaughtUp() {
    const v = this.payload ? this.payload.version : -1;
    if (this.awaitVersion !== null && v >= this.awaitVersion) {
      this.awaitVersion = null;
      this.unlock();
    }
  }

  unlock() {
    clearTimeout(this.unlockTimer);
    if (!this.sending) return;
    this.sending = false;
    this.render();
  }

  closeShow() {
    const st = this.state();
    if (st && st.status === "finished") this.closedResult = true;
    this.overlayHand = null;
    this.render();
    const focus = document.querySelector("#seat-bottom button.pickable, [data-key=lay-away], [data-key=show-result]");
    if (focus) focus.focus();
  }

  openResult() {
    const st = this.state();
    if (!st || !st.last_hand) return;
    this.overlayHand = st.last_hand;
    this.overlayKey = "result:" + st.round + ":" + Date.now();
    this.render();
  }

  onEscape() { if (this.overlayHand) this.closeShow(); }

  // --- what arrives ----------------------------------------------------------------------
  event(ev, d, live) {
    if (ev.type === "play") {
      this.cardSeat[d.card] = d.seat;
      this.lastPlay = { round: d.round, sequence: d.sequence || [], count: d.count };
      if (live) this.justPlayed = d.card;
      if (d.timeout) this.markTimeout(d.seat, TIMEOUT_MS);
    } else if (ev.type === "count_over") {
      if (this.lastPlay && this.lastPlay.round === d.round && d.next_lead !== null) {
        this.lastCount = {
          round: d.round,
          count: d.count,
          seq: this.lastPlay.sequence.map((c) => ({ card: c, seat: this.cardSeat[c] })),
        };
      }
    } else if (ev.type === "laid_away") {
      if (d.timeout) this.markTimeout(d.seat, TIMEOUT_MS);
    } else if (ev.type === "starter_cut") {
      if (live) this.starterNew = true;
    } else if (ev.type === "round_dealt") {
      this.lastCount = null;
      this.cardSeat = {};
      this.selected = [];
      if (live) this.cue = "turn";
    } else if (ev.type === "hand_over" && live && (d.shows || []).length) {
      this.overlayHand = d;
      this.overlayKey = "hand:" + d.round;
    } else if (ev.type === "turn" && live && d.seat === this.you) {
      this.cue = "turn";
    }
    if (live) announce(this, [ev]);  // "fifteen for 2", "go for 1"...: said on the felt as it happens
  }

  beforeEvents(st) {
    [0, 1].forEach((s) => (st.played[s] || []).forEach((c) => { this.cardSeat[c] = s; }));
    if (st.sequence.length) this.lastCount = null;
    if (st.round !== this.selectedRound || !this.canLayAway(st)) {
      this.selected = [];
      this.selectedRound = st.round;
    }
    this.selected = this.selected.filter((c) => st.you && st.you.hand.indexOf(c) >= 0);
  }

  afterEvents(st, payload) {
    if (this.awaitVersion !== null && payload.version >= this.awaitVersion) {
      this.awaitVersion = null;
      clearTimeout(this.unlockTimer);
      this.sending = false;  // the table has our move: the hand is free again (rendered next)
    }
    if (st.status === "finished" && !this.closedResult && !this.overlayHand && st.last_hand) {
      this.overlayHand = st.last_hand;
      this.overlayKey = "result:" + st.round;
    }
  }

  draw(st) { renderAll(this, st, this.baseTitle); }

  afterDraw() {
    this.starterNew = false;
    this.justPlayed = null;
  }

  mountGame() {
    this.board = buildBoard(document.getElementById("board"), () => this.render());
    document.getElementById("show-overlay").addEventListener("click", (e) => {
      if (e.target.id === "show-overlay") this.closeShow();  // a tap beside the panel
    });
  }
}

CribbageTable.WORDS = {
  not_your_turn: gettext("It is not your turn."),
  wrong_phase: gettext("That move is not possible now."),
  already_laid_away: gettext("You have already laid away."),
  not_in_hand: gettext("That card is not in your hand."),
  over_thirty_one: gettext("That card would take the count past 31."),
};

startTable(CribbageTable);
