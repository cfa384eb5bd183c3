/* Crisp's events in words, for the log ("What happened").
 *
 * Every line the viewer did themselves is its own message ("You drew…", "Вы взяли…"), never
 * "You" dropped into a third-person sentence: verbs agree with their subject in every language.
 * Lines use only an event's public facts, so the log can be rebuilt from stored events after a
 * reload (R4: a private look is not shown again, and one's own deck draw never names the card,
 * which may be back in the hand, hidden, R5).
 */
import { describerOf } from "../../table/describe.js";
import { fmt, gettext } from "../../table/i18n.js";
import { cardText, PLACE_WORD } from "./cards.js";

/** `table`: {you: seat | null, name(seat) -> string}. Returns describe(ev) for TableLog. */
export function describer(table) {
  const place = function (p) { return PLACE_WORD[p] || p; };

  return describerOf(table, function (ev, { d, me, who, you }) {
    switch (ev.type) {
      case "round_dealt":
        if (table.turnBased && table.turnBased()) {
          // R28: no memorise period; the look is the player's own button.
          return you(d.dealer)
            ? fmt(gettext("Round %(n)s: you deal."), { n: d.round })
            : fmt(gettext("Round %(n)s: %(dealer)s deals."), { n: d.round, dealer: table.name(d.dealer) });
        }
        return you(d.dealer)
          ? fmt(gettext("Round %(n)s: you deal. Memorise your left and right cards!"), { n: d.round })
          : fmt(gettext("Round %(n)s: %(dealer)s deals. Memorise your left and right cards!"),
            { n: d.round, dealer: table.name(d.dealer) });
      case "look":
        return me ? gettext("You looked at your left and right cards.")
          : fmt(gettext("%(name)s looked at their left and right cards."), { name: who });
      case "draw":
        if (d.source === "pile") {
          return me ? fmt(gettext("You took %(card)s from the discard pile."), { card: cardText(d.card) })
            : fmt(gettext("%(name)s took %(card)s from the discard pile."), { name: who, card: cardText(d.card) });
        }
        return me ? gettext("You drew from the deck.")
          : fmt(gettext("%(name)s drew from the deck."), { name: who });
      case "swap":
        return me
          ? fmt(gettext("You swapped your %(place)s card; %(card)s discarded."),
            { place: place(d.place), card: cardText(d.card_out) })
          : fmt(gettext("%(name)s swapped the %(place)s card; %(card)s discarded."),
            { name: who, place: place(d.place), card: cardText(d.card_out) });
      case "discard":
        return me ? fmt(gettext("You discarded %(card)s."), { card: cardText(d.card) })
          : fmt(gettext("%(name)s discarded %(card)s."), { name: who, card: cardText(d.card) });
      case "jack":
        return me ? fmt(gettext("You played %(card)s and looked at your centre card."), { card: cardText(d.card) })
          : fmt(gettext("%(name)s played %(card)s and looked at the centre card."), { name: who, card: cardText(d.card) });
      case "queen": {
        const vals = { name: who, card: cardText(d.card), place: place(d.place),
          other: table.name(d.target_seat), oplace: place(d.target_place) };
        if (me) return { kind: "queen", text: fmt(gettext("You played %(card)s: swapped your %(place)s card with %(other)s's %(oplace)s card."), vals) };
        if (you(d.target_seat)) return { kind: "queen", text: fmt(gettext("%(name)s played %(card)s: swapped their %(place)s card with your %(oplace)s card."), vals) };
        return fmt(gettext("%(name)s played %(card)s: swapped the %(place)s card with %(other)s's %(oplace)s card."), vals);
      }
      case "king":
        return me ? fmt(gettext("You played %(card)s: two extra draws."), { card: cardText(d.card) })
          : fmt(gettext("%(name)s played %(card)s: two extra draws."), { name: who, card: cardText(d.card) });
      case "king_discarded": return fmt(gettext("%(card)s goes onto the discard pile."), { card: cardText(d.card) });
      case "timeout":
        return { kind: "timeout", text: me
          ? fmt(gettext("You ran out of time; %(card)s discarded."), { card: cardText(d.card) })
          : fmt(gettext("%(name)s ran out of time; %(card)s discarded."), { name: who, card: cardText(d.card) }) };
      case "call":
        return me ? gettext("You called CRISP! Everyone else has one final turn.")
          : fmt(gettext("%(name)s called CRISP! Everyone else has one final turn."), { name: who });
      case "pass":
        if (d.timeout) {
          return { kind: "timeout", text: me ? gettext("Your time ran out: no crisp call.")
            : fmt(gettext("%(name)s's time ran out: no crisp call."), { name: who }) };
        }
        return me ? gettext("You did not call crisp.")
          : fmt(gettext("%(name)s did not call crisp."), { name: who });
      case "pile_turned": return gettext("The deck ran out: the discard pile was turned over.");
      case "reveal": return fmt(gettext("Round %(n)s is over: all cards face up."), { n: d.round });
      case "game_over": {
        const winners = d.winners || [];
        if (winners.length === 1 && you(winners[0])) return { kind: "game_over", text: gettext("Game over. You win!") };
        return fmt(gettext("Game over. Winner: %(names)s"), { names: winners.map(table.name).join(", ") });
      }
      default: return undefined;  // the platform's events: table/describe.js
    }
  });
}
