"""The games REST API: one small view per action (HackSoft style).

Views only parse input, call ``games.services`` (writes) or ``games.selectors`` (reads), and
return what the selectors built.  They never serialise a model's secret fields: every game
state and event a non-admin receives comes from ``selectors.game_payload`` /
``selectors.event_payload`` (the engine's redaction).  Refusals are raised as ``ServiceError``
and rendered by ``games.exceptions.api_exception_handler``.

Private games: every per-game endpoint answers 404 to a user who neither sits at the game nor
presents its invite code (``?invite_code=`` or ``"invite_code"`` in the body).
"""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest, JsonResponse
from django.views.decorators.csrf import csrf_exempt
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import status
from rest_framework.permissions import SAFE_METHODS, BasePermission
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from crisp_site import throttles
from games import clock, selectors, services
from games.api import serializers as s
from games.engines import KINDS
from games.models import Game
from games.services.prepared import Prepared

_ERR = s.ErrorSerializer


def _errors(*codes: int) -> dict[int, Any]:
    return {c: OpenApiResponse(_ERR, description="Error: {code, detail}") for c in codes}


_INVITE_PARAM = OpenApiParameter(
    "invite_code", str, required=False, description="Needed for a private game you do not sit at."
)


def _valid(serializer_class: type, data: Any) -> dict[str, Any]:
    ser = serializer_class(data=data)
    ser.is_valid(raise_exception=True)
    return dict(ser.validated_data)


def _query(request: Request) -> dict[str, str]:
    """The query string as a plain dict, for a query serializer.

    Given the QueryDict itself, DRF reads an empty value of an optional field (``?kind=``)
    as "not sent" and applies the default, so a value outside the published enum was
    accepted; as a plain value it is refused (400), as the schema says.
    """
    return request.query_params.dict()


def _invite(request: Request) -> str | None:
    code = request.query_params.get("invite_code")
    if code is None and isinstance(request.data, dict):
        body = request.data.get("invite_code")
        code = body if isinstance(body, str) else None
    return code


class WatchOrSignedIn(BasePermission):
    """Reads (GET, HEAD, OPTIONS) for anybody, writes for a signed-in user only.

    Watching a public game needs no account (issue 24, docs/API.md "Watching without an
    account"): an anonymous client reads a public game's detail, state, events, chat and, once
    it is over, its replay, all in the spectator's redaction (it has no seat), while
    ``selectors.game_for_user`` keeps every private game from it (404).  Its every write is
    refused by DRF with ``not_authenticated`` (401 with ``WWW-Authenticate``).
    """

    message = "Watching needs no account; this needs one: sign in or present an API token."

    def has_permission(self, request: Request, view: Any) -> bool:
        return request.method in SAFE_METHODS or bool(
            request.user and request.user.is_authenticated
        )


#: The throttles of a per-game read an anonymous client may make (``anon_read``, per address).
WATCH_THROTTLES = [throttles.InviteCodeThrottle, throttles.AnonReadThrottle]


#: ``selectors.game_query`` compiled to SQL once per process (``services.prepared``): Django
#: building that SQL was most of a per-game REST request's CPU (bench/rest_cpu.py); now each
#: request runs the same statement with its keys.  One for a signed-in viewer (its seat in the
#: same query), one for an anonymous one; and each without the engine snapshot (``state``,
#: the largest column, a JSON document to decode) for the reads that never look at it.
_GAME_SEATED = Prepared(lambda pk, user: selectors.game_query(game_id=pk, user_id=user), keys=2)
_GAME = Prepared(lambda pk: selectors.game_query(game_id=pk))
_GAME_SEATED_NO_STATE = Prepared(
    lambda pk, user: selectors.game_query(game_id=pk, user_id=user).defer("state"), keys=2
)
_GAME_NO_STATE = Prepared(lambda pk: selectors.game_query(game_id=pk).defer("state"))


