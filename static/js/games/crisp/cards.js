/* Crisp's three places in front of each player (rules/crisp.md: left, centre, right), and
 * the shared playing cards re-exported for Crisp's modules. */
import { gettext } from "../../table/i18n.js";

export { cardBack, cardFace, cardSpoken, cardText, isCourt, rankText, SUIT } from "../../table/cards.js";

export const PLACES = ["left", "centre", "right"];
export const PLACE_WORD = { left: gettext("left"), centre: gettext("centre"), right: gettext("right") };
