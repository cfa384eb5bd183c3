"""Django admin for games: browse, search, read the full (unredacted) log, and act through the
service layer.

Admins see everything -- that is the point of the event log here -- but they change nothing
directly: abandon and "end now" call ``games.services`` (same locks, versions, broadcasts as
every other writer), and every game field is read-only.  "View as seat N" shows exactly what
that seat receives, built by ``selectors.game_payload_for_seat`` (the engine's redaction).
"""

from __future__ import annotations

import json
from typing import Any

from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.db.models import QuerySet
from django.http import Http404, HttpRequest, HttpResponse
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils.html import format_html_join
from django.utils.translation import gettext_lazy as _

from games import selectors, services
from games.errors import ServiceError
from games.models import ChatMessage, Event, Game, Round, Seat


class SeatInline(admin.TabularInline):
    model = Seat
    fields = ("number", "user", "score", "joined_at")
    readonly_fields = fields
    extra = 0
    can_delete = False
    show_change_link = False

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


class RoundInline(admin.TabularInline):
    model = Round
    fields = ("number", "dealer", "started_at", "ended_at", "result")
    readonly_fields = fields
    extra = 0
    can_delete = False

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


class EventInline(admin.TabularInline):
    """The full log, unredacted: admins only (the admin site requires staff)."""

    model = Event
    fields = ("seq", "version", "origin", "type", "payload", "created_at")
    readonly_fields = fields
    extra = 0
    can_delete = False
    ordering = ("seq",)

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    @admin.display(description=_("payload"))
    def payload(self, obj: Event) -> str:
        return json.dumps(obj.data, sort_keys=True)


@admin.register(Game)
class GameAdmin(admin.ModelAdmin):
    list_display = ("id", "kind", "status", "host", "players", "version", "created_at", "ended_at")
    list_filter = ("kind", "status", "private", "created_at", "started_at", "ended_at")
    search_fields = ("seats__user__username", "seats__user__display_name", "invite_code")
    date_hierarchy = "created_at"
    readonly_fields = (
        "host", "kind", "settings", "private", "invite_code",
        "status", "version", "created_at", "updated_at", "started_at", "ended_at",
        "winners", "deadlines", "next_deadline_at", "view_as_links",
    )  # fmt: skip
    exclude = ("state", "seed")
    inlines = (SeatInline, RoundInline, EventInline)
    actions = ("abandon_games", "end_games_now")

    def get_queryset(self, request: HttpRequest) -> QuerySet[Game]:
        return super().get_queryset(request).select_related("host").prefetch_related("seats__user")

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False  # games are created by players, through the service layer

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False  # the log is evidence; abandon instead

    @admin.display(description=_("players"))
    def players(self, obj: Game) -> str:
        return ", ".join(str(s.user) for s in obj.seats.all())

    @admin.display(description=_("view as"))
    def view_as_links(self, obj: Game) -> str:
        links = [(reverse("admin:games_game_view_as", args=[obj.pk, "spectator"]), _("spectator"))]
        links += [
            (reverse("admin:games_game_view_as", args=[obj.pk, s.number]), f"seat {s.number}")
            for s in obj.seats.all()
        ]
        return format_html_join(" · ", '<a href="{}">{}</a>', links)

    def get_urls(self) -> list[Any]:
        return [
            path(
                "<int:game_id>/view-as/<str:seat>/",
                self.admin_site.admin_view(self.view_as),
                name="games_game_view_as",
            ),
            *super().get_urls(),
        ]

    def view_as(self, request: HttpRequest, game_id: int, seat: str) -> HttpResponse:
        """Exactly the redacted payload ``seat`` receives now (``None``: a spectator)."""
        if not self.has_view_permission(request):
            raise PermissionDenied
        game = Game.objects.filter(pk=game_id).first()
        if game is None:
            raise Http404
        number: int | None = None
        if seat != "spectator":
            try:
                number = int(seat)
            except ValueError:
                raise Http404 from None
            if not game.seats.filter(number=number).exists():
                raise Http404
        payload = selectors.game_payload_for_seat(game=game, seat=number)
        context = {
            **self.admin_site.each_context(request),
            "opts": self.model._meta,
            "original": game,
            "title": f"{game} as {'spectator' if number is None else f'seat {number}'}",
            "seat": number,
            "payload_json": json.dumps(payload, indent=2, sort_keys=True),
        }
        return TemplateResponse(request, "admin/games/game/view_as.html", context)

    def _run(self, request: HttpRequest, queryset: QuerySet[Game], fn: Any, verb: str) -> None:
        done = 0
        for game in queryset:
            try:
                fn(game=game, user=request.user)
                done += 1
            except ServiceError as exc:
                self.message_user(request, f"{game}: {exc.detail}", messages.WARNING)
        if done:
            self.message_user(request, f"{verb} {done} game(s).", messages.SUCCESS)

    @admin.action(description=_("Abandon the selected games"))
    def abandon_games(self, request: HttpRequest, queryset: QuerySet[Game]) -> None:
        self._run(request, queryset, services.game_abandon, "Abandoned")

    @admin.action(description=_("End the selected games now (current scores)"))
    def end_games_now(self, request: HttpRequest, queryset: QuerySet[Game]) -> None:
        self._run(request, queryset, services.game_end_now, "Ended")


class ReadOnlyAdmin(admin.ModelAdmin):
    """An admin page that shows and never writes: a log (the events) or derived data (the
    history app's records, ratings and statistics, rebuilt by ``history_recompute``), where a
    hand edit would make the record disagree with what was played."""

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


@admin.register(Event)
class EventAdmin(ReadOnlyAdmin):
    """The whole log, read-only and unredacted (staff only)."""

    list_display = ("game", "seq", "version", "origin", "type", "created_at")
    list_filter = ("origin", "type", "created_at")
    search_fields = ("game__id", "type")
    readonly_fields = ("game", "round", "seq", "version", "origin", "type", "data", "created_at")


@admin.register(ChatMessage)
class ChatMessageAdmin(admin.ModelAdmin):
    """Table chat, for moderation: read everything; the one change is hiding a line (the record
    stays).  Lines are written only by players, through ``services.game_chat_post``."""

    list_display = ("created_at", "game", "user", "seat", "text", "hidden")
    list_filter = ("hidden",)
    search_fields = ("text", "user__username", "=game__id")
    list_select_related = ("game", "user")
    readonly_fields = ("game", "user", "seat", "text", "created_at")
    fields = (*readonly_fields, "hidden")
    ordering = ("-created_at",)

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False
