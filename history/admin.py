"""Admin pages of the after-game models: read-only, like the games app's event log.  Records,
ratings and statistics are derived data: they are rebuilt with ``manage.py history_recompute``,
never edited by hand."""

from __future__ import annotations

from django.contrib import admin

from games.admin import ReadOnlyAdmin
from history.models import GameRecord, PlayerStats, Rating


@admin.register(GameRecord)
class GameRecordAdmin(ReadOnlyAdmin):
    list_display = ("game", "kind", "finished_at", "rated", "unrated_reason")
    list_filter = ("kind", "rated", "unrated_reason")
    search_fields = ("game__id",)


@admin.register(Rating)
class RatingAdmin(ReadOnlyAdmin):
    list_display = ("user", "kind", "ordinal", "mu", "sigma", "games", "updated_at")
    list_filter = ("kind",)
    search_fields = ("user__username",)


@admin.register(PlayerStats)
class PlayerStatsAdmin(ReadOnlyAdmin):
    list_display = ("user", "kind", "games", "wins", "updated_at")
    list_filter = ("kind",)
    search_fields = ("user__username",)
