/* Crisp's live table: the entry module templates/games/table.html loads for kind "crisp".
 *
 * The controller: it holds what the server sent (the redacted state) plus what only this page
 * knows for a moment (the private looks being shown, the marks of what just moved, the Queen
 * being aimed), decides what the player may do from the state and the server's clock, and
 * asks view.js to draw it. The protocol itself is the shared client (static/js/table/).
 *
 * Private looks (opening look, Jack, Queen receipt) arrive once, in an event. They are shown for
 * a short time and then dropped from memory (R3/R4): nothing is written to storage, and the
 * redacted state never carries them again.
 */
import { connect } from "../../table/connection.js";
import { onTick, paintCountdowns, serverNow } from "../../table/clock.js";
import { bootData } from "../../table/dom.js";
import { fmt, gettext } from "../../table/i18n.js";
import { TableLog } from "../../table/log.js";
import { removedNotice } from "../../table/notice.js";
import { setPresence } from "../../table/presence.js";
import { mountSoundToggle, play } from "../../table/sound.js";
import { toast } from "../../table/toast.js";
import { mountTableTools } from "../../table/tools.js";
import { cardFace, PLACE_WORD } from "./cards.js";
import { describer } from "./describe.js";
import { renderAll } from "./view.js";

const ERROR_WORDS = {
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
  game_finished: gettext("The game is over."),
  game_over: gettext("The game is over."),
  not_seated: gettext("You have no seat at this game."),
  rate_limited: gettext("Slow down a little."),
  stale_version: gettext("The table changed just before your move — please try again."),
  not_connected: gettext("Not connected — the action was not sent."),
};

const MARK_MS = 3500;    // how long a Queen's two places stay highlighted
const TIMEOUT_MS = 6000; // how long a seat that ran out of time is marked

class CrispTable {
  constructor(boot) {
    this.boot = boot;
    this.you = boot.you === undefined ? null : boot.you;
    this.names = {};
    boot.seats.forEach((s) => { this.names[s.seat] = s.name; });
    this.payload = null;
    this.peeks = {};      // "seat:place" -> {card, until, fresh}
    this.marks = {};      // "seat:place" -> {until, fresh, from}
    this.timeouts = {};   // seat -> until
    this.mode = null;     // null | {kind: "queen", place?}
    this.endedWinners = null;
    this.revealShownFor = null;
    this.lastSeq = 0;
    this.lookSentRound = null;
    this.lastRenderKey = "";
    this.lastPile = "";
    this.lastHeld = "";
    this.dealing = false;
    this.baseTitle = document.title;
    this.cue = "";
    this.log = new TableLog(document.getElementById("log"), describer({
      you: this.you, name: (s) => this.nameOf(s),
    }));
  }

  // --- facts -----------------------------------------------------------------------------
  now() { return serverNow(); }
  state() { return this.payload && this.payload.state; }
  nameOf(seat) {
    if (seat === this.you) return gettext("You");
    return this.names[seat] || fmt(gettext("Seat %(n)s"), { n: seat + 1 });
  }
  myTurn(st) { return !!st.turn && st.turn.seat === this.you && st.status === "playing" && !st.reveal; }
  canDraw(st) {
    if (!this.myTurn(st)) return false;
    const tn = st.turn;
    return tn.phase === "draw" || (tn.phase === "start" && this.now() >= tn.start_at);
  }
  canPile(st) { return this.canDraw(st) && st.settings.pile_draw && st.pile.length > 0; }
  holding(st) { return this.myTurn(st) && st.turn.phase === "play" && !!st.held && st.held.seat === this.you; }
  myWindow(st) {
    if (this.you === null || st.caller !== null || st.reveal) return null;
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
  timedOut(seat) { return (this.timeouts[seat] || 0) > this.now(); }

  // --- actions ---------------------------------------------------------------------------
  act(action) {
    const key = this.turnKey(this.state());
    const still = () => {
      const st = this.state();
      if (!st) return false;
      if (action.type === "call") return !!this.myWindow(st);
      return this.turnKey(st) === key;
    };
    this.conn.act(action, { retries: 1, still: still }).catch((f) => this.refused(f));
  }

  refused(f) {
    if (!f) return;
    toast(ERROR_WORDS[f.code] || f.detail || f.code);
  }

  /** R3: the opening look is taken as soon as the page can, and retried until it is seen or no
   *  longer possible. It is sent without a version: looks never conflict (services.game_act). */
  maybeLook() {
    const st = this.state();
    if (this.you === null || !this.canLook(st) || this.lookSentRound === st.round) return;
    const round = st.round;
    this.lookSentRound = round;
    this.conn.act({ type: "look" }, {
      versioned: false,
      retries: 6,
      still: () => { const s = this.state(); return !!s && s.round === round && this.canLook(s); },
    }).catch((f) => {
      // Lost connection: try again once connected (the snapshot calls maybeLook).
      if (f && f.code === "not_connected") this.lookSentRound = null;
    });
  }

  setMode(mode) { this.mode = mode; this.render(); }

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
    this.peeks[seat + ":" + place] = { card: card, until: this.now() + ms, fresh: true };
  }

