"""The after-game API: players' profiles and histories, leaderboards, a game's rounds, replay
frames and exports (docs/API.md, "After the game"; routes in ``history.api_urls``).  One small
view per read, as in ``games.api.views``; bodies are built by ``history.selectors`` /
``history.replay`` / ``history.export`` (redaction through the engine), refusals are
``{code, detail}``.

Profiles and leaderboards are public (nothing private is in them: no email, no token, no
private game the viewer did not sit at); replays and exports are for whoever may see the game
-- a public one's, anybody, without an account (issue 24) -- and only once it is over.
"""

from __future__ import annotations

import math
from typing import Any

from django.http import HttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import serializers
from rest_framework.permissions import AllowAny
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from games import selectors as games_selectors
from games.api.serializers import ErrorSerializer
from games.api.views import WATCH_THROTTLES, WatchOrSignedIn
from games.engines import KINDS, engine_for
from games.errors import ServiceError
from history import export, ratings, replay, selectors

_MAX_FRAMES = 1000


def _errors(*codes: int) -> dict[int, Any]:
    return {c: OpenApiResponse(ErrorSerializer, description="Error: {code, detail}") for c in codes}


def _valid(serializer_class: type, data: Any) -> dict[str, Any]:
    ser = serializer_class(data=data)
    ser.is_valid(raise_exception=True)
    return dict(ser.validated_data)


def _kind(kind: str) -> str:
    if kind not in KINDS:
        raise ServiceError("bad_kind", f"kind must be one of: {', '.join(KINDS)}.", status=404)
    return kind


class PageQuery(serializers.Serializer):
    page = serializers.IntegerField(min_value=1, default=1)
    page_size = serializers.IntegerField(min_value=1, max_value=100, default=20)


class HistoryQuery(PageQuery):
    kind = serializers.ChoiceField(choices=list(KINDS), required=False)


class BoardQuery(PageQuery):
    provisional = serializers.BooleanField(
        default=False, help_text="Include provisional ratings (fewer rated games than needed)."
    )


class ReplayQuery(serializers.Serializer):
    view = serializers.ChoiceField(
        choices=["full", "seat", "spectator"],
        default="full",
        help_text="`full`: everything the rules show once the game is over; `seat`: exactly "
        "what `seat` was shown, when (its player and staff only); `spectator`: what a "
        "spectator was shown.",
    )
    seat = serializers.IntegerField(min_value=0, required=False)
    at = serializers.IntegerField(
        min_value=1, required=False, help_text="Only the frame of this version (a shared moment)."
    )
    start = serializers.IntegerField(min_value=1, default=1, help_text="First version wanted.")
    limit = serializers.IntegerField(min_value=1, max_value=_MAX_FRAMES, default=_MAX_FRAMES)

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        if attrs["view"] == "seat" and "seat" not in attrs:
            raise serializers.ValidationError({"seat": "view=seat needs a seat."})
        return attrs


class ExportQuery(serializers.Serializer):
    output = serializers.ChoiceField(
        choices=["json", "text"], default="json", help_text="`text`: the notation only."
    )
    audit = serializers.BooleanField(
        default=False, help_text="Staff only: add the seed, engine calls and state digests."
    )
    download = serializers.BooleanField(default=False, help_text="As an attachment.")


def _page(qs: Any, page: int, size: int) -> tuple[list[Any], dict[str, Any]]:
    """One page of ``qs``. Page 1 always exists (empty on an empty list); a page past the last
    is ``bad_page`` -- checked before slicing, so a huge page number never reaches the
    database as an offset (``?page=576460752303423487`` overflowed SQLite's 64-bit OFFSET)."""
    count = qs.count()
    pages = max(1, math.ceil(count / size))
    if page > pages:
        raise ServiceError("bad_page", f"There are only {pages} pages.", status=404)
    items = list(qs[(page - 1) * size : page * size])
    return items, {"count": count, "page": page, "pages": pages, "page_size": size}


