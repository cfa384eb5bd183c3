"""The after-game pages: public player profiles, leaderboards and the replay page.

Thin, like ``games.views``: reads go through ``history.selectors`` / ``history.ratings`` /
``history.replay``.  The replay page is a shell: ``static/js/replay/player.js`` fetches the frames
from the API and hands each to the game's renderer (``static/js/replay/README.md``).
"""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.contrib.auth.views import redirect_to_login
from django.contrib.staticfiles import finders
from django.core.paginator import Paginator
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.translation import gettext as _

from crisp_site import throttles
from games.engines import DEFAULT_KIND, KINDS, engine_for
from games.errors import ServiceError
from history import ratings, replay, selectors

_PAGE = 20


def _kinds() -> list[dict[str, str]]:
    return [{"kind": k, "name": engine_for(k).NAME} for k in KINDS]


def profile(request: HttpRequest, username: str) -> HttpResponse:
    """A player's public page: statistics, ratings and games (``?kind=``, ``?page=``)."""
    try:
        user = selectors.player_by_username(username)
    except ServiceError:
        raise Http404(_("No such player.")) from None
    kind = request.GET.get("kind")
    if kind not in KINDS:
        kind = None
    viewer = request.user if request.user.is_authenticated else None
    games = selectors.player_games(user=user, viewer=viewer, kind=kind)
    page = Paginator(games, _PAGE).get_page(request.GET.get("page"))
    return render(
        request,
        "history/profile.html",
        {
            "player": selectors.player_profile(user=user, viewer=viewer),
            "page": page,
            "rows": [selectors.history_row(g, user) for g in page.object_list],
            "kinds": _kinds(),
            "kind_filter": kind,
        },
    )


def leaderboard(request: HttpRequest, kind: str | None = None) -> HttpResponse:
    """A game's leaderboard, paginated; ``?provisional=1`` includes provisional ratings."""
    if kind is None:
        return redirect("history:leaderboard", kind=DEFAULT_KIND)
    if kind not in KINDS:
        raise Http404(_("There is no such game."))
    provisional = request.GET.get("provisional") == "1"
    board = ratings.leaderboard(kind=kind, include_provisional=provisional)
    page = Paginator(board, _PAGE).get_page(request.GET.get("page"))
    first = (page.number - 1) * _PAGE + 1
    rows = [
        {"rank": first + i, "user": r.user, "rating": ratings.rating_payload(r)}
        for i, r in enumerate(page.object_list)
    ]
    return render(
        request,
        "history/leaderboard.html",
        {
            "kind": kind,
            "kind_name": engine_for(kind).NAME,
            "kinds": _kinds(),
            "page": page,
            "rows": rows,
            "provisional": provisional,
            "provisional_games": ratings.provisional_games(),
        },
    )


def replay_page(request: HttpRequest, game_id: int) -> HttpResponse:
    """The replay shell of a finished game (``?at=``, ``?view=``, ``?seat=`` are read by the
    player script, so a shared link opens at that moment).

    A public game's replay is open to a visitor without an account (issue 24), with the views a
    signed-in stranger may open (full and spectator, never a seat's); a private or missing game
    sends them to sign in, the same answer for both."""
    if wait := throttles.check(request, throttles.AnonReadThrottle):  # no account: per address
        return HttpResponse(throttles.throttled_message(wait), status=429)
    try:
        game = replay.game_for_replay(game_id=game_id, user=request.user)
    except ServiceError as error:
        if not request.user.is_authenticated and error.code == "not_found":
            return redirect_to_login(request.get_full_path())
        if error.code == "game_in_progress":
            messages.info(request, _("This game is still being played: here is its table."))
            return redirect("games:table", game_id=game_id)
        messages.error(request, _("That game does not exist, or the invite code is wrong."))
        return redirect("games:lobby")
    seats = list(game.seats.select_related("user").order_by("number"))
    you = next((s.number for s in seats if s.user_id == request.user.pk), None)
    # Only the points of view this reader may open (history.replay.seat_views).
    mine = set(replay.seat_views(game, request.user))
    seat_choices = [s for s in seats if s.number in mine]
    boot: dict[str, Any] = {
        "game": game.pk,
        "kind": game.kind,
        "you": you,
        "api": reverse("games_api:replay", args=[game.pk]),
        "seats": [
            {"seat": s.number, "name": getattr(s.user, "public_name", s.user.get_username())}
            for s in seats
        ],
        "i18n": {
            "loading": _("Loading the replay…"),
            "failed": _("The replay could not be loaded."),
            "version": _("Move %(n)s of %(total)s"),
            "scores": _("Scores"),
            "events": _("What happened"),
            "nothing": _("Nothing happened in this move that anyone could see."),
            "play": _("Play"),
            "pause": _("Pause"),
            "status": {
                "lobby": _("Lobby"),
                "playing": _("Playing"),
                "finished": _("Finished"),
                "abandoned": _("Abandoned"),
            },
            "winner": _("winner"),
        },
    }
    # The kind's visual renderer, if its table module has one (static/js/replay/README.md);
    # without it the page tells the game in words (text.js).
    renderer_js = f"js/games/{game.kind}/replay.js"
    if finders.find(renderer_js) is None:
        renderer_js = None
    return render(
        request,
        "history/replay.html",
        {
            "game": game,
            "kind_name": engine_for(game.kind).NAME,
            "seats": seats,
            "seat_choices": seat_choices,
            "you": you,
            "boot": boot,
            "results": selectors.results_table(game),
            "export_url": reverse("games_api:export", args=[game.pk]),
            "renderer_js": renderer_js,
            "renderer_css": f"css/{game.kind}.css",
        },
    )
