/* Translations for table modules: Django's JavaScript catalog (the classic script
 * `games:jsi18n`, loaded before any module) with English fallbacks, so a module still works
 * when the catalog failed to load.
 *
 * makemessages finds strings by their call: write gettext('text') or ngettext(…) with
 * literal strings (no template literals) so they reach locale/<lang>/LC_MESSAGES/djangojs.po.
 */

/** The translation of `s` in the page's language. */
export function gettext(s) {
  return window.gettext ? window.gettext(s) : s;
}

/** The singular or plural translation of a message, by the language's plural rule. */
export function ngettext(singular, plural, n) {
  return window.ngettext ? window.ngettext(singular, plural, n) : (n === 1 ? singular : plural);
}

/** `%(name)s` placeholders filled from `values` (translations may reorder them). */
export function fmt(s, values) {
  return String(s).replace(/%\((\w+)\)s/g, function (_, k) {
    return values[k] === undefined || values[k] === null ? "" : String(values[k]);
  });
}

/** The page's language ("en", "ja", "ru"): the <html lang> the server rendered. */
export function language() {
  return (document.documentElement.lang || "en").slice(0, 2);
}
