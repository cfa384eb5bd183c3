/* Playing cards on screen, for every card game of the site: drawn in CSS (static/css/table.css,
 * no images), with spoken names for screen readers.
 * Wire notation: rank (A 2-9 T J Q K) + suit (S H D C), e.g. "TD" is the ten of diamonds.
 */
import { el } from "./dom.js";
import { fmt, gettext } from "./i18n.js";

export const SUIT = { S: "♠", H: "♥", D: "♦", C: "♣" };
const SUIT_NAME = { S: gettext("spades"), H: gettext("hearts"), D: gettext("diamonds"), C: gettext("clubs") };
const RANK_NAME = { A: gettext("ace"), T: "10", J: gettext("jack"), Q: gettext("queen"), K: gettext("king") };

export function isCourt(code) { return "JQK".indexOf(code[0]) >= 0; }
export function rankText(code) { return code[0] === "T" ? "10" : code[0]; }
export function cardText(code) { return code ? rankText(code) + SUIT[code[1]] : "?"; }
export function cardSpoken(code) {
  return fmt(gettext("%(rank)s of %(suit)s"), { rank: RANK_NAME[code[0]] || code[0], suit: SUIT_NAME[code[1]] });
}

/** A face-up card: corners with rank and suit, a big pip (or the court letter) in the middle. */
export function cardFace(code, extra) {
  const red = code[1] === "H" || code[1] === "D";
  const c = el("span", "pcard face " + (red ? "red" : "black") + (extra ? " " + extra : ""));
  c.setAttribute("role", "img");
  c.setAttribute("aria-label", cardSpoken(code));
  const tl = el("span", "corner tl");
  tl.appendChild(el("span", "r", rankText(code)));
  tl.appendChild(el("span", "s", SUIT[code[1]]));
  const br = tl.cloneNode(true);
  br.className = "corner br";
  c.appendChild(tl);
  c.appendChild(el("span", "pip" + (isCourt(code) ? " court" : ""),
    isCourt(code) ? code[0] + SUIT[code[1]] : SUIT[code[1]]));
  c.appendChild(br);
  return c;
}

/** A face-down card. */
export function cardBack(extra) {
  const c = el("span", "pcard back" + (extra ? " " + extra : ""));
  c.setAttribute("role", "img");
  c.setAttribute("aria-label", gettext("face-down card"));
  return c;
}
