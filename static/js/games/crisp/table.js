/* Crisp's live table: the entry module templates/games/table.html loads for kind "crisp".
 *
 * The controller: it holds what the server sent (the redacted state) plus what only this page
 * knows for a moment (the private looks being shown, the marks of what just moved, the Queen
 * being aimed), decides what the player may do from the state and the server's clock, and
 * asks view.js to draw it. The page's lifecycle (connection, lobby, payloads, offline, "I'm
 * back", ticking, focus) is the shared controller's (static/js/table/controller.js); this
 * module supplies Crisp's hooks.
 *
 * Turn-based games (rules/crisp.md R28): no crisp window and no memorise period; the opening
 * look is a button the player presses (until their first draw), and the turn's last step is
 * "Call crisp?" -- two buttons, answered with `call` or `pass`. The clock reads in hours/days.
 *
 * Private looks (opening look, Jack, Queen receipt) arrive once, in an event. They are shown for
 * a short time and then dropped from memory (R3/R4): nothing is written to storage, and the
 * redacted state never carries them again.
 */
import { serverNow } from "../../table/clock.js";
import { startTable, TableController } from "../../table/controller.js";
import { fmt, gettext } from "../../table/i18n.js";
import { record } from "../../table/trace.js";
import { cardFace, PLACE_WORD } from "./cards.js";
import { describer } from "./describe.js";
import { renderAll } from "./view.js";

const MARK_MS = 3500;    // how long a Queen's two places stay highlighted
const TIMEOUT_MS = 6000; // how long a seat that ran out of time is marked

class CrispTable extends TableController {
  constructor(boot) {
    super(boot);
    this.peeks = {};      // "seat:place" -> {card, until, fresh}
    this.marks = {};      // "seat:place" -> {until, fresh, from}
    this.mode = null;     // null | {kind: "queen", place?}
    this.revealShownFor = null;
    this.lookSentRound = null;
    this.lastPile = "";
    this.lastHeld = "";
  }

  describer() {
    return describer({ you: this.you, name: (s) => this.nameOf(s), turnBased: () => this.turnBased(this.state()) });
  }

  // --- facts -----------------------------------------------------------------------------
  /** R28: a turn-based game (the host's pace). */
  turnBased(st) { return !!st && !!st.settings && st.settings.pace === "turn_based"; }
  /** R28: my turn's last step, "Call crisp?", is asked now. */
  askedToCall(st) { return this.myTurn(st) && st.turn.phase === "call"; }
  myTurn(st) { return !!st.turn && st.turn.seat === this.you && st.status === "playing" && !st.reveal; }
  canDraw(st) {
    if (!this.myTurn(st)) return false;
    const tn = st.turn;
    return tn.phase === "draw" || (tn.phase === "start" && this.now() >= tn.start_at);
  }
  canPile(st) { return this.canDraw(st) && st.settings.pile_draw && st.pile.length > 0; }
  holding(st) { return this.myTurn(st) && st.turn.phase === "play" && !!st.held && st.held.seat === this.you; }
  myWindow(st) {
    if (this.you === null || st.caller !== null || st.reveal || st.status !== "playing") return null;
    for (const w of st.windows) if (w.seat === this.you && this.now() <= w.closes_at) return w;
    return null;
  }
  canLook(st) {
    return !!st && st.status === "playing" && !st.reveal && ((st.you && st.you.can) || []).indexOf("look") >= 0;
  }
  /** Which draw of which turn the table is at. A move refused as stale is sent again only if
   *  this is unchanged (the usual case: the start delay's timer moved the version just before
   *  the player's draw arrived). */
  turnKey(st) {
    return st && st.turn ? st.round + ":" + st.turn.no + ":" + st.turn.draw_no : "";
  }
  peekAt(seat, place) {
    const pk = this.peeks[seat + ":" + place];
    if (pk && pk.until <= this.now()) { delete this.peeks[seat + ":" + place]; return null; }
    return pk || null;
  }
  peekUntil() {
    let u = 0;
    Object.keys(this.peeks).forEach((k) => { u = Math.max(u, this.peeks[k].until); });
    return u > this.now() ? u : 0;
  }
  markAt(seat, place) {
    const m = this.marks[seat + ":" + place];
    if (m && m.until <= this.now()) { delete this.marks[seat + ":" + place]; return null; }
    return m || null;
  }