def _game(request: Request, game_id: int, state: bool = True) -> Game:
    """``selectors.game_for_user`` for this request: the same read and the same rule.

    ``state=False``: the snapshot is left unread (it loads on access, as with ``defer``)."""
    user = request.user
    if user is not None and user.is_authenticated:
        read = _GAME_SEATED if state else _GAME_SEATED_NO_STATE
        rows = read.fetch(game_id, user.pk)
    else:
        rows = (_GAME if state else _GAME_NO_STATE).fetch(game_id)
    return selectors.game_access(
        game=rows[0] if rows else None, user=user, invite_code=_invite(request)
    )


#: ``selectors.events_query`` compiled once per ``limit`` (1 to 500: the LIMIT is in the SQL).
_EVENTS: dict[int, Prepared] = {}


def _events(game: Game, since: int, limit: int) -> list[Any]:
    read = _EVENTS.get(limit)
    if read is None:
        read = _EVENTS.setdefault(
            limit,
            Prepared(lambda pk, seq: selectors.events_query(game_id=pk, seq=seq, limit=limit), 2),
        )
    return read.fetch(game.pk, since)


def _detail(game: Game, request: Request) -> dict[str, Any]:
    """The lobby card of the instance a service returned (it is the one it saved: no re-read)."""
    return selectors.game_detail(game=game, user=request.user)


class GameListCreateApi(APIView):
    throttle_classes = [throttles.GameCreateThrottle, throttles.InviteCodeThrottle]

    @extend_schema(
        operation_id="games_list",
        parameters=[
            OpenApiParameter("scope", str, enum=["open", "mine"], required=False),
            OpenApiParameter("kind", str, enum=list(KINDS), required=False),
        ],
        responses={200: s.GameOutput(many=True), **_errors(400, 401, 403)},
        description="`open`: public lobbies you can join. `mine`: every game you sit at. "
        "`kind` keeps only games of that kind.",
    )
    def get(self, request: Request) -> Response:
        q = _valid(s.ListQuery, _query(request))
        games = selectors.game_list(user=request.user, scope=q["scope"], kind=q.get("kind"))[:100]
        return Response([selectors.game_detail(game=g, user=request.user) for g in games])

    @extend_schema(
        operation_id="games_create",
        request=s.GameCreateInput,
        responses={201: s.GameOutput, **_errors(400, 401, 403)},
        description="Open a lobby of game `kind` with the host's `settings` (that game's menu, "
        "see the schema); you take seat 0.",
    )
    def post(self, request: Request) -> Response:
        data = _valid(s.GameCreateInput, request.data)
        game = services.game_create(host=request.user, **data)
        return Response(_detail(game, request), status=status.HTTP_201_CREATED)


class GameDetailApi(APIView):
    permission_classes = [WatchOrSignedIn]
    throttle_classes = WATCH_THROTTLES

    @extend_schema(
        operation_id="games_retrieve",
        parameters=[_INVITE_PARAM],
        responses={200: s.GameOutput, **_errors(401, 403, 404)},
    )
    def get(self, request: Request, game_id: int) -> Response:
        game = _game(request, game_id, state=False)
        return Response(selectors.game_detail(game=game, user=request.user))


class GameJoinApi(APIView):
    throttle_classes = [throttles.JoinThrottle, throttles.InviteCodeThrottle]

    @extend_schema(
        operation_id="games_join",
        request=s.JoinInput,
        responses={200: s.GameOutput, **_errors(400, 401, 403, 404, 409)},
        description="Take the next free seat. A private game needs its invite code.",
    )
    def post(self, request: Request, game_id: int) -> Response:
        data = _valid(s.JoinInput, request.data)
        code = data.get("invite_code") or request.query_params.get("invite_code")
        game = services.game_join(game=game_id, user=request.user, invite_code=code)
        return Response(_detail(game, request))


class GameJoinByCodeApi(APIView):
    throttle_classes = [throttles.JoinThrottle, throttles.InviteCodeThrottle]

    @extend_schema(
        operation_id="games_join_by_code",
        request=s.JoinByCodeInput,
        responses={200: s.GameOutput, **_errors(400, 401, 403, 404, 409)},
        description="Join the game an invite code opens.",
    )
    def post(self, request: Request) -> Response:
        data = _valid(s.JoinByCodeInput, request.data)
        game = selectors.game_by_invite_code(invite_code=data["invite_code"])
        game = services.game_join(game=game, user=request.user, invite_code=game.invite_code)
        return Response(_detail(game, request))


