/* Triple Crown's live table: the entry module templates/games/table.html loads for kind
 * "triple_crown".
 *
 * The controller: it holds what the server sent (the redacted state: your own hand, your own
 * role and memo in `you`, everything public) plus what only this page knows for a moment (the
 * lifted card, a half-made declaration, the last trick of the previous hand, the reveal being
 * shown), decides what the player may do from `you.can` / `you.legal` -- never from its own
 * reading of the rules -- and asks view.js to draw it. The protocol is the shared client
 * (static/js/table/).
 */
import { connect } from "../../table/connection.js";
import { onTick } from "../../table/clock.js";
import { bootData } from "../../table/dom.js";
import { fmt, gettext } from "../../table/i18n.js";
import { TableLog } from "../../table/log.js";
import { removedNotice } from "../../table/notice.js";
import { setPresence } from "../../table/presence.js";
import { mountSoundToggle, play } from "../../table/sound.js";
import { toast } from "../../table/toast.js";
import { mountTableTools } from "../../table/tools.js";
import { describer } from "./describe.js";
import { renderAll } from "./view.js";

const ERROR_WORDS = {
  not_your_turn: gettext("It is not your turn."),
  must_follow: gettext("You must follow suit."),
  not_in_hand: gettext("That card is not in your hand."),
  awaiting_declaration: gettext("Double Stakes has not named trumps yet."),
  no_declaration: gettext("There is nothing to declare now."),
  game_finished: gettext("The game is over."),
  game_over: gettext("The game is over."),
  not_seated: gettext("You have no seat at this game."),
  rate_limited: gettext("Slow down a little."),
  stale_version: gettext("The table changed just before your move — please try again."),
  not_connected: gettext("Not connected — the move was not sent."),
};

const TIMEOUT_MS = 6000; // how long a seat that ran out of time is marked

class TripleCrownTable {
  constructor(boot) {
    this.boot = boot;
    this.you = boot.you === undefined ? null : boot.you;
    this.names = {};
    boot.seats.forEach((s) => { this.names[s.seat] = s.name; });
    this.payload = null;
    this.lifted = null;         // the card lifted by a first tap
    this.sentFor = null;        // the move (moveKey) a card or declaration was sent for
    this.pick = { trumps: null, memo: null };  // the declaration being made
    this.pickRound = null;
    this.lastTrick = null;      // the last trick_won seen live: {round, no, leader, cards, winner}
    this.revealResult = null;   // the hand result the overlay shows (null: closed)
    this.revealSeen = {};       // round -> closed by the player
    this.freshCard = null;
    this.timeouts = {};
    this.lastSeq = 0;
    this.dealing = false;
    this.lastRenderKey = "";
    this.baseTitle = document.title;
    this.cue = "";
    this.log = new TableLog(document.getElementById("log"), describer({
      you: this.you, name: (s) => this.nameOf(s),
    }));
  }

