"""``GET /api/v1/me/turns/``: the games awaiting the caller, with a long poll (issue 26).

An async view, not a DRF one: a long poll (``?wait=N``, N <= 60) that held one of a daphne
process's sync threads for up to a minute would stall every other sync request of the process
behind it (Django runs sync views on one thread under ASGI).  It waits on the channel layer
instead: the caller's group ``user.<id>`` (``broadcast.user_group``), which the commit step's
on-commit wake-up (``broadcast.turns_changed``) reaches whenever the caller's list changes.
Authentication is the API's own (DRF's classes of ``REST_FRAMEWORK``: a personal token or the
session), run on the database thread pool; refusals are the API's ``{"code", "detail"}``.

``TurnsApi`` is the same endpoint as DRF sees it, for the OpenAPI schema only
(``turns_view.cls``): drf-spectacular documents views by their class.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

from channels.layers import get_channel_layer
from django.http import HttpRequest, JsonResponse
from django.views.decorators.csrf import csrf_exempt
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import exceptions
from rest_framework import serializers as rs
from rest_framework.request import Request
from rest_framework.settings import api_settings
from rest_framework.views import APIView

from crisp_site.db import parallel_database_sync_to_async as database_sync_to_async
from games import broadcast, turns
from games.api import serializers as s


def _authenticate(request: HttpRequest) -> Any:
    """The caller, by the API's authentication classes (token, then session); raises DRF's
    ``AuthenticationFailed`` / ``NotAuthenticated``."""
    drf = Request(
        request, authenticators=[c() for c in api_settings.DEFAULT_AUTHENTICATION_CLASSES]
    )
    user = drf.user
    if user is None or not user.is_authenticated:
        raise exceptions.NotAuthenticated()
    return user


def _read(user: Any, request: HttpRequest) -> dict[str, Any]:
    return turns.payload(turns.turn_list(user), request)


def _error(status: int, code: str, detail: str, **headers: str) -> JsonResponse:
    response = JsonResponse({"code": code, "detail": detail}, status=status)
    for name, value in headers.items():
        response[name] = value
    return response


def _wait_param(request: HttpRequest) -> int | None:
    raw = request.GET.get("wait")
    if raw is None or raw == "":
        return 0
    try:
        wait = int(raw)
    except ValueError:
        return None
    return wait if 0 <= wait <= turns.MAX_WAIT_SECONDS else None


def _answer(data: dict[str, Any]) -> JsonResponse:
    response = JsonResponse(data)
    response["ETag"] = f'"{data["etag"]}"'
    response["Cache-Control"] = "no-store"
    return response


@csrf_exempt
async def turns_view(request: HttpRequest) -> JsonResponse:
    """The list now, or -- with ``?wait=N`` -- as soon as it differs from the caller's
    (``?since=<etag>`` or ``If-None-Match``; else the list as it is when the request comes),
    or after N seconds with the same list."""
    if request.method != "GET":
        return _error(
            405, "method_not_allowed", f'Method "{request.method}" not allowed.', Allow="GET"
        )
    try:
        user = await database_sync_to_async(_authenticate)(request)
    except exceptions.APIException as exc:
        codes = exc.get_codes()
        return _error(
            401,
            codes if isinstance(codes, str) else "not_authenticated",
            str(exc.detail),
            **{"WWW-Authenticate": "Token"},
        )
    wait = _wait_param(request)
    if wait is None:
        return _error(
            400, "bad_wait", f"wait is a whole number of seconds, 0 to {turns.MAX_WAIT_SECONDS}."
        )
    since = request.GET.get("since") or request.headers.get("If-None-Match", "").strip('"') or None
    if wait == 0:
        return _answer(await database_sync_to_async(_read)(user, request))
    layer = get_channel_layer()
    group = broadcast.user_group(user.pk)
    channel = await layer.new_channel()
    # Subscribe BEFORE reading: a change committed between the read and the subscription
    # would otherwise be missed for the whole wait.
    await layer.group_add(group, channel)
    try:
        data = await database_sync_to_async(_read)(user, request)
        known = since or data["etag"]
        loop = asyncio.get_running_loop()
        until = loop.time() + wait
        while data["etag"] == known:
            left = until - loop.time()
            if left <= 0:
                break
            try:
                async with asyncio.timeout(left):
                    await layer.receive(channel)
            except TimeoutError:
                break
            data = await database_sync_to_async(_read)(user, request)
    finally:
        with contextlib.suppress(Exception):
            await layer.group_discard(group, channel)
        await _close(layer, channel)
    return _answer(data)


async def _close(layer: Any, channel: str) -> None:
    """Let go of the poll's channel.  Channels has no "delete channel": the Redis pub/sub
    layer unsubscribes a channel (and drops its queue) when a ``receive`` on it is cancelled,
    as a consumer's is when its socket closes; a poll woken by a message never had one
    cancelled, and each would leave a subscription behind.  So one is started and cancelled."""
    closer = asyncio.ensure_future(layer.receive(channel))
    await asyncio.sleep(0)  # let it reach its wait: a task cancelled before it runs cleans nothing
    closer.cancel()
    with contextlib.suppress(asyncio.CancelledError, Exception):
        await closer


class TurnOpponentSerializer(rs.Serializer):
    name = rs.CharField()
    bot = rs.BooleanField(help_text="A computer player.")


class TurnSerializer(rs.Serializer):
    game = rs.IntegerField(help_text="The game's id (/api/v1/games/<id>/).")
    kind = rs.CharField(help_text='"crisp", "cribbage", "triple_crown".')
    name = rs.CharField(help_text="The game's name, or \"<host>'s table\".")
    url = rs.URLField(help_text="The game's table in the browser.")
    seat = rs.IntegerField(help_text="Your seat number.")
    since = rs.DateTimeField(help_text="Since when it has been your move.")
    deadline = rs.DateTimeField(
        allow_null=True, help_text="When your move times out (null: no clock)."
    )
    pace = rs.CharField(help_text='"live" or "turn_based" (the host\'s choice).')
    opponents = TurnOpponentSerializer(many=True)


class TurnListSerializer(rs.Serializer):
    count = rs.IntegerField()
    etag = rs.CharField(help_text="Changes whenever the list does: send it back as ?since=.")
    turns = TurnSerializer(many=True, help_text="Soonest deadline first; no deadline last.")


class TurnsApi(APIView):
    """The endpoint as the OpenAPI schema describes it (served by ``turns_view``)."""

    @extend_schema(
        operation_id="me_turns",
        summary="The games where it is your move",
        description=(
            "Every game in progress awaiting you, soonest deadline first (no deadline last). "
            "Long poll: `?wait=N` (0-60 s) answers as soon as the list differs from `?since=` "
            "(an `etag` of an earlier answer; or `If-None-Match`; default: the list as it is "
            "when the request arrives), else after N seconds with the same list."
        ),
        parameters=[
            OpenApiParameter(
                "wait", int, required=False, description="Seconds to wait for a change, 0-60."
            ),
            OpenApiParameter(
                "since", str, required=False, description="The etag of the list you have."
            ),
        ],
        responses={200: TurnListSerializer, 400: OpenApiResponse(s.ErrorSerializer)},
    )
    def get(self, request: Request) -> Any:  # pragma: no cover - served by turns_view
        raise exceptions.MethodNotAllowed("GET")


#: drf-spectacular documents a route by its view's class.
turns_view.cls = TurnsApi  # type: ignore[attr-defined]
turns_view.initkwargs = {}  # type: ignore[attr-defined]