class GameLeaveApi(APIView):
    @extend_schema(
        operation_id="games_leave",
        request=None,
        parameters=[_INVITE_PARAM],
        responses={200: s.GameOutput, **_errors(401, 403, 404, 409)},
        description="Give up your lobby seat (not possible once the game has started).",
    )
    def post(self, request: Request, game_id: int) -> Response:
        game = services.game_leave(game=_game(request, game_id), user=request.user)
        return Response(_detail(game, request))


class GameKickApi(APIView):
    @extend_schema(
        operation_id="games_kick",
        request=s.KickInput,
        parameters=[_INVITE_PARAM],
        responses={200: s.GameOutput, **_errors(400, 401, 403, 404, 409)},
        description="The host removes the player at `seat` from the lobby.",
    )
    def post(self, request: Request, game_id: int) -> Response:
        game = _game(request, game_id)
        data = _valid(s.KickInput, request.data)
        game = services.game_kick(game=game, host=request.user, seat_number=data["seat"])
        return Response(_detail(game, request))


class GameStartApi(APIView):
    @extend_schema(
        operation_id="games_start",
        request=None,
        parameters=[_INVITE_PARAM],
        responses={200: s.GameOutput, **_errors(401, 403, 404, 409)},
        description="The host deals round 1 (the game's `min_seats` to `max_seats` players).",
    )
    def post(self, request: Request, game_id: int) -> Response:
        game = services.game_start(game=_game(request, game_id), user=request.user)
        return Response(_detail(game, request))


class GameBotsApi(APIView):
    @extend_schema(
        operation_id="games_add_bot",
        request=s.BotInput,
        parameters=[_INVITE_PARAM],
        responses={200: s.GameOutput, **_errors(400, 401, 403, 404, 409)},
        description="The host seats a computer player (`easy`, `medium` or `hard`) in the "
        "lobby's next free seat. It plays through the same rules and timers as everyone and "
        "decides only from what its seat is shown.",
    )
    def post(self, request: Request, game_id: int) -> Response:
        data = _valid(s.BotInput, request.data)
        game = services.game_add_bot(
            game=_game(request, game_id), host=request.user, level=data["level"]
        )
        return Response(_detail(game, request))


class GameVsComputerApi(APIView):
    @extend_schema(
        operation_id="games_vs_computer",
        request=s.VsComputerInput,
        responses={201: s.GameOutput, **_errors(400, 401, 403)},
        description="Play against the computer: a private game of `kind` with you at seat 0 "
        "and `opponents` computer players of `level`, started at once.",
    )
    def post(self, request: Request) -> Response:
        data = _valid(s.VsComputerInput, request.data)
        game = services.game_vs_computer(user=request.user, **data)
        return Response(_detail(game, request), status=status.HTTP_201_CREATED)


class GameBackApi(APIView):
    @extend_schema(
        operation_id="games_back",
        request=None,
        parameters=[_INVITE_PARAM],
        responses={200: s.GameOutput, **_errors(401, 403, 404, 409)},
        description='"I\'m back": take your seat back from the computer sitting in for you '
        "(it sits in after two timeouts in a row). Acting yourself does the same.",
    )
    def post(self, request: Request, game_id: int) -> Response:
        game = services.game_back(game=_game(request, game_id), user=request.user)
        return Response(_detail(game, request))


class GameAbandonApi(APIView):
    @extend_schema(
        operation_id="games_abandon",
        request=None,
        parameters=[_INVITE_PARAM],
        responses={200: s.GameOutput, **_errors(401, 403, 404, 409)},
        description="The host (or an admin) stops the game for good, without a result.",
    )
    def post(self, request: Request, game_id: int) -> Response:
        game = services.game_abandon(game=_game(request, game_id), user=request.user)
        return Response(_detail(game, request))


