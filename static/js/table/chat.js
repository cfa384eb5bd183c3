/* The table's chat panel (templates/games/_chat.html), for every game kind.
 *
 * Lines arrive as `chat` frames on the game socket (players and spectators alike) and, on load,
 * from GET /api/v1/games/<id>/chat/. Text is always set as textContent: a line is never HTML.
 * Each viewer may mute the whole chat, or hide one person's lines; both choices stick
 * (localStorage `table.chat.muted` = "1", `table.chat.hidden` = JSON list of user ids).
 */
import { el } from "./dom.js";
import { fmt, gettext, ngettext } from "./i18n.js";
import { toast } from "./toast.js";

const MUTED_KEY = "table.chat.muted";
const HIDDEN_KEY = "table.chat.hidden";
const SHOWN = 100;

function load(key, fallback) {
  try { const v = window.localStorage.getItem(key); return v === null ? fallback : JSON.parse(v); }
  catch (e) { return fallback; }
}
function save(key, value, empty) {
  try {
    if (empty) window.localStorage.removeItem(key);
    else window.localStorage.setItem(key, JSON.stringify(value));
  } catch (e) { /* private mode: for this page only */ }
}

const ERRORS = {
  rate_limited: gettext("Not so fast — wait a few seconds before the next message."),
  bad_chat: gettext("A message is one line of up to 200 characters."),
  not_connected: gettext("Not connected — the message was not sent."),
};

export class TableChat {
  /** `opts`: {root: the #chat section, conn: the Connection, gameId, userId}. */
  constructor(opts) {
    this.root = opts.root;
    this.conn = opts.conn;
    this.gameId = opts.gameId;
    this.userId = opts.userId;
    this.lines = new Map();  // id -> line
    this.unread = 0;
    this.inView = true;
    this.jump = null;
    this.muted = load(MUTED_KEY, false) === true;
    this.hidden = new Set(load(HIDDEN_KEY, []));
    this.list = this.root.querySelector("#chat-list");
    this.input = this.root.querySelector("#chat-input");
    this.muteButton = this.root.querySelector("#chat-mute");
    this.note = this.root.querySelector("#chat-muted-note");
    this.root.querySelector("#chat-form").addEventListener("submit", (e) => {
      e.preventDefault();
      this.send();
    });
    this.muteButton.addEventListener("click", () => {
      this.muted = !this.muted;
      save(MUTED_KEY, true, !this.muted);
      this.paint();
    });
    this.paint();
  }

  /** The last lines so far (on load, and after a reconnect). */
  async loadHistory() {
    try {
      const r = await fetch("/api/v1/games/" + this.gameId + "/chat/",
        { credentials: "same-origin", headers: { Accept: "application/json" } });
      if (!r.ok) return;
      const body = await r.json();
      (body.messages || []).forEach((m) => this.lines.set(m.id, m));
      this.paint();
    } catch (e) { /* offline: live lines still arrive */ }
  }

  /** A `chat` frame from the socket. */
  onFrame(frame) {
    if (!frame.message) return;
    const fresh = !this.lines.has(frame.message.id);
    this.lines.set(frame.message.id, frame.message);
    this.paint();
    if (fresh && !this.inView && !this.muted && frame.message.user_id !== this.userId &&
        !this.hidden.has(frame.message.user_id)) {
      this.unread += 1;
      this.paintJump();
    }
  }

  /** On a phone the chat is below the table: `btn` jumps to it and counts lines not yet seen. */
  mountJump(btn) {
    this.unread = 0;
    this.inView = true;
    this.jump = btn;
    if (!btn) return;
    btn.addEventListener("click", () => {
      this.root.scrollIntoView({ behavior: "smooth", block: "end" });
      this.input.focus({ preventScroll: true });
    });
    if (window.IntersectionObserver) {
      new IntersectionObserver((entries) => {
        this.inView = entries.some((e) => e.isIntersecting);
        if (this.inView) { this.unread = 0; this.paintJump(); }
      }).observe(this.root);
    }
    this.paintJump();
  }

  paintJump() {
    if (!this.jump) return;
    const badge = this.jump.querySelector(".unread");
    badge.textContent = this.unread ? String(this.unread) : "";
    badge.hidden = !this.unread;
    this.jump.setAttribute("aria-label", this.unread
      ? fmt(ngettext("Chat, %(n)s new message", "Chat, %(n)s new messages", this.unread), { n: this.unread })
      : gettext("Chat"));
  }

  send() {
    const text = this.input.value.trim();
    if (!text) return;
    this.input.disabled = true;
    this.conn.call({ type: "chat", text: text }).then(() => {
      this.input.value = "";
    }, (f) => {
      toast(ERRORS[f.code] || f.detail || f.code);
    }).finally(() => {
      this.input.disabled = false;
      this.input.focus();
    });
  }

  hide(userId, on) {
    if (on) this.hidden.add(userId); else this.hidden.delete(userId);
    save(HIDDEN_KEY, Array.from(this.hidden), this.hidden.size === 0);
    this.paint();
  }

  paint() {
    this.muteButton.textContent = this.muted ? gettext("Unmute chat") : gettext("Mute chat");
    this.muteButton.setAttribute("aria-pressed", this.muted ? "true" : "false");
    this.note.hidden = !this.muted;
    this.list.hidden = this.muted;
    this.list.textContent = "";
    if (this.muted) return;
    const lines = Array.from(this.lines.values()).sort((a, b) => a.at - b.at || a.id - b.id).slice(-SHOWN);
    const hiddenNames = new Map();
    lines.forEach((m) => {
      if (this.hidden.has(m.user_id)) { hiddenNames.set(m.user_id, m.name); return; }
      const li = el("li", "chat-line" + (m.user_id === this.userId ? " mine" : "") + (m.seat === null ? " spectator" : ""));
      li.dataset.id = String(m.id);
      const name = el("span", "chat-name", m.name);
      if (m.seat === null) name.title = gettext("watching");
      li.appendChild(name);
      li.appendChild(el("span", "chat-text", m.text));
      if (m.user_id !== this.userId) {
        const label = fmt(gettext("Hide %(name)s's messages"), { name: m.name });
        const x = el("button", "chat-hide link-like", "×");
        x.type = "button";
        x.title = label;
        x.setAttribute("aria-label", label);
        x.addEventListener("click", () => this.hide(m.user_id, true));
        li.appendChild(x);
      }
      this.list.appendChild(li);
    });
    hiddenNames.forEach((name, id) => {
      const li = el("li", "chat-line chat-hidden-note");
      const b = el("button", "link-like", fmt(gettext("Show %(name)s's messages again"), { name: name }));
      b.type = "button";
      b.addEventListener("click", () => this.hide(id, false));
      li.appendChild(b);
      this.list.appendChild(li);
    });
    this.list.scrollTop = this.list.scrollHeight;
  }
}
