/* Triple Crown's live table: the entry module templates/games/table.html loads for kind
 * "triple_crown".
 *
 * The controller: it holds what the server sent (the redacted state: your own hand, your own
 * role and memo in `you`, everything public) plus what only this page knows for a moment (the
 * lifted card, a half-made declaration, the last trick of the previous hand, the reveal being
 * shown), decides what the player may do from `you.can` / `you.legal` -- never from its own
 * reading of the rules -- and asks view.js to draw it. The page's lifecycle is the shared
 * controller's (static/js/table/controller.js); this module supplies Triple Crown's hooks.
 */
import { startTable, TableController } from "../../table/controller.js";
import { fmt, gettext } from "../../table/i18n.js";
import { toast } from "../../table/toast.js";
import { describer } from "./describe.js";
import { renderAll } from "./view.js";

const TIMEOUT_MS = 6000; // how long a seat that ran out of time is marked

class TripleCrownTable extends TableController {
  constructor(boot) {
    super(boot);
    this.lifted = null;         // the card lifted by a first tap
    this.sentFor = null;        // the move (moveKey) a card or declaration was sent for
    this.pick = { trumps: null, memo: null };  // the declaration being made
    this.pickRound = null;
    this.lastTrick = null;      // the last trick_won seen live: {round, no, leader, cards, winner}
    this.revealResult = null;   // the hand result the overlay shows (null: closed)
    this.revealSeen = {};       // round -> closed by the player
    this.freshCard = null;
  }

  describer() { return describer({ you: this.you, name: (s) => this.nameOf(s) }); }

  // --- facts (all from the server's view) --------------------------------------------------
  nameOf(seat) {
    if (seat === null || seat === undefined) return "";
    return super.nameOf(seat);
  }
  /** A seat's name inside a third-person sentence: the player's own name even for the viewer
   *  ("You" is only ever a label on its own, so no verb has to agree with it). */
  nameIn(seat) {
    if (seat === null || seat === undefined) return "";
    return this.names[seat] || fmt(gettext("Seat %(n)s"), { n: seat + 1 });
  }
  can(st, what) { return !!st && !!st.you && (st.you.can || []).indexOf(what) >= 0; }
  canPlay(st) {
    return this.can(st, "play") && st.status === "playing" && this.sentFor !== this.moveKey(st);
  }
  canDeclare(st) {
    return this.can(st, "declare") && st.status === "playing" && this.sentFor !== this.moveKey(st);
  }
  legal(st) { return (st && st.you && st.you.legal) || []; }
  moveKey(st) {
    return st ? [st.round, st.phase, st.tricks.length, st.trick.length, st.turn].join(":") : "";
  }
  /** The last trick of the previous hand, while the new hand has none yet (T26: it is gone
   *  from the state the moment the hand ends; the live event still shows it). */
  lastTrickOf(st) {
    const lt = this.lastTrick;
    if (!lt || st.tricks.length || st.trick.length || lt.round !== st.round - 1) return null;
    return lt;
  }

  // --- moves -------------------------------------------------------------------------------
  /** Send a move. Until the table moves on (or the move is refused) the hand stays put, so a
   *  quick second tap cannot send a second card. */
  act(action) {
    const key = this.moveKey(this.state());
    const still = () => this.moveKey(this.state()) === key;
    this.sentFor = key;
    this.conn.act(action, { retries: 1, still: still }).catch((f) => this.refused(f));
  }

  refusedGame() {
    this.sentFor = null;
    this.render();
  }

  lift(card) { this.lifted = card; this.render(); }

  /** First tap lifts a legal card, a second tap on it plays it; a tap on another legal card
   *  lifts that one instead. */
  tapCard(card) {
    const st = this.state();
    if (!this.canPlay(st) || this.legal(st).indexOf(card) < 0) return;
    if (this.lifted !== card) { this.lift(card); return; }
    this.lifted = null;
    this.act({ type: "play", card: card });
    this.render();
  }