  // --- facts (all from the server's view) --------------------------------------------------
  state() { return this.payload && this.payload.state; }
  nameOf(seat) {
    if (seat === null || seat === undefined) return "";
    if (seat === this.you) return gettext("You");
    return this.names[seat] || fmt(gettext("Seat %(n)s"), { n: seat + 1 });
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
  timedOut(seat) { return (this.timeouts[seat] || 0) > Date.now(); }
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

  refused(f) {
    if (!f) return;
    this.sentFor = null;
    this.render();
    toast(ERROR_WORDS[f.code] || f.detail || f.code);
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

  // --- what arrives ------------------------------------------------------------------------
  handleEvents(events, live) {
    const fresh = [];
    events.forEach((ev) => {
      if (typeof ev.seq === "number") {
        if (ev.seq <= this.lastSeq) return;
        this.lastSeq = ev.seq;
      }
      fresh.push(ev);
      const d = ev.data || {};
      if (ev.type === "card_played") {
        if (live) this.freshCard = d.card;
        if (d.timeout) this.timeouts[d.seat] = Date.now() + TIMEOUT_MS;
        if (live && d.next_seat === this.you && d.next_seat !== null) this.cue = "turn";
      } else if (ev.type === "declared") {
        if (d.timeout) this.timeouts[d.seat] = Date.now() + TIMEOUT_MS;
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
        if (live) this.dealing = true;
        if (live && d.double_stakes !== null && d.double_stakes !== undefined) {
          // T8: the announcement is public and made at once.
          toast(d.double_stakes === this.you ? gettext("You hold A♠ and 2♦: you are Double Stakes!")
            : fmt(gettext("%(name)s holds A♠ and 2♦: Double Stakes!"), { name: this.nameIn(d.double_stakes) }), 6000);
        }
        if (live && (d.leader === this.you && d.double_stakes === null || d.double_stakes === this.you)) this.cue = this.cue || "turn";
      }
    });
    this.log.add(fresh, false);
  }

  setPayload(payload, events, live) {
    const oldStatus = this.payload ? this.payload.status : this.boot.status;
    if (events.some((ev) => ev.type === "seat_kicked" && ev.data && ev.data.user_id === this.boot.user_id)) {
      removedNotice(gettext("The host removed you from this game."));
    }
    this.payload = payload;
    if (payload.status !== oldStatus && oldStatus === "lobby") { location.reload(); return; }
    this.handleEvents(events, live);
    const st = this.state();
    if (!st) return;
    if (st && (payload.status === "finished" || payload.status === "abandoned") && st.status === "playing") {
      // Ended from outside the rules (an admin's "end now", or abandoned): no more moves.
      st.status = payload.status;
      st.turn = null;
      if (st.you) { st.you.can = []; st.you.legal = []; }
    }
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
    this.render();
  }

  /** What, besides a new version, calls for a redraw: a time-out mark expiring. */
  renderKey(st) {
    return [this.conn ? this.conn.version : 0, Object.keys(this.timeouts).filter((s) => this.timedOut(Number(s))).length].join("|");
  }

  render() {
    const st = this.state();
    if (!st) return;
    const focusKey = document.activeElement && document.activeElement.dataset ? document.activeElement.dataset.key : null;
    this.lastRenderKey = this.renderKey(st);
    renderAll(this, st, this.baseTitle);
    this.dealing = false;
    this.freshCard = null;
    if (this.cue) { play(this.cue); this.cue = ""; }
    if (focusKey) {
      const again = document.querySelector('#table-app [data-key="' + focusKey + '"]');
      if (again && !again.disabled) again.focus();
    }
  }

  /** Five times a second: countdowns, and a re-render when a time-out mark expires. */
  tick(now) {
    document.querySelectorAll("#table-app [data-until]").forEach((c) => {
      const left = parseInt(c.dataset.until, 10) - now;
      c.textContent = " " + Math.max(0, Math.ceil(left / 1000)) + gettext("s");
      c.classList.toggle("urgent", left < 5000);
    });
    const st = this.state();
    if (st && this.renderKey(st) !== this.lastRenderKey) this.render();
  }

  start() {
    document.addEventListener("keydown", (e) => {
      if (e.key !== "Escape") return;
      if (this.revealResult) this.closeReveal();
      else if (this.lifted) this.lift(null);
    });
    const tricks = document.getElementById("tricks-dialog");
    document.getElementById("tc-tricks-button").addEventListener("click", () => {
      if (tricks.showModal) tricks.showModal(); else tricks.setAttribute("open", "");
    });
    mountSoundToggle(document.getElementById("sound-toggle"));
    const tools = mountTableTools(this.boot);  // the rules dialog ("?"), chat, "Leave", "Play again"
    this.rematch = (row) => tools.rematchInto(row);
    onTick((now) => this.tick(now));
    this.conn = connect({
      gameId: this.boot.game,
      wsPath: this.boot.ws,
      onSnapshot: (f) => this.setPayload(f.state, [], false),
      onUpdate: (f) => { tools.follow(f.events); this.setPayload(f.state, f.events || [], true); },
      onAck: (f) => { this.handleEvents(f.events || [], true); this.render(); },
      onError: (f) => this.refused(f),
      onPresence: (f) => setPresence(f ? f.seats : {}),
      onClosed: (code) => {
        if (code === 4404 && this.you !== null) removedNotice(gettext("You no longer have a seat at this game."));
      },
      on: { chat: tools.onChat },
    });
    tools.attach(this.conn);
    // The log of the game so far, rebuilt from its stored events in their public form.
    this.log.loadHistory(this.boot.game, Math.max(0, (this.boot.last_seq || 0) - 400), 2);
  }
}

const boot = bootData();
if (boot && document.getElementById("table-app")) {
  new TripleCrownTable(boot).start();
}
