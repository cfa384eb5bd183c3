/* What every game's describe.js shares (the log's words, "What happened"): the frame of a
 * describer and the lines of the events every table has whatever its game -- the lobby's
 * (joined, left, removed), the start, and the platform's own (abandoned, ended by an
 * administrator, a player gone, the game renamed). A game's describe.js writes only its own
 * events' lines (its `own` function) and passes the rest here.
 */
import { fmt, gettext } from "./i18n.js";

/** `describe(ev)` for TableLog (and the replay's story) from `table` ({you: seat | null,
 *  name(seat) -> "you" or the name, ...}) and the game's `own(ev, c)`, which returns the line of
 *  one of its events (a string, `{kind, text}`, or null for none) and `undefined` for an event
 *  it leaves to the platform. `c`: `d` (the event's data), `who` (its seat's name, "" when it
 *  names none), `me` (its seat is the viewer's), `you(seat)` (that seat is the viewer's). */
export function describerOf(table, own) {
  const you = function (seat) { return seat !== undefined && seat !== null && seat === table.you; };
  return function describe(ev, opts) {
    const d = ev.data || {};
    const c = { d: d, me: you(d.seat), who: d.seat !== undefined && d.seat !== null ? table.name(d.seat) : "", you: you };
    const line = own(ev, c, opts);
    return line === undefined ? platformLine(ev, c) : line;
  };
}

/** The line of an event every game's table has, or null. */
function platformLine(ev, c) {
  const d = c.d;
  switch (ev.type) {
    case "seat_joined": return fmt(gettext("%(name)s joined."), { name: d.name });
    case "seat_left": return fmt(gettext("%(name)s left."), { name: d.name });
    case "seat_kicked": return fmt(gettext("%(name)s was removed by the host."), { name: d.name });
    case "game_started": return gettext("The game starts.");
    case "game_abandoned": return gettext("The game was abandoned.");
    case "game_ended": return gettext("An administrator ended the game.");
    case "player_left": return c.me ? gettext("You left the game.")
      : fmt(gettext("%(name)s left the game."), { name: d.name || c.who });
    case "game_renamed": return fmt(gettext("The game is now called “%(name)s”."), { name: d.name });
    default: return null;
  }
}
