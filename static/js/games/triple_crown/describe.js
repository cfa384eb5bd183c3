/* Triple Crown's events in words, for the log ("What happened").
 *
 * Lines use only an event's public facts -- played cards, tricks, the Double Stakes seat and its
 * trumps, and the reveal -- so the log rebuilt from stored events after a reload reads the same
 * as the live one. The memo and a seat's role are never written here before the hand's reveal,
 * not even for the viewer (the role badge shows the viewer's own).
 * Lines the viewer did themselves are their own messages, so verbs agree in every language.
 */
import { describerOf } from "../../table/describe.js";
import { fmt, gettext } from "../../table/i18n.js";
import { cardText } from "../../table/cards.js";
import { ROLE_NAME, trumpsText } from "./words.js";

/** `table`: {you: seat | null, name(seat) -> string}. Returns describe(ev) for TableLog. */
export function describer(table) {
  return describerOf(table, function (ev, { d, who, you: isYou }) {
    switch (ev.type) {
      case "round_dealt": {
        const head = isYou(d.dealer)
          ? fmt(gettext("Hand %(n)s: you deal."), { n: d.round })
          : fmt(gettext("Hand %(n)s: %(dealer)s deals."), { n: d.round, dealer: table.name(d.dealer) });
        if (d.double_stakes === null || d.double_stakes === undefined) {
          return { kind: "round_dealt", text: head + " " + gettext("A Crown hand: no Double Stakes.") };
        }
        return { kind: "double_stakes", text: head + " " + (isYou(d.double_stakes)
          ? gettext("You hold A♠ and 2♦: you are Double Stakes!")
          : fmt(gettext("%(name)s holds A♠ and 2♦: Double Stakes!"), { name: table.name(d.double_stakes) })) };
      }
      case "declared": {
        const tr = trumpsText(d.trumps);
        if (d.timeout) {
          return { kind: "timeout", text: isYou(d.seat)
            ? fmt(gettext("You ran out of time: trumps are %(trumps)s."), { trumps: tr })
            : fmt(gettext("%(name)s ran out of time: trumps are %(trumps)s."), { name: who, trumps: tr }) };
        }
        return { kind: "declared", text: isYou(d.seat)
          ? fmt(gettext("You named trumps: %(trumps)s. Your memo is written."), { trumps: tr })
          : fmt(gettext("%(name)s named trumps: %(trumps)s, and wrote a secret memo."), { name: who, trumps: tr }) };
      }
      case "card_played":
        if (d.timeout) {
          return { kind: "timeout", text: isYou(d.seat)
            ? fmt(gettext("You ran out of time: %(card)s was played for you."), { card: cardText(d.card) })
            : fmt(gettext("%(name)s ran out of time: %(card)s was played."), { name: who, card: cardText(d.card) }) };
        }
        return isYou(d.seat) ? fmt(gettext("You played %(card)s."), { card: cardText(d.card) })
          : fmt(gettext("%(name)s played %(card)s."), { name: who, card: cardText(d.card) });
      case "trick_won":
        return { kind: "trick_won", text: isYou(d.winner)
          ? fmt(gettext("Trick %(n)s: you take it."), { n: d.trick })
          : fmt(gettext("Trick %(n)s: %(name)s takes it."), { n: d.trick, name: table.name(d.winner) }) };
      case "hand_over": {
        const roles = (d.roles || []).map(function (r, s) {
          return table.name(s) + " — " + (ROLE_NAME[r] || r) + ": +" + d.points[s];
        });
        return { kind: "hand_over", text: fmt(gettext("Hand %(n)s is over. %(roles)s"),
          { n: d.round, roles: roles.join("; ") }) };
      }
      case "game_over": {
        const winners = d.winners || [];
        if (winners.length === 1 && isYou(winners[0])) return { kind: "game_over", text: gettext("Game over. You win!") };
        return { kind: "game_over", text: fmt(gettext("Game over. Winner: %(names)s"),
          { names: winners.map(table.name).join(", ") }) };
      }
      default: return undefined;  // the platform's events: table/describe.js
    }
  });
}