# -- output shapes (for the schema) ---------------------------------------------------------
class RatingOutput(serializers.Serializer):
    kind = serializers.CharField()
    mu = serializers.FloatField(help_text="Skill estimate.")
    sigma = serializers.FloatField(help_text="Its uncertainty.")
    ordinal = serializers.FloatField(help_text="mu - 3 sigma: the leaderboard's order.")
    games = serializers.IntegerField(help_text="Rated games played.")
    provisional = serializers.BooleanField()


class StatItemOutput(serializers.Serializer):
    key = serializers.CharField()
    label = serializers.CharField()
    value = serializers.FloatField(allow_null=True)
    format = serializers.ChoiceField(choices=["int", "decimal", "percent"])


class KindStatsOutput(serializers.Serializer):
    kind = serializers.CharField()
    kind_name = serializers.CharField()
    games = serializers.IntegerField(help_text="Finished games.")
    wins = serializers.IntegerField()
    win_rate = serializers.FloatField(allow_null=True)
    abandoned = serializers.IntegerField()
    details = StatItemOutput(many=True, help_text="The game's own figures.")


class ProfileOutput(serializers.Serializer):
    username = serializers.CharField()
    name = serializers.CharField()
    is_guest = serializers.BooleanField(help_text="A guest account: never rated.")
    joined = serializers.DateField()
    stats = KindStatsOutput(many=True)
    ratings = RatingOutput(many=True)


class HistoryPlayerOutput(serializers.Serializer):
    seat = serializers.IntegerField()
    username = serializers.CharField()
    name = serializers.CharField()
    score = serializers.IntegerField()
    winner = serializers.BooleanField()


class HistoryRowOutput(serializers.Serializer):
    id = serializers.IntegerField()
    kind = serializers.CharField()
    kind_name = serializers.CharField()
    status = serializers.ChoiceField(choices=["finished", "abandoned"])
    ended_at = serializers.DateTimeField(allow_null=True)
    players = HistoryPlayerOutput(many=True)
    winners = serializers.ListField(child=serializers.IntegerField())
    result = serializers.ChoiceField(choices=["won", "lost", "abandoned", "finished"])
    seat = serializers.IntegerField(allow_null=True)


class HistoryOutput(serializers.Serializer):
    count = serializers.IntegerField()
    page = serializers.IntegerField()
    pages = serializers.IntegerField()
    page_size = serializers.IntegerField()
    results = HistoryRowOutput(many=True)


class BoardRowOutput(serializers.Serializer):
    rank = serializers.IntegerField()
    username = serializers.CharField()
    name = serializers.CharField()
    rating = RatingOutput()


class BoardOutput(serializers.Serializer):
    kind = serializers.CharField()
    count = serializers.IntegerField()
    page = serializers.IntegerField()
    pages = serializers.IntegerField()
    page_size = serializers.IntegerField()
    provisional_games = serializers.IntegerField(help_text="Rated games a rating needs.")
    results = BoardRowOutput(many=True)


class RoundOutput(serializers.Serializer):
    number = serializers.IntegerField()
    dealer = serializers.IntegerField()
    started_at = serializers.DateTimeField()
    ended_at = serializers.DateTimeField(allow_null=True)
    round_scores = serializers.ListField(child=serializers.IntegerField())
    scores = serializers.ListField(child=serializers.IntegerField(), help_text="Totals after.")


class RoundsOutput(serializers.Serializer):
    game_id = serializers.IntegerField()
    rounds = RoundOutput(many=True)


class FrameOutput(serializers.Serializer):
    version = serializers.IntegerField()
    at = serializers.IntegerField(allow_null=True, help_text="ms since the epoch.")
    status = serializers.CharField()
    events = serializers.JSONField(help_text="The version's events in the view's form.")
    state = serializers.JSONField(allow_null=True, help_text="The engine's view; null in lobby.")
    lines = serializers.ListField(
        child=serializers.CharField(), help_text="The events in words (the request's language)."
    )
    events_later = serializers.JSONField(
        required=False,
        help_text="view=seat only, where it differs: the version's events as the seat's log "
        "showed them afterwards (public forms: a look is shown once).",
    )
    lines_later = serializers.ListField(
        child=serializers.CharField(), help_text="`lines` as later frames' logs show them."
    )


