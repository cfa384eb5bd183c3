/* Cribbage's events in words, for the log ("What happened").
 *
 * Lines use only what the event says to this receiver (its redacted form), so the log can be
 * rebuilt from the stored events after a reload: another seat's lay-away never names its
 * cards, one's own does (C30c). Lines about the viewer are their own messages ("You play…",
 * "Вы играете…"), never "You" dropped into a third-person sentence.
 */
import { cardText } from "../../table/cards.js";
import { describerOf } from "../../table/describe.js";
import { fmt, gettext } from "../../table/i18n.js";
import { spokenPeg, spokenShow } from "./spoken.js";

function cards(list) { return (list || []).map(cardText).join(" "); }

/** `table`: {you: seat | null, name(seat) -> "you" or the name, seatName(seat) -> the name}.
 *  Returns describe(ev) for TableLog. Lines that list both players use their names
 *  (seatName): "you" is never put into a frame written for a name ("あなたさん"). */
export function describer(table) {
  return describerOf(table, function (ev, { d, me, who, you }) {
    switch (ev.type) {
      case "cut_for_deal": {
        const parts = (d.cuts || []).map(function (c) {
          return fmt(gettext("%(a)s cuts %(ca)s, %(b)s cuts %(cb)s"),
            { a: table.seatName(0), ca: cardText(c[0]), b: table.seatName(1), cb: cardText(c[1]) });
        });
        const tie = parts.length > 1 ? " " + gettext("(a tie: cut again)") : "";
        return { kind: "round_dealt", text: gettext("Cut for the deal:") + " " + parts.join("; ") + tie + " — " +
          (you(d.dealer) ? gettext("you deal first (the higher card).")
            : fmt(gettext("%(name)s deals first (the higher card)."), { name: table.name(d.dealer) })) };
      }
      case "round_dealt":
        return { kind: "round_dealt", text: you(d.dealer)
          ? fmt(gettext("Hand %(n)s: you deal; the crib is yours."), { n: d.round })
          : fmt(gettext("Hand %(n)s: %(dealer)s deals; the crib is theirs."), { n: d.round, dealer: table.name(d.dealer) }) };
      case "laid_away": {
        const late = d.timeout ? " " + gettext("(time ran out)") : "";
        if (me && d.cards) return fmt(gettext("You laid away %(cards)s."), { cards: cards(d.cards) }) + late;
        return fmt(gettext("%(name)s laid away two cards."), { name: who }) + late;
      }
      case "starter_cut": return fmt(gettext("The starter is %(card)s."), { card: cardText(d.card) });
      case "his_heels":
        return { kind: "score", text: you(d.seat) ? gettext("His heels: you score 2.")
          : fmt(gettext("His heels: %(name)s scores 2."), { name: who }) };
      case "play": {
        const vals = { name: who, card: cardText(d.card), count: d.count, why: spokenPeg(d.items), n: d.points };
        const late = d.timeout ? " " + gettext("(time ran out)") : "";
        if (d.points) {
          return { kind: "score", text: (me ? fmt(gettext("You play %(card)s: %(count)s — %(why)s."), vals)
            : fmt(gettext("%(name)s plays %(card)s: %(count)s — %(why)s."), vals)) + late };
        }
        return (me ? fmt(gettext("You play %(card)s: %(count)s."), vals)
          : fmt(gettext("%(name)s plays %(card)s: %(count)s."), vals)) + late;
      }
      case "go":
        return me ? fmt(gettext("Go: you cannot play on %(count)s."), { count: d.count })
          : fmt(gettext("Go: %(name)s cannot play on %(count)s."), { name: who, count: d.count });
      case "last_card":
        return { kind: "score", text: me ? fmt(gettext("Last card at %(count)s: you score 1."), { count: d.count })
          : fmt(gettext("Last card at %(count)s: %(name)s scores 1."), { name: who, count: d.count }) };
      case "count_over":
        if (d.next_lead === null || d.next_lead === undefined) return gettext("The play is over: the show.");
        return you(d.next_lead) ? gettext("The count starts again at 0; you lead.")
          : fmt(gettext("The count starts again at 0; %(name)s leads."), { name: table.name(d.next_lead) });
      case "show": {
        const vals = { name: who, cards: cards(d.cards), starter: cardText(d.starter),
          words: spokenShow(d.breakdown), n: d.points };
        let text;
        if (d.what === "crib") {
          text = me ? fmt(gettext("Your crib %(cards)s + %(starter)s: %(words)s (%(n)s)."), vals)
            : fmt(gettext("%(name)s's crib %(cards)s + %(starter)s: %(words)s (%(n)s)."), vals);
        } else {
          text = me ? fmt(gettext("Your hand %(cards)s + %(starter)s: %(words)s (%(n)s)."), vals)
            : fmt(gettext("%(name)s's hand %(cards)s + %(starter)s: %(words)s (%(n)s)."), vals);
        }
        return { kind: "show", text: text };
      }
      case "hand_over": {
        const p = d.points || [0, 0];
        return { kind: "hand_over", text: fmt(gettext("Hand %(n)s is over: %(a)s +%(pa)s, %(b)s +%(pb)s."),
          { n: d.round, a: table.seatName(0), pa: p[0], b: table.seatName(1), pb: p[1] }) };
      }
      case "game_over": {
        const w = (d.winners || [])[0];
        const s = d.scores || [0, 0];
        const vals = { name: table.name(w), w: s[w], l: s[1 - w] };
        return { kind: "game_over", text: you(w) ? fmt(gettext("Game over: you win, %(w)s to %(l)s."), vals)
          : fmt(gettext("Game over: %(name)s wins, %(w)s to %(l)s."), vals) };
      }
      default: return undefined;  // the platform's events: table/describe.js
    }
  });
}