  // --- actions ---------------------------------------------------------------------------
  act(action) {
    const key = this.turnKey(this.state());
    const still = () => {
      const st = this.state();
      if (!st) return false;
      if (action.type === "call" && !this.turnBased(st)) return !!this.myWindow(st);
      return this.turnKey(st) === key;
    };
    this.conn.act(action, { retries: 1, still: still }).catch((f) => this.refused(f));
  }

  /** R3: the opening look is taken as soon as the page has the deal -- before the table is
   *  even on the page when the game has just started -- and retried until it is seen or no
   *  longer possible. It is sent without a version: looks never conflict (services.game_act). */
  prepare(st) {
    // R28: in a turn-based game the player takes the look when they choose (a button).
    if (this.turnBased(st)) return;
    if (this.you === null || !this.canLook(st) || this.lookSentRound === st.round || !this.conn) return;
    const round = st.round;
    this.lookSentRound = round;
    this.asked = this.conn.act({ type: "look" }, {
      versioned: false,
      retries: 6,
      still: () => { const s = this.state(); return !!s && s.round === round && this.canLook(s); },
    }).catch((f) => {
      // Lost connection: try again once connected (the snapshot calls prepare).
      if (f && f.code === "not_connected") this.lookSentRound = null;
    });
    return this.asked;
  }

  /** R28: the player's own "Look at your two cards" (sent without a version, like the page's). */
  look() {
    const st = this.state();
    if (!st || !this.canLook(st) || !this.conn) return;
    const round = st.round;
    this.conn.act({ type: "look" }, {
      versioned: false,
      retries: 2,
      still: () => { const s = this.state(); return !!s && s.round === round && this.canLook(s); },
    }).catch((f) => this.refused(f));
  }

  /** The look is taken by the page itself: its refusals (already taken in another tab, or
   *  too late) are nothing to tell the player. */
  ignoredError(f) { return f.code === "already_looked" || f.code === "look_expired"; }

  setMode(mode) { this.mode = mode; this.render(); }
  onEscape() { if (this.mode) this.setMode(null); }

  pickSlot(seat, place) {
    if (this.mode && this.mode.kind === "queen") {
      if (!this.mode.place) { this.mode.place = place; this.render(); return; }
      const action = { type: "queen", place: this.mode.place, target_seat: seat, target_place: place };
      this.mode = null;
      this.act(action);
      this.render();
      return;
    }
    this.act({ type: "swap", place: place });
  }

  // --- what arrives ----------------------------------------------------------------------
  peek(seat, place, card, ms) {
    const st = this.state();
    this.peeks[seat + ":" + place] = { card: card, until: this.now() + ms, fresh: true, round: st ? st.round : null };
  }

  event(ev, d, live) {
    const st = this.state();
    const me = this.you;
    if (ev.type === "look" && d.seat === me && d.left) {
      // Shown until the first turn may start, and never less than a few seconds.
      // R28: a turn-based game has no memorise period; its look shows for the live default.
      const memo = (st && st.settings && !this.turnBased(st) && st.settings.memorise_ms) || 5000;
      const until = st && st.turn && st.turn.phase === "start" && st.turn.no === 1 ? st.turn.start_at - this.now() : 0;
      const ms = Math.max(until, Math.min(memo, 4000));
      this.peek(me, "left", d.left, ms);
      this.peek(me, "right", d.right, ms);
      record("look", { round: st ? st.round : null, until: this.now() + ms });
    } else if (ev.type === "jack" && d.seat === me && d.centre) {
      this.peek(me, "centre", d.centre, 3000);
    } else if (ev.type === "queen") {
      const until = this.now() + MARK_MS;
      // Both places that moved are marked for everyone; the receiver also reads where
      // their new card came from.
      this.marks[d.seat + ":" + d.place] = { until: until, fresh: true, from: null };
      this.marks[d.target_seat + ":" + d.target_place] = { until: until, fresh: true,
        from: d.target_seat === me ? fmt(gettext("from %(name)s's %(place)s"),
          { name: this.names[d.seat], place: PLACE_WORD[d.place] }) : null };
      if (d.seat === me && d.received) this.peek(me, d.place, d.received, 3000);
      if (d.target_seat === me && d.given) this.peek(me, d.target_place, d.given, 3000);
    } else if (ev.type === "timeout") {
      this.markTimeout(d.seat, TIMEOUT_MS);
    } else if (ev.type === "round_dealt") {
      this.dropPeeksBefore(d.round);
      this.marks = {};
    } else if (ev.type === "reveal") {
      this.peeks = {};
    } else if (ev.type === "rematch_offered") {
      this.revealShownFor = null;  // draw the results again, with "Join the rematch"
    } else if (ev.type === "player_left" && d.user_id === this.boot.user_id) {
      this.left = true;
    } else if (ev.type === "draw_ready" && d.seat === me && live) {
      this.cue = "turn";
    }
  }

