"""The games' web pages: the lobby (`/games/`) and a game's table (`/games/<id>/`).

Views stay thin: reads go through `games.selectors`, every change through `games.services`
(the only writer). A `ServiceError` becomes a friendly message on the page it came from.
The live table is an ES module per game kind (`static/js/games/<kind>/table.js`) on the shared
client in `static/js/table/`, speaking the public WebSocket protocol.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any
from urllib.parse import urlencode

from csp.decorators import csp_replace
from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.contrib.auth.views import redirect_to_login
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import redirect, render
from django.template.loader import select_template
from django.urls import reverse
from django.utils.translation import get_language, ngettext
from django.utils.translation import gettext as _
from django.views.decorators.clickjacking import xframe_options_sameorigin
from django.views.decorators.http import require_POST

from accounts.views import login_or_guest
from crisp_site import throttles
from games import bots, clock, extensions, presence, selectors, services, turns
from games.engines import DEFAULT_KIND, KINDS, engine_for
from games.engines.base import LIVE
from games.errors import ServiceError
from games.models import CHAT_MAX, NAME_MAX, Game


#: Friendly words for the service layer's stable error codes (the code is the contract;
#: its English `detail` is for API clients).
def _friendly(error: ServiceError) -> str:
    words = {
        "not_found": _("That game does not exist, or the invite code is wrong."),
        "game_full": _("That game has no free seat."),
        "too_many_players": _("That game has more players than it allows."),
        "bad_kind": _("There is no such game."),
        "bad_level": _("There is no such level."),
        "bad_opponents": _("That game cannot have that many computer players."),
        "not_sat_in": _("Nobody is sitting in for you."),
        "no_computer_players": _("That game has no computer players yet."),
        "already_joined": _("You already have a seat at this game."),
        "game_started": _("That game has already started."),
        "game_over": _("That game is over."),
        "not_host": _("Only the host can do that."),
        "not_enough_players": _("Not enough players to start yet."),
        "not_seated": _("You have no seat at this game."),
        "bad_settings": _("Those settings are not valid."),
        "cannot_kick_self": _("The host cannot remove themselves; leave instead."),
        "no_such_seat": _("Nobody sits at that seat any more."),
        "bad_name": _("A game's name is at most 60 characters."),
        "not_finished": _("A rematch starts once the game is over."),
        "already_left": _("You have already left this game."),
    }
    if error.code in ("not_enough_players", "too_many_players") and "min" in error.extra:
        low, high = error.extra["min"], error.extra["max"]
        if low == high:
            return ngettext(
                "This game needs exactly %(n)d player.",
                "This game needs exactly %(n)d players.",
                low,
            ) % {"n": low}
        return _("This game needs %(low)d to %(high)d players.") % {"low": low, "high": high}
    return words.get(error.code, error.detail)


def _table_url(game: Game | int) -> str:
    return reverse("games:table", args=[game.pk if isinstance(game, Game) else game])


def _card(game: Game, user: Any) -> dict[str, Any]:
    """A game as the lobby lists it (the selectors' public facts)."""
    detail = selectors.game_detail(game=game, user=user)
    detail["taken"] = len(detail["seats"])
    detail["kind_name"] = engine_for(game.kind).NAME
    return detail


def _with_ratings(cards: list[dict[str, Any]]) -> None:
    """Put each seated player's rating of the card's game beside them (one query per kind)."""
    ids: dict[str, set[int]] = defaultdict(set)
    for c in cards:
        ids[c["kind"]] |= {s["user_id"] for s in c["seats"]}
    found = {kind: extensions.seat_ratings(users, kind) for kind, users in ids.items()}
    for c in cards:
        for s in c["seats"]:
            s["rating"] = found[c["kind"]].get(s["user_id"])


def _kinds() -> list[dict[str, Any]]:
    """Every game the host may pick, with its engine's settings menu (the create form renders
    one fieldset per kind from ``templates/games/<kind>/_settings_form.html``)."""
    return [
        {
            "kind": kind,
            "name": engine_for(kind).NAME,
            "min_seats": engine_for(kind).MIN_SEATS,
            "max_seats": engine_for(kind).MAX_SEATS,
            "form": f"games/{kind}/_settings_form.html",
            "props": engine_for(kind).SETTINGS_SCHEMA["properties"],
            "bots": kind in bots.GAMES,
            # Quick match: the seat counts one may ask for, and the one chosen unless changed.
            "match_seats": list(range(engine_for(kind).MIN_SEATS, engine_for(kind).MAX_SEATS + 1)),
            "match_default": services.match_default_seats(kind),
        }
        for kind in KINDS
    ]


def home(request: HttpRequest) -> HttpResponse:
    """The site's front door, open to everybody: every game the engine registry knows, each
    described by its own partial (``templates/games/<kind>/_home.html``: a one-line pitch and a
    miniature of its table) so this page never names a game, with one-click buttons into the
    existing vs-computer and create-lobby flows (a signed-out visitor is sent to sign up)."""
    kinds = [{**k, "home": f"games/{k['kind']}/_home.html"} for k in _kinds()]
    return render(request, "home.html", {"kinds": kinds})


def settings_from_form(kind: str, data: Any) -> dict[str, Any]:
    """The host's choices for ``kind`` from a submitted form, typed by the kind's
    ``SETTINGS_SCHEMA`` (form fields are named ``<kind>-<setting>``): booleans are checkboxes,
    an empty value of a nullable setting is null, integers are parsed.  Whether the values are
    allowed is the engine's to say (``host_settings``, through the service layer).  The pace
    menu's turn-based time is dropped from a live game's choices (issue 26)."""
    out: dict[str, Any] = {}
    for name, prop in engine_for(kind).SETTINGS_SCHEMA["properties"].items():
        types = prop["type"] if isinstance(prop["type"], list) else [prop["type"]]
        raw = data.get(f"{kind}-{name}")
        if "boolean" in types:
            out[name] = _bool(raw)
        elif raw is None:
            continue  # not on the form: the engine's default
        elif raw == "" and "null" in types:
            out[name] = None
        elif "integer" in types:
            out[name] = int(raw)
        else:
            out[name] = raw
    if out.get("pace") == LIVE:
        # The turn-based time menu is on the form beside the pace (hidden by lobby.js, sent
        # without JavaScript): a live game has no turn_seconds (issue 26).
        out.pop("turn_seconds", None)
    return out


def _anonymous_throttled(request: HttpRequest) -> HttpResponse | None:
    """A 429 page when an anonymous visitor's address read too much (``anon_read``), else None.
    Signed-in users (guests too) are not counted here."""
    if wait := throttles.check(request, throttles.AnonReadThrottle):
        response = HttpResponse(throttles.throttled_message(wait), status=429)
        response["Retry-After"] = str(wait)
        return response
    return None


def watch(request: HttpRequest) -> HttpResponse:
    """Public games in progress, for everybody: an anonymous visitor's "Watch" (the header's
    Watch link opens the lobby, which sends a visitor without an account here).  Watching needs
    no account (issue 24); playing does, so the page says how to get one."""
    if refused := _anonymous_throttled(request):
        return refused
    user = request.user if request.user.is_authenticated else None
    watch = [_card(g, request.user) for g in selectors.games_to_watch(user=user)[:50]]
    _with_ratings(watch)
    login_url = _login_url(reverse("games:lobby"))
    return render(request, "games/watch.html", {"watch": watch, "login_url": login_url})


def _login_url(next_url: str) -> str:
    """The log-in page, back to ``next_url`` after (a watcher's way to a seat)."""
    return f"{reverse(settings.LOGIN_URL)}?{urlencode({'next': next_url})}"


def lobby(request: HttpRequest) -> HttpResponse:
    """Open public games, the user's own games, the create form and join-by-code, and how many
    people are online (``presence.online_count``).  ``?kind=`` shows only games of that kind.
    A visitor without an account is shown the games they may watch (``watch``)."""
    if not request.user.is_authenticated:
        return redirect("games:watch")
    kind = request.GET.get("kind")
    if kind not in KINDS:
        kind = None
    open_games = [
        _card(g, request.user) for g in selectors.game_list(user=request.user, kind=kind)[:50]
    ]
    mine: dict[str, list[dict[str, Any]]] = {"lobby": [], "playing": [], "finished": []}
    for g in selectors.game_list(user=request.user, scope="mine", kind=kind)[:100]:
        # A game in progress the player left is not theirs to play any more.
        left = any(s.user_id == request.user.pk and s.left_at for s in g.seats.all())
        if g.status in mine and not (left and g.status == Game.Status.PLAYING):
            mine[g.status].append(_card(g, request.user))
    watch = [_card(g, request.user) for g in selectors.games_to_watch(user=request.user)[:20]]
    _with_ratings([*open_games, *watch, *(c for cards in mine.values() for c in cards)])
    # The viewer is online too (presence.ONLINE_PAGE_SECONDS), then everyone is counted.
    presence.seen_online(presence.person_of(request.user, ""))
    online = presence.online_count()
    return render(
        request,
        "games/lobby.html",
        {
            "open_games": [g for g in open_games if g["you"] is None],
            "mine": mine,
            "kinds": _kinds(),
            "kind_filter": kind,
            "new_kind": kind or DEFAULT_KIND,
            "watch": watch,
            "name_max": NAME_MAX,
            "online": online,
            "match_wait_s": services.MATCH_WAIT_MS // 1000,
        },
    )


def _bool(value: str | None) -> bool:
    return value in {"1", "on", "true", "yes"}


@login_or_guest  # an anonymous visitor's one click plays as a guest
@require_POST
def create(request: HttpRequest) -> HttpResponse:
    kind = request.POST.get("kind", DEFAULT_KIND)
    try:
        chosen = settings_from_form(kind, request.POST) if kind in KINDS else {}
    except ValueError:
        messages.error(request, _("Those settings are not valid."))
        return redirect("games:lobby")
    try:
        game = services.game_create(
            host=request.user,
            kind=kind,
            settings=chosen,
            private=_bool(request.POST.get("private")),
        )
    except ServiceError as error:
        messages.error(request, _friendly(error))
        return redirect("games:lobby")
    name = (request.POST.get("name") or "").strip()
    if name:
        try:
            services.game_rename(game=game, user=request.user, name=name)
        except ServiceError as error:
            messages.error(request, _friendly(error))
    return HttpResponseRedirect(_table_url(game))


@login_or_guest  # an anonymous visitor's one click plays as a guest
@require_POST
def vs_computer(request: HttpRequest) -> HttpResponse:
    """Play against the computer: a started private game with computer opponents."""
    kind = request.POST.get("kind", DEFAULT_KIND)
    try:
        opponents = int(request.POST["opponents"]) if request.POST.get("opponents") else None
        chosen = settings_from_form(kind, request.POST) if kind in KINDS else {}
    except ValueError:
        messages.error(request, _("Those settings are not valid."))
        return redirect("games:lobby")
    try:
        game = services.game_vs_computer(
            user=request.user,
            kind=kind,
            level=request.POST.get("level", "medium"),
            opponents=opponents,
            settings=chosen,
        )
    except ServiceError as error:
        messages.error(request, _friendly(error))
        return redirect("games:lobby")
    return HttpResponseRedirect(_table_url(game))


@login_required
@require_POST
def add_bot(request: HttpRequest, game_id: int) -> HttpResponse:
    try:
        services.game_add_bot(
            game=game_id, host=request.user, level=request.POST.get("level", "medium")
        )
    except ServiceError as error:
        messages.error(request, _friendly(error))
    return HttpResponseRedirect(_table_url(game_id))


@login_required
@require_POST
def back(request: HttpRequest, game_id: int) -> HttpResponse:
    """The "I'm back" button: take one's seat back from the computer sitting in."""
    try:
        services.game_back(game=game_id, user=request.user)
    except ServiceError as error:
        messages.error(request, _friendly(error))
    return HttpResponseRedirect(_table_url(game_id))


@login_or_guest  # an anonymous visitor's one click plays as a guest
@require_POST
def join_by_code(request: HttpRequest) -> HttpResponse:
    if wait := throttles.check(request, throttles.JoinThrottle):  # bounds guessing codes
        messages.error(request, throttles.throttled_message(wait))
        return redirect("games:lobby")
    code = (request.POST.get("invite_code") or "").strip().upper()
    try:
        game = selectors.game_by_invite_code(invite_code=code)
        if selectors.seat_for_user(game=game, user=request.user) is None:
            services.game_join(game=game, user=request.user, invite_code=code)
    except ServiceError as error:
        messages.error(request, _friendly(error))
        return redirect("games:lobby")
    return HttpResponseRedirect(_table_url(game))


@login_or_guest  # an anonymous visitor's one click plays as a guest
@require_POST
def join(request: HttpRequest, game_id: int) -> HttpResponse:
    if wait := throttles.check(request, throttles.JoinThrottle):
        messages.error(request, throttles.throttled_message(wait))
        return redirect("games:lobby")
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


def table(request: HttpRequest, game_id: int) -> HttpResponse:
    """A game's page: its lobby (seats, invite, start) or its live table.

    Open to a visitor without an account for a public game, as a spectator (issue 24: the
    spectator's view, live; "Sign in or play as a guest" where the seat buttons are).  A private
    game, or one that does not exist, sends them to sign in (an invite link then brings them
    back), the same answer for both so it does not tell which private game ids exist."""
    if refused := _anonymous_throttled(request):
        return refused
    code = request.GET.get("code") or None
    try:
        game = selectors.game_for_user(game_id=game_id, user=request.user, invite_code=code)
    except ServiceError as error:
        if not request.user.is_authenticated:
            return redirect_to_login(request.get_full_path())
        messages.error(request, _friendly(error))
        return redirect("games:lobby")
    detail = selectors.game_detail(game=game, user=request.user)
    invite_url = None
    if detail["invite_code"]:
        invite_url = request.build_absolute_uri(f"{_table_url(game)}?code={detail['invite_code']}")
    boot = {
        "game": game.pk,
        "kind": game.kind,
        "you": detail["you"],
        "user_id": request.user.pk,
        "status": detail["status"],
        "host_id": detail["host"]["id"],
        "seats": [
            {
                "seat": s["seat"],
                "name": s["name"],
                "bot": s["bot"],
                "sitting_in": s["sitting_in"],
                "is_guest": s["is_guest"],
            }
            for s in detail["seats"]
        ],
        # An outsider let in by the invite link watches live under the same rule (the socket
        # checks the code as the REST API does, docs/PROTOCOL.md).
        "ws": f"/ws/games/{game.pk}/"
        + (f"?{urlencode({'invite_code': code})}" if code and detail["you"] is None else ""),
        "private": detail["private"],
        # Where the table's log starts rebuilding from the stored events (static/js/table/log.js).
        "last_seq": game.last_seq,
        "rematch": _rematch_boot(game, request.user),
        "chat_max": CHAT_MAX,
    }
    return render(
        request,
        "games/table.html",
        {
            "game": game,
            "game_kind": game.kind,
            "kind_name": engine_for(game.kind).NAME,
            "table_template": f"games/{game.kind}/_table.html",
            "has_bots": game.kind in bots.GAMES,
            "results": extensions.results_table(game)
            if game.status in (Game.Status.FINISHED, Game.Status.ABANDONED) and game.started_at
            else None,
            # "I'm back" is for a player away, not for one who left for good (game_back
            # refuses them: already_left).
            "sat_in": any(
                s["sitting_in"] and not s["left"] and s["user_id"] == request.user.pk
                for s in detail["seats"]
            ),
            "can_start": detail["min_seats"] <= len(detail["seats"]) <= detail["max_seats"],
            "detail": detail,
            "is_host": detail["host"]["id"] == request.user.pk,
            "invite_url": invite_url,
            "invite_code": code,
            "boot": boot,
            "left": request.user.is_authenticated
            and game.seats.filter(user=request.user, left_at__isnull=False).exists(),
            "login_url": _login_url(request.get_full_path()),
        },
    )


# --- Game night: "Play again", leaving a game in progress -------------------------------------
def _rematch_boot(game: Game, user: Any) -> dict[str, Any] | None:
    """The finished game's rematch, if one was offered: its id and whether the user sits there."""
    new = Game.objects.filter(rematch_of=game).first()
    if new is None:
        return None
    return {"id": new.pk, "seated": selectors.seat_for_user(game=new, user=user) is not None}


@login_required
@require_POST
def rematch(request: HttpRequest, game_id: int) -> HttpResponse:
    """Play again: to the rematch's lobby (made by the first to ask, joined by the others)."""
    try:
        new = services.game_rematch(game=game_id, user=request.user)
    except ServiceError as error:
        messages.error(request, _friendly(error))
        return HttpResponseRedirect(_table_url(game_id))
    return HttpResponseRedirect(_table_url(new))


@login_required
@require_POST
def quit_game(request: HttpRequest, game_id: int) -> HttpResponse:
    """Leave a game in progress for good (the table asks first)."""
    try:
        services.game_leave_playing(game=game_id, user=request.user)
    except ServiceError as error:
        messages.error(request, _friendly(error))
        return HttpResponseRedirect(_table_url(game_id))
    messages.success(request, _("You left the game."))
    return redirect("games:lobby")


# --- The rules, for players -------------------------------------------------------------------
#: The site's languages; a game may write its rules page once per language
#: (``templates/rules/<kind>.<lang>.html``) or once with translated strings
#: (``templates/games/<kind>/rules.html``).
RULES_LANGUAGES = ("en", "ja", "ru")


# The table frames it (the "?" dialog); other sites still may not (X-Frame-Options for old
# browsers, CSP frame-ancestors for the rest).
@xframe_options_sameorigin
@csp_replace({"frame-ancestors": ["'self'"]})
def rules(request: HttpRequest, kind: str) -> HttpResponse:
    """A game's rules for players, at a stable URL (``/rules/<kind>/``), in the page's
    language, for anyone (no log-in).  ``?embed=1`` leaves the site's chrome out: a table
    shows it in a dialog, without leaving the game."""
    if kind not in KINDS:
        raise Http404("No such game.")
    language = (get_language() or "en")[:2]
    if language not in RULES_LANGUAGES:
        language = "en"
    embed = request.GET.get("embed") == "1"
    page = select_template([f"rules/{kind}.{language}.html", f"games/{kind}/rules.html"])
    return HttpResponse(
        page.render(
            {
                "base_template": "rules/_embed.html" if embed else "base.html",
                "embed": embed,
                "rules_language": language,
                "kind": kind,
                "kind_name": engine_for(kind).NAME,
                "kinds": _kinds(),
            },
            request,
        )
    )


def rules_index(request: HttpRequest) -> HttpResponse:
    """Every game's rules page."""
    return render(request, "games/rules_index.html", {"kinds": _kinds()})


@login_required
def your_move(request: HttpRequest) -> HttpResponse:
    """Every game in progress where it is the person's move, soonest deadline first
    (``games.turns``: read from their own seats, nothing of any game's state)."""
    items = turns.turn_list(request.user)
    now = clock.to_datetime(clock.now_ms())
    for t in items:
        # "your move for 0 minutes" read oddly: under a minute it is "just now".
        t["just_now"] = (now - t["since"]).total_seconds() < 60
    return render(request, "games/your_move.html", {"turns": items})