class ReplayOutput(serializers.Serializer):
    game_id = serializers.IntegerField()
    kind = serializers.CharField()
    view = serializers.ChoiceField(choices=["full", "seat", "spectator"])
    seat = serializers.IntegerField(allow_null=True)
    version = serializers.IntegerField(help_text="The game's last version.")
    seats = HistoryPlayerOutput(many=True)
    frames = FrameOutput(many=True)


# -- views ------------------------------------------------------------------------------------
class PlayerProfileApi(APIView):
    permission_classes = [AllowAny]

    @extend_schema(
        operation_id="players_retrieve",
        responses={200: ProfileOutput, **_errors(404)},
        description="A player's public profile: statistics per game and ratings.",
    )
    def get(self, request: Request, username: str) -> Response:
        user = selectors.player_by_username(username)
        return Response(selectors.player_profile(user=user, viewer=request.user))


class PlayerGamesApi(APIView):
    permission_classes = [AllowAny]

    @extend_schema(
        operation_id="players_games",
        parameters=[HistoryQuery],
        responses={200: HistoryOutput, **_errors(400, 404)},
        description="A player's finished and abandoned games, newest first (private games "
        "only if you sat at them).",
    )
    def get(self, request: Request, username: str) -> Response:
        user = selectors.player_by_username(username)
        q = _valid(HistoryQuery, request.query_params.dict())
        qs = selectors.player_games(user=user, viewer=request.user, kind=q.get("kind"))
        games, meta = _page(qs, q["page"], q["page_size"])
        return Response({**meta, "results": [selectors.history_row(g, user) for g in games]})


class LeaderboardApi(APIView):
    permission_classes = [AllowAny]

    @extend_schema(
        operation_id="leaderboards_retrieve",
        parameters=[BoardQuery],
        responses={200: BoardOutput, **_errors(400, 404)},
        description="Ratings of one game, best first (by ordinal). Provisional ratings are "
        "left out unless `provisional=true`.",
    )
    def get(self, request: Request, kind: str) -> Response:
        q = _valid(BoardQuery, request.query_params.dict())
        qs = ratings.leaderboard(kind=_kind(kind), include_provisional=q["provisional"])
        rows, meta = _page(qs, q["page"], q["page_size"])
        first = (meta["page"] - 1) * meta["page_size"] + 1
        return Response(
            {
                "kind": kind,
                **meta,
                "provisional_games": ratings.provisional_games(),
                "results": [
                    {
                        "rank": first + i,
                        "username": r.user.get_username(),
                        "name": getattr(r.user, "public_name", None) or r.user.get_username(),
                        "rating": ratings.rating_payload(r),
                    }
                    for i, r in enumerate(rows)
                ],
            }
        )


class GameRoundsApi(APIView):
    permission_classes = [WatchOrSignedIn]
    throttle_classes = WATCH_THROTTLES

    @extend_schema(
        operation_id="games_rounds",
        parameters=[OpenApiParameter("invite_code", str, required=False)],
        responses={200: RoundsOutput, **_errors(401, 403, 404)},
        description="The game's finished rounds: each round's scores and the totals after it.",
    )
    def get(self, request: Request, game_id: int) -> Response:
        game = games_selectors.game_for_user(
            game_id=game_id, user=request.user, invite_code=request.query_params.get("invite_code")
        )
        return Response({"game_id": game.pk, "rounds": selectors.game_rounds(game)})


def _seats(game: Any) -> list[dict[str, Any]]:
    return [
        {
            "seat": s.number,
            "username": s.user.get_username(),
            "name": getattr(s.user, "public_name", None) or s.user.get_username(),
            "score": s.score,
            "winner": s.number in game.winners,
        }
        for s in game.seats.select_related("user").order_by("number")
    ]


