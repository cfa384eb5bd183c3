"""Template words for a game's pace (issue 26): ``{{ seconds|turn_time }}`` is "12 hours",
"1 day" or "3 days", so the lobby's menu and every game card name the time per move one way."""

from __future__ import annotations

from django import template
from django.utils.translation import ngettext

register = template.Library()

DAY = 86_400
HOUR = 3_600


@register.filter
def turn_time(seconds: object) -> str:
    """A turn-based game's time per move in words: whole days as days, else hours (a test's
    shortened clock of a few seconds reads as seconds)."""
    if not isinstance(seconds, int) or isinstance(seconds, bool) or seconds <= 0:
        return ""
    if seconds % DAY == 0:
        n = seconds // DAY
        return ngettext("%(n)s day", "%(n)s days", n) % {"n": n}
    if seconds % HOUR == 0:
        n = seconds // HOUR
        return ngettext("%(n)s hour", "%(n)s hours", n) % {"n": n}
    return ngettext("%(n)s second", "%(n)s seconds", seconds) % {"n": seconds}
