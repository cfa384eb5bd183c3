/* Cribbage's scores in words: the show's count as a player says it aloud ("fifteen two,
 * fifteen four, and a pair is six") and what a card scored in the play ("fifteen for 2").
 *
 * Built from the engine's breakdown items (games/engines/cribbage/scoring.py: ScoreItem
 * `{kind, points, cards}`), never from its English `spoken` string, so every language gets its
 * own sentence: each item is a whole message with the running total in it ("a run of three is
 * %(n)s" — Russian needs "серия из трёх — %(n)s", not the word for "three" dropped into an
 * English frame), the running totals are number words from the catalog (context "count
 * aloud": Russian words, Japanese digits), and the list is joined by the language's own
 * separator and "and".
 */
import { fmt, gettext } from "../../table/i18n.js";

/** Context-qualified translation (Django's catalog has pgettext); English without it. */
function pgettext(context, s) {
  return window.pgettext ? window.pgettext(context, s) : s;
}

/** The running totals of a count aloud: a hand or crib scores at most 29. */
const WORDS = [
  pgettext("count aloud", "zero"), pgettext("count aloud", "one"), pgettext("count aloud", "two"),
  pgettext("count aloud", "three"), pgettext("count aloud", "four"), pgettext("count aloud", "five"),
  pgettext("count aloud", "six"), pgettext("count aloud", "seven"), pgettext("count aloud", "eight"),
  pgettext("count aloud", "nine"), pgettext("count aloud", "ten"), pgettext("count aloud", "eleven"),
  pgettext("count aloud", "twelve"), pgettext("count aloud", "thirteen"),
  pgettext("count aloud", "fourteen"), pgettext("count aloud", "fifteen"),
  pgettext("count aloud", "sixteen"), pgettext("count aloud", "seventeen"),
  pgettext("count aloud", "eighteen"), pgettext("count aloud", "nineteen"),
  pgettext("count aloud", "twenty"), pgettext("count aloud", "twenty-one"),
  pgettext("count aloud", "twenty-two"), pgettext("count aloud", "twenty-three"),
  pgettext("count aloud", "twenty-four"), pgettext("count aloud", "twenty-five"),
  pgettext("count aloud", "twenty-six"), pgettext("count aloud", "twenty-seven"),
  pgettext("count aloud", "twenty-eight"), pgettext("count aloud", "twenty-nine"),
];

function word(n) { return WORDS[n] || String(n); }

/** One item of the show, with the running total `n` it brings the count to. */
function showItem(item, n) {
  const v = { n: word(n) };
  switch (item.kind) {
    case "fifteen": return fmt(gettext("fifteen %(n)s"), v);
    case "pair": return fmt(gettext("a pair is %(n)s"), v);
    case "run":
      if (item.cards.length === 3) return fmt(gettext("a run of three is %(n)s"), v);
      if (item.cards.length === 4) return fmt(gettext("a run of four is %(n)s"), v);
      return fmt(gettext("a run of five is %(n)s"), v);
    case "flush":
      return item.points === 5 ? fmt(gettext("a flush of five is %(n)s"), v)
        : fmt(gettext("a flush of four is %(n)s"), v);
    case "nobs": return fmt(gettext("one for his nob is %(n)s"), v);
    default: return word(n);
  }
}

/** A list of phrases joined as the language joins them ("a, b, and c"; "a, b и c"). */
export function joinPhrases(parts) {
  if (parts.length === 0) return "";
  if (parts.length === 1) return parts[0];
  const head = parts.slice(0, -1).join(gettext(", "));
  return fmt(gettext("%(list)s, and %(last)s"), { list: head, last: parts[parts.length - 1] });
}

/** The items of a show breakdown in the order a player counts them (C21). */
export function showItems(breakdown) {
  const b = breakdown || {};
  return [].concat(b.fifteens || [], b.pairs || [], b.runs || [],
    b.flush ? [b.flush] : [], b.nobs ? [b.nobs] : []);
}

/** A show's items one by one as said aloud, each with the running total it brings the count to
 *  ("fifteen two", "fifteen four", "a pair is six"); none for a hand that scores nothing. */
export function showPhrases(breakdown) {
  let running = 0;
  return showItems(breakdown).map(function (it) {
    running += it.points;
    return showItem(it, running);
  });
}

/** The whole count of a hand or the crib, as said aloud ("fifteen two, … and a pair is six"). */
export function spokenShow(breakdown) {
  const phrases = showPhrases(breakdown);
  if (!phrases.length) return gettext("nineteen — nothing");
  return joinPhrases(phrases);
}

/** What one pegging item scored ("fifteen for 2", "a run of 4 for 4"). */
function pegItem(item) {
  const v = { n: item.points, len: item.cards.length };
  switch (item.kind) {
    case "fifteen": return fmt(gettext("fifteen for %(n)s"), v);
    case "thirty_one": return fmt(gettext("thirty-one for %(n)s"), v);
    case "pair": return fmt(gettext("a pair for %(n)s"), v);
    case "pair_royal": return fmt(gettext("a pair royal for %(n)s"), v);
    case "double_pair_royal": return fmt(gettext("a double pair royal for %(n)s"), v);
    case "run": return fmt(gettext("a run of %(len)s for %(n)s"), v);
    default: return String(item.points);
  }
}

/** Everything a card scored in the play, in words, or "" when it scored nothing. */
export function spokenPeg(items) {
  return joinPhrases(pegPhrases(items));
}

/** What a card scored in the play, one phrase per item ("fifteen for 2", "a pair for 2"). */
export function pegPhrases(items) {
  return (items || []).map(pegItem);
}

/** The points that are not a card's own items: the go (the last card played when nobody can go
 *  on: the engine's `last_card`) and his heels (a Jack turned as the starter). */
export function goFor(n) { return fmt(gettext("go for %(n)s"), { n: n }); }
export function hisHeelsFor(n) { return fmt(gettext("his heels for %(n)s"), { n: n }); }
