"""Admin pages of the after-game models: read-only, like the games app's event log.  Records,
ratings and statistics are derived data: they are rebuilt with ``manage.py history_recompute``,
never edited by hand."""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.http import HttpRequest

from history.models import GameRecord, PlayerStats, Rating


class _ReadOnly(admin.ModelAdmin):
    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


@admin.register(GameRecord)
class GameRecordAdmin(_ReadOnly):
    list_display = ("game", "kind", "finished_at", "rated", "unrated_reason")
    list_filter = ("kind", "rated", "unrated_reason")
    search_fields = ("game__id",)


@admin.register(Rating)
class RatingAdmin(_ReadOnly):
    list_display = ("user", "kind", "ordinal", "mu", "sigma", "games", "updated_at")
    list_filter = ("kind",)
    search_fields = ("user__username",)


@admin.register(PlayerStats)
class PlayerStatsAdmin(_ReadOnly):
    list_display = ("user", "kind", "games", "wins", "updated_at")
    list_filter = ("kind",)
    search_fields = ("user__username",)