  choose(what, value) {
    this.pick[what] = value;
    this.render();
  }

  declare() {
    const st = this.state();
    if (!this.canDeclare(st) || !this.pick.trumps || !this.pick.memo) return;
    this.act({ type: "declare", trumps: this.pick.trumps, memo: this.pick.memo });
  }

  showReveal(result) { this.revealResult = result; this.render(); }

  closeReveal() {
    if (this.revealResult) this.revealSeen[this.revealResult.round] = true;
    this.revealResult = null;
    this.render();
  }

  onEscape() {
    if (this.revealResult) this.closeReveal();
    else if (this.lifted) this.lift(null);
  }

  // --- what arrives ------------------------------------------------------------------------
  event(ev, d, live) {
    if (ev.type === "card_played") {
      if (live) this.freshCard = d.card;
      if (d.timeout) this.markTimeout(d.seat, TIMEOUT_MS);
      if (live && d.next_seat === this.you && d.next_seat !== null) this.cue = "turn";
    } else if (ev.type === "declared") {
      if (d.timeout) this.markTimeout(d.seat, TIMEOUT_MS);
      if (live && d.next_seat === this.you) this.cue = "turn";
    } else if (ev.type === "trick_won") {
      this.lastTrick = {
        round: this.state() ? this.state().round : null, no: d.trick, winner: d.winner,
        leader: d.cards[0][0], cards: d.cards.map((c) => ({ seat: c[0], card: c[1] })),
      };
      if (live && d.next_seat === this.you && d.next_seat !== null) this.cue = "turn";
    } else if (ev.type === "hand_over") {
      if (this.lastTrick) this.lastTrick.round = d.round;
      if (live) { this.revealResult = d; this.cue = "alert"; }
    } else if (ev.type === "round_dealt") {
      if (live && d.double_stakes !== null && d.double_stakes !== undefined) {
        // T8: the announcement is public and made at once.
        toast(d.double_stakes === this.you ? gettext("You hold A♠ and 2♦: you are Double Stakes!")
          : fmt(gettext("%(name)s holds A♠ and 2♦: Double Stakes!"), { name: this.nameIn(d.double_stakes) }), 6000);
      }
      if (live && (d.leader === this.you && d.double_stakes === null || d.double_stakes === this.you)) this.cue = this.cue || "turn";
    }
  }

  afterEvents(st, payload, live) {
    if (this.pickRound !== st.round) { this.pick = { trumps: null, memo: null }; this.pickRound = st.round; }
    if (this.lifted && this.legal(st).indexOf(this.lifted) < 0) this.lifted = null;
    if (!this.revealResult) {
      // A reload: the result of the game's last hand, or of the hand that just ended if
      // nothing of the new one has happened yet (and the player has not closed it).
      const last = st.last_hand;
      const justEnded = last && !st.tricks.length && !st.trick.length && last.round === st.round - 1;
      const final = st.status === "finished" && last;
      if ((justEnded || final) && !this.revealSeen[last.round] && !live) this.revealResult = last;
    }
    if (st.status === "finished" && st.last_hand && live && !this.revealSeen[st.last_hand.round]) {
      this.revealResult = st.last_hand;
    }
  }

  draw(st) { renderAll(this, st, this.baseTitle); }

  afterDraw() { this.freshCard = null; }

  mountGame() {
    const tricks = document.getElementById("tricks-dialog");
    document.getElementById("tc-tricks-button").addEventListener("click", () => {
      if (tricks.showModal) tricks.showModal(); else tricks.setAttribute("open", "");
    });
  }
}

TripleCrownTable.WORDS = {
  not_your_turn: gettext("It is not your turn."),
  must_follow: gettext("You must follow suit."),
  not_in_hand: gettext("That card is not in your hand."),
  awaiting_declaration: gettext("Double Stakes has not named trumps yet."),
  no_declaration: gettext("There is nothing to declare now."),
};

startTable(TripleCrownTable);
