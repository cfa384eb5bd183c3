/* "What happened": the table's log, one line per event, newest first.
 *
 * Lines are keyed by the event's `seq`, so the same event arriving twice (a live frame and the
 * history, an update and an ack) is one line, and history fetched after live frames still
 * lands in order. On load the log is rebuilt from the game's stored events
 * (GET /api/v1/games/<id>/events/) in the page's language: a reload or a language switch keeps
 * it. Rebuilt lines come from the events' public facts only: the game module's `describe` is
 * told `{history: true}` and must not show a private value then (a look is shown once, R4).
 */
import { el } from "./dom.js";

const MAX_LINES = 400;
const SHOWN = 80;

export class TableLog {
  /** `list`: the <ol> to fill; `describe(event, {history})` -> {text, kind} | string | null. */
  constructor(list, describe) {
    this.list = list;
    this.describe = describe;
    this.lines = new Map();  // seq -> {text, kind}
    this.local = 0;          // lines without a seq (client-side notes) sort after their peers
  }

  /** Add the lines of `events` (each {seq, type, data, ...}); `history`: from the store. */
  add(events, history) {
    let changed = false;
    (events || []).forEach((ev) => {
      const seq = typeof ev.seq === "number" ? ev.seq : null;
      if (seq !== null && this.lines.has(seq)) return;
      const out = this.describe(ev, { history: !!history });
      if (!out) return;
      const line = typeof out === "string" ? { text: out, kind: ev.type } : out;
      const key = seq !== null ? seq : (this.maxSeq() + 0.001 * (++this.local));
      this.lines.set(key, line);
      changed = true;
    });
    if (this.lines.size > MAX_LINES) {
      const keys = Array.from(this.lines.keys()).sort((a, b) => a - b);
      keys.slice(0, this.lines.size - MAX_LINES).forEach((k) => this.lines.delete(k));
    }
    if (changed) this.paint();
  }

  maxSeq() {
    let m = 0;
    this.lines.forEach((_, k) => { if (k > m) m = k; });
    return Math.floor(m);
  }

  paint() {
    if (!this.list) return;
    const keys = Array.from(this.lines.keys()).sort((a, b) => b - a).slice(0, SHOWN);
    this.list.textContent = "";
    keys.forEach((k) => {
      const line = this.lines.get(k);
      const li = el("li", "log-" + line.kind, line.text);
      li.dataset.seq = String(k);
      this.list.appendChild(li);
    });
  }

  /**
   * Fetch the stored events after `since` (page by page, at most `pages` pages of 500) and
   * add them as history. Errors are swallowed: the log then starts with the live frames.
   */
  async loadHistory(gameId, since, pages) {
    let after = Math.max(0, since || 0);
    for (let i = 0; i < (pages || 4); i++) {
      let body;
      try {
        const r = await fetch("/api/v1/games/" + gameId + "/events/?since=" + after + "&limit=500",
          { credentials: "same-origin", headers: { Accept: "application/json" } });
        if (!r.ok) return;
        body = await r.json();
      } catch (e) {
        return;
      }
      const events = body.events || [];
      this.add(events, true);
      if (events.length < 500) return;
      after = events[events.length - 1].seq;
    }
  }
}
