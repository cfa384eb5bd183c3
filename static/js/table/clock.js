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

/** `ms` left as a long deadline reads (issue 26, turn-based games): "2 d 5 h", "11 h 20 min",
 *  "7 min"; the last 100 seconds as seconds, like every live clock. */
export function longLeft(ms) {
  if (ms < 100000) return Math.max(0, Math.ceil(ms / 1000)) + gettext("s");
  const mins = Math.ceil(ms / 60000);
  const d = Math.floor(mins / 1440), h = Math.floor((mins % 1440) / 60), m = mins % 60;
  if (d) return fmt(gettext("%(d)s d %(h)s h"), { d: d, h: h });
  if (h) return fmt(gettext("%(h)s h %(m)s min"), { h: h, m: m });
  return fmt(gettext("%(m)s min"), { m: m });
}

/** Fill every `[data-until]` element (a server instant) with the seconds left, e.g. " 12s"
 *  (with `data-long`: a turn-based game's hours and days, `longLeft`); `urgent` under 5 s.
 *  Game modules call it after drawing, and the tick keeps it going. */
export function paintCountdowns(now) {
  const t = now === undefined ? serverNow() : now;
  document.querySelectorAll("[data-until]").forEach(function (c) {
    const left = parseInt(c.dataset.until, 10) - t;
    c.textContent = " " + (c.dataset.long ? longLeft(left) : Math.max(0, Math.ceil(left / 1000)) + gettext("s"));
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
