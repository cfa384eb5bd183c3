/* Triple Crown's words: roles, trumps, and the scoring reasons of the engine's `hand_over`
 * (games/engines/triple_crown/scoring.py lists the reason codes and their numbers).
 *
 * A role is only ever named for the viewer's own seat during a hand (`state.you.role`) and for
 * every seat once the hand is over (`hand_over.roles`): these helpers never guess one.
 */
import { fmt, gettext, ngettext } from "../../table/i18n.js";
import { SUIT } from "../../table/cards.js";

export const ROLE_NAME = {
  high: gettext("High Crown"),
  low: gettext("Low Crown"),
  team: gettext("Team Crown"),
  double: gettext("Double Stakes"),
  opponent: gettext("Against Double Stakes"),
};

/** What the role is trying to do, in one line (the badge's second line). */
export const ROLE_GOAL = {
  high: gettext("Take at least 5 tricks."),
  low: gettext("Take no trick at all."),
  team: gettext("Make a crown fail: High Crown under 5 tricks, or Low Crown taking one."),
  double: gettext("Alone against three: take no trick, or at least 5."),
  opponent: gettext("With the other two, hold Double Stakes to 1–4 tricks."),
};

export const SUIT_WORD = {
  S: gettext("Spades"), H: gettext("Hearts"), D: gettext("Diamonds"), C: gettext("Clubs"),
};

/** "♥ Hearts" or "No trump" for a trump choice (S, H, D, C, NT). */
export function trumpsText(t) {
  if (t === "NT") return gettext("No trump");
  return SUIT[t] + " " + SUIT_WORD[t];
}

export const MEMO_WORD = { high: gettext("High Crown"), low: gettext("Low Crown") };

function tricks(n) {
  return fmt(ngettext("%(n)s trick", "%(n)s tricks", n), { n: n });
}

/** One scoring reason (a dict of the engine's hand result) in words. */
export function reasonText(r) {
  switch (r.code) {
    case "high_made":
      return fmt(gettext("took %(tricks)s — 5 needed: made it"), { tricks: tricks(r.tricks) });
    case "high_failed":
      return fmt(gettext("took %(tricks)s — 5 needed: failed"), { tricks: tricks(r.tricks) });
    case "low_made":
      return gettext("took no trick: made it");
    case "low_failed":
      return fmt(gettext("took %(tricks)s — none allowed: failed"), { tricks: tricks(r.tricks) });
    case "team_low_failed":
      return fmt(gettext("Low Crown took %(tricks)s"), { tricks: tricks(r.low_tricks) });
    case "team_high_failed":
      return fmt(gettext("High Crown took only %(tricks)s: 5 − %(h)s"),
        { tricks: tricks(r.high_tricks), h: r.high_tricks });
    case "team_no_failure":
      return gettext("both crowns made it: nothing for Team Crown");
    case "double_made":
      if (r.assured) {
        return fmt(gettext("a 5th trick was certain with %(tricks)s taken: made it"), { tricks: tricks(r.tricks) });
      }
      return r.achieved === "low"
        ? gettext("took no trick — Low Crown achieved: made it")
        : fmt(gettext("took %(tricks)s — High Crown achieved: made it"), { tricks: tricks(r.tricks) });
    case "double_failed":
      return fmt(gettext("took %(tricks)s — none or 5+ needed: failed"), { tricks: tricks(r.tricks) });
    case "opponents_low_memo":
      return fmt(gettext("Double Stakes failed with %(tricks)s, memo Low: 2 × %(t)s"),
        { tricks: tricks(r.tricks), t: r.tricks });
    case "opponents_high_memo":
      return fmt(gettext("Double Stakes failed with %(tricks)s, memo High: (5 − %(t)s) × 2"),
        { tricks: tricks(r.tricks), t: r.tricks });
    case "double_made_against":
      return gettext("Double Stakes made it: nothing for the three");
    default:
      return r.code;
  }
}

/** Why the hand stopped before trick 13 (the engine's `early_end`), or "". */
export function earlyEndText(code, dsName) {
  switch (code) {
    case "five_tricks":
      return fmt(gettext("%(name)s (Double Stakes) won a 5th trick: the hand stopped there."), { name: dsName });
    case "sure_tricks":
      return fmt(gettext("%(name)s (Double Stakes) was sure of a 5th trick: the hand stopped there."), { name: dsName });
    case "cannot_win":
      return fmt(gettext("%(name)s (Double Stakes) could no longer take a trick: the hand stopped there."), { name: dsName });
    default:
      return "";
  }
}

export { tricks as tricksText };