class GameReplayApi(APIView):
    permission_classes = [WatchOrSignedIn]
    throttle_classes = WATCH_THROTTLES

    @extend_schema(
        operation_id="games_replay",
        parameters=[ReplayQuery],
        responses={200: ReplayOutput, **_errors(400, 401, 403, 404, 409)},
        description="Every version of a finished game as a frame (version, instant, status, "
        "the version's events, the state it left), in full or as one seat saw it. "
        "`game_in_progress` (409) while it is played; private games: their players and staff. "
        "A seat's view is for that seat's player and staff (`not_your_seat`, 403).",
    )
    def get(self, request: Request, game_id: int) -> Response:
        game = replay.game_for_replay(game_id=game_id, user=request.user)
        q = _valid(ReplayQuery, request.query_params.dict())
        if q["view"] == "seat":
            if (
                q["seat"] >= engine_for(game.kind).MAX_SEATS
                or not game.seats.filter(number=q["seat"]).exists()
            ):
                raise ServiceError("no_such_seat", f"Nobody sat at seat {q['seat']}.", status=404)
            replay.check_seat_view(game, request.user, q["seat"])
            viewer: replay.Viewer = q["seat"]
        else:
            viewer = replay.FULL if q["view"] == "full" else None
        start, limit = q["start"], q["limit"]
        if "at" in q:
            if q["at"] > game.version:
                raise ServiceError(
                    "no_such_version", f"The game has {game.version} versions.", status=404
                )
            start, limit = q["at"], 1
        served, frames = replay.replay_frames(game=game, viewer=viewer, start=start, limit=limit)
        seats = _seats(game)
        names = [s["name"] for s in seats]
        for frame in frames:
            frame["lines"] = replay.describe_events(game.kind, frame["events"], names)
            later = frame.get("events_later")
            frame["lines_later"] = (
                replay.describe_events(game.kind, later, names) if later else frame["lines"]
            )
        return Response(
            {
                "game_id": game.pk,
                "kind": game.kind,
                "view": served,
                "seat": viewer if isinstance(viewer, int) else None,
                "version": game.version,
                "seats": seats,
                "frames": frames,
            }
        )


class GameExportApi(APIView):
    permission_classes = [WatchOrSignedIn]
    throttle_classes = WATCH_THROTTLES

    @extend_schema(
        operation_id="games_export",
        parameters=[ExportQuery],
        responses={
            (200, "application/json"): OpenApiResponse(
                OpenApiTypes.OBJECT, description="The export (docs/API.md, 'Export')."
            ),
            (200, "text/plain"): OpenApiResponse(
                OpenApiTypes.STR, description="The game's text notation."
            ),
            **_errors(400, 401, 403, 404, 409),
        },
        description="A finished game's export: JSON (kind, settings, players, events in order, "
        "rounds, result, notation) or the text notation. `audit=true` is for staff.",
    )
    def get(self, request: Request, game_id: int) -> Response | HttpResponse:
        game = replay.game_for_replay(game_id=game_id, user=request.user)
        q = _valid(ExportQuery, request.query_params.dict())
        if q["audit"] and not getattr(request.user, "is_staff", False):
            raise ServiceError("not_staff", "Only an admin may download an audit.", status=403)
        name = f"{game.kind}-game-{game.pk}"
        if q["output"] == "text":
            text = export.game_notation(game)
            if text is None:
                raise ServiceError(
                    "no_notation", f"{engine_for(game.kind).NAME} has no notation.", status=404
                )
            response = HttpResponse(text, content_type="text/plain; charset=utf-8")
            if q["download"]:
                response["Content-Disposition"] = f'attachment; filename="{name}.txt"'
            return response
        response = Response(export.game_export(game, audit=q["audit"]))
        if q["download"]:
            response["Content-Disposition"] = f'attachment; filename="{name}.json"'
        return response