  handleEvents(events, live) {
    const st = this.state();
    const memo = (st && st.settings && st.settings.memorise_ms) || 5000;
    const fresh = [];
    events.forEach((ev) => {
      if (typeof ev.seq === "number") {
        if (ev.seq <= this.lastSeq) return;
        this.lastSeq = ev.seq;
      }
      fresh.push(ev);
      const d = ev.data || {};
      const me = this.you;
      if (ev.type === "look" && d.seat === me && d.left) {
        // Shown until the first turn may start, and never less than a few seconds.
        const until = st && st.turn && st.turn.phase === "start" && st.turn.no === 1 ? st.turn.start_at - this.now() : 0;
        const ms = Math.max(until, Math.min(memo, 4000));
        this.peek(me, "left", d.left, ms);
        this.peek(me, "right", d.right, ms);
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
        this.timeouts[d.seat] = this.now() + TIMEOUT_MS;
      } else if (ev.type === "round_dealt") {
        this.peeks = {};
        this.marks = {};
        if (live) this.dealing = true;
      } else if (ev.type === "reveal") {
        this.peeks = {};
      } else if (ev.type === "game_ended") {
        this.endedWinners = d.winners || [];
      } else if (ev.type === "rematch_offered") {
        this.revealShownFor = null;  // draw the results again, with "Join the rematch"
      } else if (ev.type === "player_left" && d.user_id === this.boot.user_id) {
        this.left = true;
      } else if (ev.type === "draw_ready" && d.seat === me && live) {
        this.cue = "turn";
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
    const hadWindow = this.state() && !!this.myWindow(this.state());
    this.handleEvents(events, live);
    const st = this.state();
    if (st && (payload.status === "finished" || payload.status === "abandoned") && st.status === "playing") {
      // Ended from outside the rules (an admin's "end now", or abandoned): no more moves.
      st.status = payload.status;
      st.turn = null;
      st.held = null;
      st.windows = [];
      if (this.endedWinners) st.winners = this.endedWinners;
    }
    if (st && this.mode && !this.holding(st)) this.mode = null;
    if (st && !hadWindow && this.myWindow(st) && live) this.cue = "window";
    this.render();
    this.maybeLook();
  }

  renderKey(st) {
    return [this.conn ? this.conn.version : 0, this.canDraw(st), this.canPile(st), !!this.myWindow(st),
      this.mode ? this.mode.kind + (this.mode.place || "") : "",
      this.live(this.peeks), this.live(this.marks),
      Object.keys(this.timeouts).filter((s) => this.timedOut(Number(s))).length].join("|");
  }

  /** How many of `marks` ({key: {until}}) are still showing: when one expires, redraw. */
  live(marks) {
    const now = this.now();
    return Object.keys(marks).filter((k) => marks[k].until > now).length;
  }

  render() {
    const st = this.state();
    if (!st) return;
    const focusKey = document.activeElement && document.activeElement.dataset ? document.activeElement.dataset.key : null;
    const pileKey = st.pile.length + ":" + (st.pile[st.pile.length - 1] || "");
    const heldKey = st.held ? st.held.seat + ":" + (st.held.card || "?") + ":" + st.turn.no + ":" + st.turn.draw_no : "";
    this.pileChanged = this.lastPile !== "" && pileKey !== this.lastPile;
    this.heldChanged = heldKey !== "" && heldKey !== this.lastHeld;
    this.lastPile = pileKey;
    this.lastHeld = heldKey;
    this.lastRenderKey = this.renderKey(st);
    renderAll(this, st, this.baseTitle);
    const quit = document.getElementById("quit-open");
    if (quit) quit.hidden = st.status !== "playing" || !!this.left;
    paintCountdowns(this.now());
    this.dealing = false;
    this.pileChanged = this.heldChanged = false;
    if (this.cue) { play(this.cue); this.cue = ""; }
    if (focusKey) {
      const again = document.querySelector('#table-app [data-key="' + focusKey + '"]');
      if (again) again.focus();
    }
  }

  /** Five times a second: countdowns, and a re-render when time alone changed what is allowed
   *  (the start delay passed, a window closed, a look expired). */
  tick(now) {
    paintCountdowns(now);
    const st = this.state();
    if (!st) return;
    const hadTurn = this.lastRenderKey.split("|")[1] === "true";
    if (this.renderKey(st) !== this.lastRenderKey) {
      if (!hadTurn && this.canDraw(st)) this.cue = this.cue || "turn";
      this.render();
    }
  }

  start() {
    const app = document.getElementById("table-app");
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
    document.addEventListener("keydown", (e) => {
      if (e.key === "Escape" && this.mode) this.setMode(null);
    });
    mountSoundToggle(document.getElementById("sound-toggle"));
    const tools = mountTableTools(this.boot);  // the rules dialog, chat, "Leave", "Play again"
    this.rematch = (row) => tools.rematchInto(row);
    onTick((now) => this.tick(now));
    this.conn = connect({
      gameId: this.boot.game,
      wsPath: this.boot.ws,
      onSnapshot: (f) => this.setPayload(f.state, [], false),
      onUpdate: (f) => { tools.follow(f.events); this.setPayload(f.state, f.events || [], true); },
      onAck: (f) => { this.handleEvents(f.events || [], true); this.render(); },
      onError: (f) => { if (f.code !== "already_looked" && f.code !== "look_expired") this.refused(f); },
      onPresence: (f) => setPresence(f ? f.seats : {}),
      onClosed: (code) => {
        if (code === 4404 && this.you !== null) removedNotice(gettext("You no longer have a seat at this game."));
      },
      on: { chat: tools.onChat },
    });
    tools.attach(this.conn);
    // The log of the game so far, rebuilt from its stored events in their public form.
    this.log.loadHistory(this.boot.game, Math.max(0, (this.boot.last_seq || 0) - 400), 2);
    return app;
  }
}

const boot = bootData();
if (boot && document.getElementById("table-app")) {
  const table = new CrispTable(boot);
  table.start();
}
