/* The table controller: the page lifecycle of every game kind, from the game's lobby to its end.
 *
 * One instance per page. A game's entry module (static/js/games/<kind>/table.js) defines a
 * subclass that supplies hooks -- what its events mean, how its felt and action bar are drawn --
 * and calls `startTable(GameTable)`; everything else is here (lichess's ui/round: one round
 * controller, variant plugins):
 *
 * - the connection (connection.js) and payload intake: version checks are the connection's, the
 *   events' `seq` is deduplicated here (an ack's events can arrive before or after the update
 *   that carries the same events);
 * - the game's own lobby (lobby.js): the seats update in place, and when the game starts the
 *   lobby becomes the table in place -- no page reload, so the opening look the game takes at
 *   once (Crisp) is never thrown away by a page loading inside the memorise period;
 * - kicked / removed, a game that ended from outside the rules (the server's stopped view is
 *   drawn as it comes: nothing is patched here);
 * - sit-in and "I'm back" (sent in place, sitin.js), focus kept across redraws, the
 *   countdowns' tick, toasts for refusals, sounds, and the offline state (the game's buttons
 *   are locked while the table may be out of date, and the status bar says so).
 *
 * Hooks a game class may define (all optional but `draw`):
 *   draw(st)                  draw the felt and the action bar from the state (its view.js)
 *   mountGame()               its own DOM listeners, once the table's markup is on the page
 *   describer()               the log's words: describe.js's describer for this table
 *   event(ev, d, live)        one fresh event (d = ev.data); `live`: it happened just now
 *   beforeEvents(st, payload, live), afterEvents(st, payload, live)   around a payload's events
 *   prepare(st)               a payload arrived, possibly before the table is on the page
 *                             (Crisp takes its opening look here); a promise it returns (or
 *                             leaves in this.asked) holds the log's history until answered
 *   redrawKey(st)             what, besides the version, calls for a redraw on the tick
 *   afterDraw()               reset the marks of what just moved
 *   tickGame(now)             anything else a tick must do
 *   refusedGame(f)            after a refusal's toast (unlock a hand, ...)
 *   static WORDS              error code -> words, added to the common ones
 */
import { connect } from "./connection.js";
import { onTick, paintCountdowns, serverNow } from "./clock.js";
import { bootData, el } from "./dom.js";
import { fmt, gettext } from "./i18n.js";
import { LobbyPage } from "./lobby.js";
import { TableLog } from "./log.js";
import { removedNotice } from "./notice.js";
import { setPresence } from "./presence.js";
import { mountImBack, resetSeats } from "./sitin.js";
import { mountSoundToggle, play } from "./sound.js";
import { toast } from "./toast.js";
import { mountTableTools } from "./tools.js";
import { record } from "./trace.js";

const COMMON_WORDS = {
  game_finished: gettext("The game is over."),
  game_over: gettext("The game is over."),
  not_seated: gettext("You have no seat at this game."),
  rate_limited: gettext("Slow down a little."),
  stale_version: gettext("The table changed just before your move — please try again."),
  not_connected: gettext("Not connected — the action was not sent."),
};

/** The buttons a player moves with (locked while offline): the felt and the action bar. */
const MOVE_BUTTONS = "#table-app .table-main button";

export class TableController {
  constructor(boot) {
    this.payload = null;
    this.lastSeq = 0;
    this.cue = "";
    this.dealing = false;
    this.timeouts = {};        // seat -> local... server instant until which it is marked
    this.mounted = false;      // the table's markup is on the page (not the lobby's)
    this.early = [];           // events that arrived before the table was on the page
    this.online = false;
    this.lastRenderKey = "";
    this.setBoot(boot);
  }

  setBoot(boot) {
    this.boot = boot;
    this.you = boot.you === undefined ? null : boot.you;
    this.names = {};
    (boot.seats || []).forEach((s) => { this.names[s.seat] = s.name; });
  }

  // --- facts -------------------------------------------------------------------------------
  now() { return serverNow(); }
  state() { return this.payload && this.payload.state; }
  nameOf(seat) {
    if (seat === this.you) return gettext("You");
    return this.names[seat] || fmt(gettext("Seat %(n)s"), { n: seat + 1 });
  }
  timedOut(seat) { return (this.timeouts[seat] || 0) > serverNow(); }
  markTimeout(seat, ms) { this.timeouts[seat] = serverNow() + ms; }

  refused(f) {
    if (!f) return;
    const words = Object.assign({}, COMMON_WORDS, this.constructor.WORDS || {});
    toast(words[f.code] || f.detail || f.code);
    if (this.refusedGame) this.refusedGame(f);
  }

