/* Server time on the client (docs/PROTOCOL.md, "Time").
 *
 * Every server frame carries `server_time`. The offset `server_time - local receive time` is
 * an under-estimate by the network delay; the largest over the last few frames is the one with
 * the least delay, so that is the one used. All deadlines in the state are server instants:
 * compare them with serverNow(), never with Date.now().
 */
import { fmt, gettext } from "./i18n.js";

const SAMPLES = 12;
const offsets = [];
let skew = 0;

/** Record one frame's `server_time` (ms). */
export function observe(serverTime) {
  if (typeof serverTime !== "number") return;
  offsets.push(serverTime - Date.now());
  if (offsets.length > SAMPLES) offsets.shift();
  skew = Math.max.apply(null, offsets);
}

/** The server's clock now, in ms since the epoch. */
export function serverNow() {
  return Date.now() + skew;
}

/** Whole seconds left until the server instant `at` (never negative). */
export function secondsLeft(at) {
  return Math.max(0, Math.ceil((at - serverNow()) / 1000));
}

/** The time left, `ms`, as a countdown shows it: seconds up to two minutes (" 12s", every live
 *  clock), then minutes, "2 h 5 min" and "2 d 4 h" (a turn-based game's day per move, issue 26),
 *  rounded up so a clock never shows less time than there is. */
export function leftText(ms) {
  const secs = Math.max(0, Math.ceil(ms / 1000));
  if (secs <= 120) return " " + secs + gettext("s");
  const mins = Math.ceil(secs / 60);
  if (mins < 60) return " " + fmt(gettext("%(m)s min"), { m: mins });
  if (mins < 24 * 60) {
    return " " + fmt(gettext("%(h)s h %(m)s min"), { h: Math.floor(mins / 60), m: mins % 60 });
  }
  const hours = Math.ceil(mins / 60);
  return " " + fmt(gettext("%(d)s d %(h)s h"), { d: Math.floor(hours / 24), h: hours % 24 });
}

/** Fill every `[data-until]` element (a server instant) with the time left (`leftText`), e.g.
 *  " 12s"; `urgent` under 5 s. Game modules call it after drawing, and the tick keeps it going. */
export function paintCountdowns(now) {
  const t = now === undefined ? serverNow() : now;
  document.querySelectorAll("[data-until]").forEach(function (c) {
    const left = parseInt(c.dataset.until, 10) - t;
    const text = leftText(left);
    if (c.textContent !== text) c.textContent = text;
    c.classList.toggle("urgent", left < 5000);
  });
}

const tickers = [];
let interval = null;

/** Call `fn(now)` five times a second (one shared timer for every countdown of the page). */
export function onTick(fn) {
  tickers.push(fn);
  if (interval === null) {
    interval = setInterval(function () {
      const now = serverNow();
      tickers.forEach(function (f) { f(now); });
    }, 200);
  }
}
