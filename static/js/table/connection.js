/* The shared game-socket client (docs/PROTOCOL.md): one per table page, for every game kind.
 *
 *   const conn = connect({gameId, wsPath, onSnapshot, onUpdate, onAck, onError, onPresence,
 *                         onClosed});
 *   conn.act(action, {versioned, retries, still}) -> Promise<ack frame>
 *
 * It owns the protocol's bookkeeping so game modules only render: the version rules (ignore
 * old updates, resync on a gap), reconnecting with `?version=` after 0.2 s doubling to 5 s
 * with jitter (the banner counts down and offers "Retry now"), the clock offset (clock.js),
 * pings, and retrying an action refused as stale once the table has caught up — but only while
 * the caller's `still()` says the move still means the same thing.
 */
import { followSitIn, refreshSeats } from "./sitin.js";
import { Banner } from "./banner.js";
import { observe } from "./clock.js";
import { gettext } from "./i18n.js";

const CLOSE_FOR_GOOD = { 4401: true, 4403: true, 4404: true };
/** Refusals worth sending again after a short pause (nothing was applied). */
const TRANSIENT = { busy: true, rate_limited: true, server_error: true };

function randomKey() {
  if (window.crypto && crypto.randomUUID) return crypto.randomUUID();
  return Date.now().toString(36) + Math.random().toString(36).slice(2);
}

class Connection {
  constructor(opts) {
    this.opts = opts;
    this.version = -1;
    this.ws = null;
    this.attempts = 0;
    this.nextId = 1;
    this.pending = {};   // id -> {action, opts, resolve, reject, retriesLeft, key}
    this.waiting = [];   // acts refused as stale, sent again after the next state
    this.calls = {};     // id -> {resolve, reject}: other requests (call())
    this.closedForGood = false;
    this.reconnectTimer = null;
    this.pingTimer = null;
    this.banner = new Banner(opts.bannerNode || document.getElementById("conn"));
    window.addEventListener("online", () => { if (!this.ws) this.retryNow(); });
  }

  url() {
    const proto = location.protocol === "https:" ? "wss://" : "ws://";
    const path = this.opts.wsPath || "/ws/games/" + this.opts.gameId + "/";
    // The path may carry a query already (?invite_code= for an outsider let in by the link).
    const sep = path.includes("?") ? "&" : "?";
    return proto + location.host + path + (this.version >= 0 ? sep + "version=" + this.version : "");
  }

  open() {
    if (this.closedForGood) return;
    clearTimeout(this.reconnectTimer);
    this.banner.connecting(this.attempts > 0);
    const ws = new WebSocket(this.url());
    this.ws = ws;
    this.caughtUp = false;
    ws.onopen = () => {
      this.attempts = 0;
      this.ping();
      clearInterval(this.pingTimer);
      this.pingTimer = setInterval(() => this.ping(), 15000);
    };
    ws.onmessage = (e) => {
      let frame;
      try { frame = JSON.parse(e.data); } catch (err) { return; }
      this.onFrame(frame);
    };
    ws.onclose = (e) => {
      if (this.ws !== ws) return;
      clearInterval(this.pingTimer);
      this.ws = null;
      this.failPending();
      if (this.opts.onLink) this.opts.onLink(false);
      if (this.opts.onPresence) this.opts.onPresence(null);  // unknown while disconnected
      if (CLOSE_FOR_GOOD[e.code]) {
        this.closedForGood = true;
        this.banner.closed(e.code === 4401 ? gettext("Signed out — log in again.")
          : gettext("You cannot watch this game."));
        if (this.opts.onClosed) this.opts.onClosed(e.code);
        return;
      }
      this.attempts += 1;
      const delay = Math.min(5000, 200 * Math.pow(2, this.attempts - 1)) *
        (0.75 + Math.random() * 0.5);
      const at = Date.now() + delay;
      this.banner.lost(at, () => this.retryNow());
      this.reconnectTimer = setTimeout(() => this.open(), delay);
    };
  }

  /** Reconnect at once (the banner's "Retry now", or the browser coming back online). */
  retryNow() {
    if (this.closedForGood || (this.ws && this.ws.readyState <= 1)) return;
    this.attempts = Math.max(this.attempts, 1);
    this.open();
  }

  send(obj) {
    if (this.ws && this.ws.readyState === WebSocket.OPEN) {
      this.ws.send(JSON.stringify(obj));
      return true;
    }
    return false;
  }

  ping() { this.send({ type: "ping", id: "p" + (this.nextId++) }); }

  /** Send a frame that is answered by one frame with its `id` (e.g. chat -> chat_ack).
   *  Resolves with the answer; rejects with the error frame, or {code: "not_connected"}. */
  call(frame) {
    return new Promise((resolve, reject) => {
      const id = "q" + (this.nextId++);
      if (!this.send(Object.assign({}, frame, { id: id }))) {
        reject({ code: "not_connected", detail: "" });
        return;
      }
      this.calls[id] = { resolve: resolve, reject: reject };
    });
  }

  /** Ask for what happened since our version (a snapshot if we have none). */
  resync() { this.send({ type: "resync", version: this.version >= 0 ? this.version : null }); }