  // --- what arrives ------------------------------------------------------------------------
  /** Each event once (by `seq`), in order, to the game's `event` hook and to the log. */
  handleEvents(events, live) {
    if (!this.mounted) { this.early = this.early.concat(events); return; }
    const fresh = [];
    events.forEach((ev) => {
      if (typeof ev.seq === "number") {
        if (ev.seq <= this.lastSeq) return;
        this.lastSeq = ev.seq;
      }
      fresh.push(ev);
      if (ev.type === "round_dealt" && live) this.dealing = true;
      if (this.event) this.event(ev, ev.data || {}, live);
    });
    this.log.add(fresh, false);
  }

  setPayload(payload, events, live) {
    if (events.some((ev) => ev.type === "seat_kicked" && ev.data && ev.data.user_id === this.boot.user_id)) {
      removedNotice(gettext("The host removed you from this game."));
    }
    this.payload = payload;
    const st = this.state();
    if (events.some((ev) => ev.type === "round_dealt") && st) record("dealt", { round: st.round });
    if (!this.mounted) {
      this.handleEvents(events, live);
      if (st && this.prepare) this.prepare(st);
      return;
    }
    if (st && this.beforeEvents) this.beforeEvents(st, payload, live);
    this.handleEvents(events, live);
    if (!st) return;
    if (this.afterEvents) this.afterEvents(st, payload, live);
    if (this.prepare) this.prepare(st);  // before drawing: a look's round trip starts at once
    this.renderSoon();
  }

  onAck(frame) {
    this.handleEvents(frame.events || [], true);
    this.render();  // the player's own move (or look): drawn at once
  }

  /** Draw once the frames already waiting have been read: at a deal every seat's look comes
   *  as its own update, and a busy phone drawing the table for each of them fell behind. */
  renderSoon() {
    if (this.renderTimer) return;
    this.renderTimer = setTimeout(() => { this.renderTimer = null; this.render(); }, 0);
  }

  // --- drawing -----------------------------------------------------------------------------
  renderKey(st) {
    const marked = Object.keys(this.timeouts).filter((s) => this.timedOut(Number(s))).length;
    return [this.conn ? this.conn.version : 0, marked, this.redrawKey ? this.redrawKey(st) : ""].join("|");
  }

  render() {
    clearTimeout(this.renderTimer);
    this.renderTimer = null;
    const st = this.state();
    if (!st || !this.mounted) return;
    const active = document.activeElement;
    const focusKey = active && active.dataset ? active.dataset.key : null;
    this.lastRenderKey = this.renderKey(st);
    this.draw(st);
    paintCountdowns(this.now());
    const quit = document.getElementById("quit-open");
    if (quit) quit.hidden = st.status !== "playing" || !!this.left;
    this.dealing = false;
    if (this.afterDraw) this.afterDraw();
    if (this.cue) { play(this.cue); this.cue = ""; }
    this.paintOffline();
    if (focusKey) {
      const again = document.querySelector('#table-app [data-key="' + focusKey + '"]');
      if (again && !again.disabled) again.focus();
    }
  }

  /** Offline: the game's buttons are locked (a move could not be sent, and the table may be
   *  out of date) and the status bar says so. Back online, each locked button gets back the
   *  state it had (a view may keep a button across redraws) before the table is redrawn. */
  paintOffline() {
    const app = document.getElementById("table-app");
    if (!app) return;
    app.classList.toggle("offline", !this.online);
    if (this.online) {
      app.removeAttribute("data-offline");
      app.querySelectorAll("[data-offline-locked]").forEach((b) => {
        b.disabled = b.dataset.offlineLocked === "was";
        if (!b.disabled) b.removeAttribute("aria-disabled");
        b.removeAttribute("data-offline-locked");
      });
      app.querySelectorAll(".offline-note").forEach((n) => n.remove());
      return;
    }
    app.dataset.offline = "1";
    document.querySelectorAll(MOVE_BUTTONS).forEach((b) => {
      // Locked already and still disabled: nothing to do. A button the view kept across a
      // redraw and enabled again meanwhile (a deck drawn from) is locked again: CI saw the deck
      // tappable while offline after a redraw.
      if (b.dataset.offlineLocked && b.disabled) return;
      b.dataset.offlineLocked = b.disabled ? "was" : "1";
      b.disabled = true;
      b.setAttribute("aria-disabled", "true");
    });
    const bar = document.getElementById("status-bar");
    if (bar && !bar.querySelector(".offline-note")) {
      bar.appendChild(el("span", "status-text offline-note",
        gettext("Offline — your moves are locked until the connection is back.")));
    }
  }

  setOnline(up) {
    if (this.online === up) return;
    this.online = up;
    record(up ? "online" : "offline", {});
    if (!this.mounted) return;
    if (up) this.paintOffline();  // unlock first: the redraw decides what is possible now
    if (this.state()) this.render();
  }

  /** Five times a second: the countdowns, and a redraw when time alone changed something. */
  tick(now) {
    paintCountdowns(now);
    if (this.tickGame) this.tickGame(now);
    const st = this.state();
    if (st && this.mounted && this.renderKey(st) !== this.lastRenderKey) this.render();
  }