class GameStateApi(APIView):
    permission_classes = [WatchOrSignedIn]
    throttle_classes = WATCH_THROTTLES

    @extend_schema(
        operation_id="games_state",
        parameters=[_INVITE_PARAM],
        responses={200: s.StateOutput, **_errors(401, 403, 404)},
        description="The game as your seat sees it (the spectator view if you are not seated).",
    )
    def get(self, request: Request, game_id: int) -> Response:
        game = _game(request, game_id)
        return Response(selectors.game_payload(game=game, user=request.user))


class GameActionsApi(APIView):
    permission_classes = [WatchOrSignedIn]
    throttle_classes = [throttles.GameActThrottle, *WATCH_THROTTLES]

    @extend_schema(
        operation_id="games_actions_list",
        parameters=[_INVITE_PARAM],
        responses={200: s.LegalActionsOutput, **_errors(401, 403, 404)},
        description="Every action your seat may take now, in wire form.",
    )
    def get(self, request: Request, game_id: int) -> Response:
        game = _game(request, game_id)
        now = clock.now_ms()
        return Response(
            {
                "version": game.version,
                "seat": selectors.seat_for_user(game=game, user=request.user),
                "now": now,
                "actions": selectors.game_legal_actions(game=game, user=request.user, now=now),
            }
        )

    @extend_schema(
        operation_id="games_act",
        request=s.ActInput,
        parameters=[
            _INVITE_PARAM,
            OpenApiParameter(
                "Idempotency-Key",
                str,
                location=OpenApiParameter.HEADER,
                required=False,
                description="Alternative to the body's idempotency_key.",
            ),
        ],
        responses={200: s.ActOutput, **_errors(400, 401, 403, 404, 409, 503)},
        description=(
            "Take an action. Refused with `stale_version` (and the current `version`) if the "
            "game moved on since `expected_version`. A retried request with the same "
            "idempotency key returns the first result (`replayed: true`) and applies nothing."
        ),
    )
    def post(self, request: Request, game_id: int) -> Response:
        game = _game(request, game_id)
        data = _valid(s.ActInput, request.data)
        key = data.get("idempotency_key") or request.headers.get("Idempotency-Key") or None
        result = services.game_act(
            game=game,
            user=request.user,
            action=data["action"],
            expected_version=data.get("expected_version"),
            idempotency_key=key,
        )
        # The game as the action left it, and the actor's seat: the request's own read again
        # (compiled once, the seat in the same query), not a refresh and a seat query.
        game = _game(request, game_id)
        seat = selectors.seat_for_user(game=game, user=request.user)
        return Response(
            {
                "version": result.version,
                "replayed": result.replayed,
                "events": selectors.act_events_payload(game=game, result=result, seat=seat),
                "state": selectors.game_payload_for_seat(game=game, seat=seat),
            }
        )


class GameEventsApi(APIView):
    permission_classes = [WatchOrSignedIn]
    throttle_classes = WATCH_THROTTLES

    @extend_schema(
        operation_id="games_events",
        parameters=[
            _INVITE_PARAM,
            OpenApiParameter("since", int, required=False, description="Last seq you have."),
            OpenApiParameter("limit", int, required=False),
        ],
        responses={200: s.EventsOutput, **_errors(400, 401, 403, 404)},
        description=(
            "Events after sequence number `since`, each in your redacted form. A private form "
            "(your look, your drawn card) is served only while its version is the current one; "
            "after that you get the public form (a look is shown once, R3/R4)."
        ),
    )
    def get(self, request: Request, game_id: int) -> Response:
        game = _game(request, game_id, state=False)
        q = _valid(s.EventsQuery, _query(request))
        events = selectors.events_since(
            game=game,
            user=request.user,
            seq=q["since"],
            limit=q["limit"],
            rows=_events(game, q["since"], q["limit"]),
        )
        return Response({"version": game.version, "events": events})


@csrf_exempt  # nothing happens here; a CSRF refusal would be an HTML page
def api_not_found(request: HttpRequest, *args: Any, **kwargs: Any) -> JsonResponse:
    """The API's answer to an unknown path: the same error shape as every other refusal."""
    return JsonResponse({"code": "not_found", "detail": "No such API endpoint."}, status=404)
