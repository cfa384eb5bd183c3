/* What the table page went through, for people and tests to read: `window.tableTrace.events`,
 * the last 300 lifecycle steps in order ({what, at, ...}: "table" once the table is on the page,
 * "dealt", "look", "online", "offline", "back", ...), `at` on the server's clock;
 * `window.tableTrace.now()` is that clock. Nothing private is recorded (a look's cards are not). */
import { serverNow } from "./clock.js";

const MAX = 300;
const trace = { events: [], now: serverNow };
window.tableTrace = trace;

/** Note one step of the page's life. */
export function record(what, data) {
  trace.events.push(Object.assign({ what: what, at: serverNow() }, data || {}));
  if (trace.events.length > MAX) trace.events.shift();
}