  // --- the page ----------------------------------------------------------------------------
  /** The table's markup is on the page: mount its parts and draw what has arrived so far. */
  mount() {
    const boot = bootData();
    if (boot) this.setBoot(boot);
    resetSeats();
    this.baseTitle = document.title;
    this.log = new TableLog(document.getElementById("log"),
      this.describer ? this.describer() : () => null);
    mountSoundToggle(document.getElementById("sound-toggle"));
    this.tools = mountTableTools(this.boot);  // the rules dialog, chat, "Leave", "Play again"
    this.rematch = (row) => this.tools.rematchInto(row);
    if (this.conn) this.tools.attach(this.conn);
    mountImBack(this.boot.game, (text) => toast(text));
    if (this.mountGame) this.mountGame();
    this.mounted = true;
    record("table", {});
    const early = this.early.slice().sort((a, b) => (a.seq || 0) - (b.seq || 0));
    this.early = [];
    const st = this.state();
    if (st && this.beforeEvents) this.beforeEvents(st, this.payload, true);
    this.handleEvents(early, true);
    if (st && this.afterEvents) this.afterEvents(st, this.payload, true);
    const asked = st && this.prepare ? this.prepare(st) : null;
    this.render();
    // The log of the game so far, rebuilt from its stored events in their public form -- once
    // what the page asked by itself (Crisp's opening look) is answered: at the start of a
    // game every seat's page mounts at once, and the looks come first.
    const history = () => this.log.loadHistory(this.boot.game, Math.max(0, (this.boot.last_seq || 0) - 400), 2);
    Promise.resolve(asked || this.asked).then(history, history);
  }

  start() {
    const lobby = this.boot.status === "lobby";
    if (lobby) {
      this.lobby = new LobbyPage(this.boot);
      if (!this.lobby.watch) return;  // an invite link's page: nothing to follow yet
    } else {
      this.mount();
    }
    document.addEventListener("keydown", (e) => {
      if (e.key === "Escape" && this.mounted && this.onEscape) this.onEscape();
    });
    onTick((now) => this.tick(now));
    const started = (f) => this.lobby && f.state && f.state.status !== "lobby";
    this.conn = connect({
      gameId: this.boot.game,
      wsPath: this.boot.ws,
      onLink: (up) => this.setOnline(up),
      onSnapshot: (f) => {
        if (this.lobby && !started(f)) { this.lobby.snapshot(f); return; }
        this.setPayload(f.state, [], false);
        if (started(f)) this.becomeTable(f.state.status);
      },
      onUpdate: (f) => {
        if (this.lobby && !started(f)) { this.lobby.update(f); return; }
        if (this.tools) this.tools.follow(f.events);
        this.setPayload(f.state, f.events || [], true);
        if (started(f)) this.becomeTable(f.state.status);
      },
      onAck: (f) => this.onAck(f),
      onError: (f) => { if (!this.ignoredError || !this.ignoredError(f)) this.refused(f); },
      onPresence: (f) => setPresence(f ? f.seats : null),
      onClosed: (code) => {
        // A seated player of a private game loses sight of it when removed from its lobby:
        // the socket is closed 4404 instead of carrying the removal.
        if (code === 4404 && this.lobby && this.lobby.seated) removedNotice(gettext("The host removed you from this game."));
        else if (code === 4404 && this.you !== null) removedNotice(gettext("You no longer have a seat at this game."));
      },
      on: { chat: (f) => { if (this.tools) this.tools.onChat(f); } },
    });
    if (this.tools) this.tools.attach(this.conn);
  }

  /** The game left its lobby: the lobby's page becomes the table's, in place -- from the
   *  table the page carries, at once, or else from the page fetched again. The state and
   *  events that arrive meanwhile are kept (and a look taken) and drawn once it is there. */
  becomeTable(status) {
    const lobby = this.lobby;
    this.lobby = null;
    record("starting", { status: status });
    const stale = lobby.stale;
    if (status === "playing" && lobby.swapInTable()) {
      this.mount();
      if (!stale) return;
      // The names as the server has them now (a seat may have changed just before the start).
      lobby.refreshBoot().then((boot) => {
        if (!boot) return;
        this.setBoot(boot);
        resetSeats();
        this.render();
      }, () => { /* the boot's names stay */ });
      return;
    }
    lobby.fetchPage().then((doc) => {
      if (status !== "playing" && status !== "finished") { location.reload(); return; }
      lobby.swapIn(doc);
      this.mount();
    }, () => location.reload());
  }
}

/** The entry point of a game's table.js: run the page with that game's class. */
export function startTable(GameTable) {
  const boot = bootData();
  if (!boot || !document.querySelector(".table-page")) return null;
  const table = new GameTable(boot);
  table.start();
  return table;
}
