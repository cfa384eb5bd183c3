"""REST endpoints of a game night: the table's chat, "Play again", leaving a game in progress,
and naming a game.  The same shape as games.api.views: parse, call a service or a selector,
return what it built; refusals are ``ServiceError`` (games.exceptions renders them)."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from games import selectors, services
from games.api import serializers as s
from games.api.views import (
    _INVITE_PARAM,
    WATCH_THROTTLES,
    WatchOrSignedIn,
    _detail,
    _errors,
    _game,
    _invite,
    _valid,
)


class GameChatApi(APIView):
    permission_classes = [WatchOrSignedIn]
    throttle_classes = WATCH_THROTTLES

    @extend_schema(
        operation_id="games_chat_list",
        parameters=[_INVITE_PARAM],
        responses={200: s.ChatOutput, **_errors(401, 403, 404)},
        description="The table's last 100 chat lines, oldest first.",
    )
    def get(self, request: Request, game_id: int) -> Response:
        game = _game(request, game_id, state=False)
        return Response({"messages": selectors.game_chat(game=game)})

    @extend_schema(
        operation_id="games_chat_post",
        request=s.ChatInput,
        responses={201: s.ChatLineOutput, **_errors(400, 401, 403, 404, 429)},
        description=(
            "Say one line (1-200 characters) at the table: its players and spectators receive "
            "it (`chat` frames on the socket). At most 5 lines per 10 s per person."
        ),
    )
    def post(self, request: Request, game_id: int) -> Response:
        data = _valid(s.ChatInput, request.data)
        message = services.game_chat_post(
            game=game_id, user=request.user, text=data["text"], invite_code=_invite(request)
        )
        return Response(selectors.chat_payload(message), status=status.HTTP_201_CREATED)


class GameRematchApi(APIView):
    @extend_schema(
        operation_id="games_rematch",
        request=None,
        responses={200: s.GameOutput, **_errors(401, 403, 404, 409)},
        description=(
            "Play again: the rematch lobby of a finished game you played (created by the first "
            "to ask, with the same settings; each who asks takes a seat)."
        ),
    )
    def post(self, request: Request, game_id: int) -> Response:
        _game(request, game_id)
        game = services.game_rematch(game=game_id, user=request.user)
        return Response(_detail(game, request))


class GameQuitApi(APIView):
    @extend_schema(
        operation_id="games_quit",
        request=None,
        responses={200: s.GameOutput, **_errors(401, 403, 404, 409)},
        description=(
            "Leave a game in progress for good (a lobby seat is given up with `leave/`). Your "
            "turns then time out; when every player has left, the game is abandoned."
        ),
    )
    def post(self, request: Request, game_id: int) -> Response:
        _game(request, game_id)
        game = services.game_leave_playing(game=game_id, user=request.user)
        return Response(_detail(game, request))


class GameNameApi(APIView):
    @extend_schema(
        operation_id="games_name",
        request=s.NameInput,
        responses={200: s.GameOutput, **_errors(400, 401, 403, 404, 409)},
        description="The host names the game (up to 60 characters; empty clears it).",
    )
    def post(self, request: Request, game_id: int) -> Response:
        _game(request, game_id)
        data = _valid(s.NameInput, request.data)
        game = services.game_rename(game=game_id, user=request.user, name=data["name"])
        return Response(_detail(game, request))