  /** A new deal forgets the looks of the rounds before it -- not one of its own round, whose
   *  ack can arrive before the update that deals (the look is taken as soon as the state says
   *  the round is dealt). */
  dropPeeksBefore(round) {
    Object.keys(this.peeks).forEach((k) => {
      if (this.peeks[k].round !== round) delete this.peeks[k];
    });
  }

  beforeEvents(st) { this.hadWindow = !!this.myWindow(st); }

  afterEvents(st, payload, live) {
    if (this.mode && !this.holding(st)) this.mode = null;
    if (!this.hadWindow && this.myWindow(st) && live) this.cue = "window";
  }

  /** What, besides a new version, calls for a redraw on the tick: the start delay passing, a
   *  window closing, a look or a mark expiring. */
  redrawKey(st) {
    return [this.canDraw(st), this.canPile(st), !!this.myWindow(st), this.canLook(st),
      this.mode ? this.mode.kind + (this.mode.place || "") : "",
      this.live(this.peeks), this.live(this.marks)].join("|");
  }

  /** How many of `marks` ({key: {until}}) are still showing: when one expires, redraw. */
  live(marks) {
    const now = this.now();
    return Object.keys(marks).filter((k) => marks[k].until > now).length;
  }

  draw(st) {
    const pileKey = st.pile.length + ":" + (st.pile[st.pile.length - 1] || "");
    const heldKey = st.held ? st.held.seat + ":" + (st.held.card || "?") + ":" + st.turn.no + ":" + st.turn.draw_no : "";
    this.pileChanged = this.lastPile !== "" && pileKey !== this.lastPile;
    this.heldChanged = heldKey !== "" && heldKey !== this.lastHeld;
    this.lastPile = pileKey;
    this.lastHeld = heldKey;
    this.canDrawDrawn = this.canDraw(st);
    renderAll(this, st, this.baseTitle);
  }

  afterDraw() { this.pileChanged = this.heldChanged = false; }

  /** Your turn's draw became possible with time alone (the start delay): its sound. */
  tickGame() {
    const st = this.state();
    if (st && this.mounted && !this.canDrawDrawn && this.canDraw(st)) this.cue = this.cue || "turn";
  }

  mountGame() {
    document.getElementById("deck").addEventListener("click", () => {
      const st = this.state();
      if (st && this.canDraw(st)) this.act({ type: "draw", source: "deck" });
    });
    const dialog = document.getElementById("pile-dialog");
    const openPile = () => {
      const st = this.state();
      const all = document.getElementById("pile-all");
      all.textContent = "";
      if (!st || !st.pile.length) {
        const p = document.createElement("p");
        p.className = "muted";
        p.textContent = gettext("The discard pile is empty.");
        all.appendChild(p);
      } else {
        st.pile.forEach((c) => all.appendChild(cardFace(c, "small")));
      }
      if (dialog.showModal) dialog.showModal(); else dialog.setAttribute("open", "");
    };
    document.getElementById("pile").addEventListener("click", () => {
      const st = this.state();
      if (st && this.canPile(st)) this.act({ type: "draw", source: "pile" });
      else openPile();
    });
    document.getElementById("view-pile").addEventListener("click", openPile);
  }
}

CrispTable.WORDS = {
  not_your_turn: gettext("It is not your turn."),
  too_early: gettext("Not yet — wait for the countdown."),
  window_closed: gettext("Too late: your crisp window has closed."),
  no_window: gettext("You can call crisp only just after your own turn."),
  already_called: gettext("Someone has already called crisp this round."),
  final_turns: gettext("Nobody may call crisp during the final turns."),
  must_play_king: gettext("A King from the deck must be used."),
  must_swap: gettext("A card from the pile must be swapped in."),
  special_not_swappable: gettext("A Jack, Queen or King from the deck cannot be swapped in."),
  pile_empty: gettext("The discard pile is empty."),
  round_over: gettext("The round is over."),
  look_expired: gettext("Too late: your look ended with your first draw."),
};

startTable(CrispTable);