  /**
   * Send one action. Options:
   *   versioned (default true): send our version, so the server refuses the move if the game
   *     moved on (stale_version) instead of applying it to a table the player did not see;
   *   retries (default 1): how many times a stale or transient refusal is sent again;
   *   still(): called before each retry, once the table caught up; false drops the move.
   * Resolves with the ack frame; rejects with the error frame ({code, detail}).
   */
  act(action, options) {
    const o = Object.assign({ versioned: true, retries: 1, still: null }, options || {});
    return new Promise((resolve, reject) => {
      const job = { action: action, opts: o, resolve: resolve, reject: reject,
        retriesLeft: o.retries, key: randomKey() };
      if (!this.sendJob(job)) reject({ code: "not_connected", detail: "" });
    });
  }

  sendJob(job) {
    const id = this.nextId++;
    const frame = { type: "act", id: id, action: job.action, idempotency_key: job.key };
    if (job.opts.versioned && this.version >= 0) frame.version = this.version;
    if (!this.send(frame)) return false;
    this.pending[id] = job;
    return true;
  }

  failPending() {
    const jobs = Object.keys(this.pending).map((k) => this.pending[k]);
    this.pending = {};
    jobs.concat(this.waiting).forEach((job) => job.reject({ code: "not_connected", detail: "" }));
    this.waiting = [];
    const calls = this.calls;
    this.calls = {};
    Object.keys(calls).forEach((k) => calls[k].reject({ code: "not_connected", detail: "" }));
  }

  /** After the table caught up: send again what was refused as stale, if it still applies. */
  flushWaiting() {
    const jobs = this.waiting;
    this.waiting = [];
    jobs.forEach((job) => {
      if (job.opts.still && !job.opts.still()) {
        job.reject({ code: "stale_version", detail: "" });
        return;
      }
      job.key = randomKey();  // a new decision at a new version, not a replay
      if (!this.sendJob(job)) job.reject({ code: "not_connected", detail: "" });
    });
  }

  /** One frame from the server. The socket is accepted before the server reads anything
   *  (docs/PROTOCOL.md, "Close codes"): the open event means "connected", not "caught up".
   *  The table is live -- "Live" on the banner, onLink(true) -- once the first frame, the
   *  snapshot or the catch-up update, has been applied: a page called live at the open event
   *  and cut off before its snapshot had no table at all, and never showed the turn that
   *  opened while it was offline (the buttons were also unlocked before the catch-up). */
  onFrame(f) {
    this.readFrame(f);
    if (!this.caughtUp && (f.type === "snapshot" || f.type === "update") && !this.closedForGood) {
      this.caughtUp = true;
      this.banner.online();
      if (this.opts.onLink) this.opts.onLink(true);
    }
  }

  readFrame(f) {
    observe(f.server_time);
    const o = this.opts;
    switch (f.type) {
      case "snapshot":
        if (f.version < this.version) return;
        this.version = f.version;
        if (f.state && f.state.status !== "lobby") refreshSeats(o.gameId);
        if (o.onSnapshot) o.onSnapshot(f);
        this.flushWaiting();
        break;
      case "update":
        if (f.version <= this.version) { this.flushWaiting(); return; }
        if (this.version >= 0 && f.prev_version > this.version) { this.resync(); return; }
        this.version = f.version;
        followSitIn(f.events, f.version);
        if (o.onUpdate) o.onUpdate(f);
        this.flushWaiting();
        break;
      case "ack": {
        const job = this.pending[f.id];
        delete this.pending[f.id];
        if (o.onAck) o.onAck(f, job ? job.action : null);
        if (job) job.resolve(f);
        break;
      }
      case "error": {
        const call = this.calls[f.id];
        if (call !== undefined) { delete this.calls[f.id]; call.reject(f); return; }
        const job = this.pending[f.id];
        delete this.pending[f.id];
        if (job && job.retriesLeft > 0 && (f.code === "stale_version" || TRANSIENT[f.code])) {
          job.retriesLeft -= 1;
          if (f.code === "stale_version") {
            this.waiting.push(job);
            this.resync();
          } else {
            setTimeout(() => {
              if (job.opts.still && !job.opts.still()) { job.reject(f); return; }
              if (!this.sendJob(job)) job.reject({ code: "not_connected", detail: "" });
            }, 300 + Math.random() * 400);
          }
          return;
        }
        if (o.onError) o.onError(f, job ? job.action : null);
        if (job) job.reject(f);
        break;
      }
      case "presence":
        if (o.onPresence) o.onPresence(f);
        break;
      default: {
        // Other frames (e.g. `chat`, `chat_ack`): answers to call(), then the `on` handlers.
        const call = this.calls[f.id];
        if (call !== undefined && f.id !== undefined && f.id !== null) {
          delete this.calls[f.id];
          call.resolve(f);
        }
        if (o.on && o.on[f.type]) o.on[f.type](f);
        break;
      }
    }
  }
}

/**
 * Open the game's socket and keep it open. `opts`:
 *   gameId, wsPath (default /ws/games/<id>/), bannerNode (default #conn);
 *   onSnapshot(frame), onUpdate(frame): a new state to render (frame.state, frame.events);
 *   onAck(frame, action): our action's result, with its events in our private form;
 *   onError(frame, action): a refusal that will not be retried (the action may be null);
 *   onPresence(frame | null): who is connected (null: unknown, we are offline);
 *   onLink(up): the table is live -- the socket's first frame (snapshot or catch-up) was
 *     applied (true) -- or the socket was lost (false);
 *   onClosed(code): refused for good (4401 signed out, 4403, 4404 no such game / removed);
 *   on: {frameType: handler(frame)} for other frames (e.g. {chat: …}).
 * Returns the Connection: act(), call(), resync(), retryNow(), and `version`.
 */
export function connect(opts) {
  const c = new Connection(opts);
  c.open();
  return c;
}
