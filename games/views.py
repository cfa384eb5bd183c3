"""The games' web pages: the lobby (`/games/`) and a game's table (`/games/<id>/`).

Views stay thin: reads go through `games.selectors`, every change through `games.services`
(the only writer). A `ServiceError` becomes a friendly message on the page it came from.
The live table itself is `static/js/table.js`, speaking the public WebSocket protocol.
"""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST

from games import selectors, services
from games.errors import ServiceError
from games.models import DRAW_SECONDS, TARGET_SCORES, Game


#: Friendly words for the service layer's stable error codes (the code is the contract;
#: its English `detail` is for API clients).
def _friendly(error: ServiceError) -> str:
    words = {
        "not_found": _("That game does not exist, or the invite code is wrong."),
        "game_full": _("That game already has 8 players."),
        "already_joined": _("You already have a seat at this game."),
        "game_started": _("That game has already started."),
        "game_over": _("That game is over."),
        "not_host": _("Only the host can do that."),
        "not_enough_players": _("A game needs 2 to 8 players."),
        "not_seated": _("You have no seat at this game."),
        "bad_settings": _("Those settings are not valid."),
        "cannot_kick_self": _("The host cannot remove themselves; leave instead."),
        "no_such_seat": _("Nobody sits at that seat any more."),
    }
    return words.get(error.code, error.detail)


def _table_url(game: Game | int) -> str:
    return reverse("games:table", args=[game.pk if isinstance(game, Game) else game])


def _card(game: Game, user: Any) -> dict[str, Any]:
    """A game as the lobby lists it (the selectors' public facts)."""
    detail = selectors.game_detail(game=game, user=user)
    detail["taken"] = len(detail["seats"])
    return detail


@login_required
def lobby(request: HttpRequest) -> HttpResponse:
    """Open public games, the user's own games, the create form and join-by-code."""
    open_games = [_card(g, request.user) for g in selectors.game_list(user=request.user)[:50]]
    mine: dict[str, list[dict[str, Any]]] = {"lobby": [], "playing": [], "finished": []}
    for g in selectors.game_list(user=request.user, scope="mine")[:100]:
        if g.status in mine:
            mine[g.status].append(_card(g, request.user))
    return render(
        request,
        "games/lobby.html",
        {
            "open_games": [g for g in open_games if g["you"] is None],
            "mine": mine,
            "target_scores": TARGET_SCORES,
            "draw_seconds": DRAW_SECONDS,
        },
    )


def _bool(value: str | None) -> bool:
    return value in {"1", "on", "true", "yes"}


@login_required
@require_POST
def create(request: HttpRequest) -> HttpResponse:
    try:
        target = int(request.POST.get("target_score", "100"))
        raw = request.POST.get("draw_seconds", "")
        draw = int(raw) if raw else None
    except ValueError:
        messages.error(request, _("Those settings are not valid."))
        return redirect("games:lobby")
    try:
        game = services.game_create(
            host=request.user,
            target_score=target,
            draw_seconds=draw,
            pile_draw=_bool(request.POST.get("pile_draw")),
            private=_bool(request.POST.get("private")),
        )
    except ServiceError as error:
        messages.error(request, _friendly(error))
        return redirect("games:lobby")
    return HttpResponseRedirect(_table_url(game))


@login_required
@require_POST
def join_by_code(request: HttpRequest) -> HttpResponse:
    code = (request.POST.get("invite_code") or "").strip().upper()
    try:
        game = selectors.game_by_invite_code(invite_code=code)
        if selectors.seat_for_user(game=game, user=request.user) is None:
            services.game_join(game=game, user=request.user, invite_code=code)
    except ServiceError as error:
        messages.error(request, _friendly(error))
        return redirect("games:lobby")
    return HttpResponseRedirect(_table_url(game))


@login_required
@require_POST
def join(request: HttpRequest, game_id: int) -> HttpResponse:
    code = request.POST.get("invite_code") or None
    try:
        services.game_join(game=game_id, user=request.user, invite_code=code)
    except ServiceError as error:
        messages.error(request, _friendly(error))
        if error.code == "not_found":
            return redirect("games:lobby")
    return HttpResponseRedirect(_table_url(game_id))


@login_required
@require_POST
def leave(request: HttpRequest, game_id: int) -> HttpResponse:
    try:
        services.game_leave(game=game_id, user=request.user)
    except ServiceError as error:
        messages.error(request, _friendly(error))
        return HttpResponseRedirect(_table_url(game_id))
    messages.success(request, _("You left the game."))
    return redirect("games:lobby")


@login_required
@require_POST
def kick(request: HttpRequest, game_id: int) -> HttpResponse:
    try:
        seat = int(request.POST.get("seat", ""))
        services.game_kick(game=game_id, host=request.user, seat_number=seat)
    except ValueError:
        messages.error(request, _("Nobody sits at that seat any more."))
    except ServiceError as error:
        messages.error(request, _friendly(error))
    return HttpResponseRedirect(_table_url(game_id))


@login_required
@require_POST
def start(request: HttpRequest, game_id: int) -> HttpResponse:
    try:
        services.game_start(game=game_id, user=request.user)
    except ServiceError as error:
        messages.error(request, _friendly(error))
    return HttpResponseRedirect(_table_url(game_id))


@login_required
def table(request: HttpRequest, game_id: int) -> HttpResponse:
    """A game's page: its lobby (seats, invite, start) or its live table."""
    code = request.GET.get("code") or None
    try:
        game = selectors.game_for_user(game_id=game_id, user=request.user, invite_code=code)
    except ServiceError as error:
        messages.error(request, _friendly(error))
        return redirect("games:lobby")
    detail = selectors.game_detail(game=game, user=request.user)
    invite_url = None
    if detail["invite_code"]:
        invite_url = request.build_absolute_uri(
            f"{_table_url(game)}?code={detail['invite_code']}"
        )
    boot = {
        "game": game.pk,
        "you": detail["you"],
        "user_id": request.user.pk,
        "status": detail["status"],
        "host_id": detail["host"]["id"],
        "seats": [{"seat": s["seat"], "name": s["name"]} for s in detail["seats"]],
        "ws": f"/ws/games/{game.pk}/",
    }
    return render(
        request,
        "games/table.html",
        {
            "game": game,
            "detail": detail,
            "is_host": detail["host"]["id"] == request.user.pk,
            "invite_url": invite_url,
            "invite_code": code,
            "boot": boot,
        },
    )
