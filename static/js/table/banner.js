/* The connection banner (`#conn`): connecting, live, or lost with a countdown to the next
 * attempt and a "Retry now" button. While the connection is lost, CSS pins it to the top of the
 * screen so the player knows the table they see may be out of date.
 */
import { fmt, gettext } from "./i18n.js";
import { onTick } from "./clock.js";

export class Banner {
  /** `node`: the #conn element (absent on some pages: then the banner does nothing). */
  constructor(node) {
    this.node = node;
    this.retryAt = null;  // local ms of the next attempt
    this.onRetry = null;
    if (!node) return;
    this.text = document.createElement("span");
    this.text.className = "conn-text";
    this.retry = document.createElement("button");
    this.retry.type = "button";
    this.retry.className = "link-like conn-retry";
    this.retry.dataset.key = "retry-now";
    this.retry.textContent = gettext("Retry now");
    this.retry.hidden = true;
    this.retry.addEventListener("click", () => { if (this.onRetry) this.onRetry(); });
    node.textContent = "";
    node.appendChild(this.text);
    node.appendChild(this.retry);
    onTick(() => this.paintCountdown());
  }

  set(state, text, retryAt) {
    if (!this.node) return;
    this.node.dataset.state = state;
    this.retryAt = retryAt || null;
    this.label = text;
    this.retry.hidden = !retryAt;
    this.paintCountdown();
  }

  paintCountdown() {
    if (!this.node) return;
    if (this.retryAt === null) { this.text.textContent = this.label; return; }
    const s = Math.max(0, Math.ceil((this.retryAt - Date.now()) / 1000));
    this.text.textContent = fmt(gettext("Connection lost — retrying in %(s)s s"), { s: s });
  }

  connecting(again) {
    this.set("connecting", again ? gettext("Reconnecting…") : gettext("Connecting…"));
  }
  online() { this.set("online", gettext("Live")); }
  lost(retryAt, onRetry) { this.onRetry = onRetry; this.set("offline", "", retryAt); }
  closed(text) { this.set("offline", text); }
}
