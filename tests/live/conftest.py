"""Fixtures for the live layer's tests: users, games, sockets (in-process and real)."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

import pytest
from channels.testing import WebsocketCommunicator
from django.contrib.auth import get_user_model
from django.test import Client

from crisp_site.asgi import application
from games import services
from games.models import Game

_names = itertools.count(1)


def make_user(**extra: Any) -> Any:
    return get_user_model().objects.create_user(
        username=f"live{next(_names)}", password="pw-not-secret-123", **extra
    )


def make_game(
    players: list[Any],
    *,
    private: bool = False,
    draw_seconds: int | None = None,
    timers: dict[str, int] | None = None,
    start: bool = True,
    seed: str | None = None,
    target_score: int = 100,
) -> Game:
    """A game hosted by players[0] with every player seated, started with `timers`.

    A draw limit shorter than the lobby's 30/45/60 s goes in with the start's test-only timer
    overrides: the engine accepts any positive number of seconds, the host's menu does not.
    """
    host, *others = players
    game = services.game_create(host=host, private=private, settings={"target_score": target_score})
    for user in others:
        if private:
            services.game_join(game=game.pk, user=user, invite_code=game.invite_code)
        else:
            services.game_join(game=game.pk, user=user)
    overrides = dict(timers or {})
    if draw_seconds is not None:
        overrides["draw_seconds"] = draw_seconds
    if start:
        services.game_start(game=game.pk, user=host, seed=seed, timers=overrides or None)
    game.refresh_from_db()
    return game


def session_cookie(user: Any) -> str:
    client = Client()
    client.force_login(user, backend="django.contrib.auth.backends.ModelBackend")
    return f"sessionid={client.cookies['sessionid'].value}"


#: How long a socket test waits for the consumer by default (to accept, to send a frame, to
#: stop): a ceiling for an event that will come, not a guess at how long it takes.
WAIT = 60


class Communicator(WebsocketCommunicator):
    """Channels' in-process socket with waits fit for a busy machine.

    Channels' own defaults (1 s to accept the connection, 1 s per frame) are guesses a consumer
    starved of CPU misses: at a load average of 18 to 51 on two cores, connects took longer.
    A test that passes its own `timeout` still gets it.
    """

    async def connect(self, timeout: float = WAIT) -> Any:
        return await super().connect(timeout)

    async def receive_from(self, timeout: float = WAIT) -> Any:
        return await super().receive_from(timeout)

    async def receive_json_from(self, timeout: float = WAIT) -> Any:
        return await super().receive_json_from(timeout)

    async def receive_output(self, timeout: float = WAIT) -> Any:
        return await super().receive_output(timeout)

    async def disconnect(self, code: int = 1000, timeout: float = WAIT) -> None:
        await super().disconnect(code, timeout)


def communicator(
    game_id: int,
    *,
    cookie: str | None = None,
    query: str = "",
    headers: list[tuple[bytes, bytes]] | None = None,
) -> WebsocketCommunicator:
    all_headers = [(b"origin", b"http://localhost"), (b"host", b"localhost"), *(headers or [])]
    if cookie:
        all_headers.append((b"cookie", cookie.encode()))
    path = f"/ws/games/{game_id}/" + (f"?{query}" if query else "")
    return Communicator(application, path, headers=all_headers)


@pytest.fixture
def scheduled(monkeypatch: pytest.MonkeyPatch) -> list[tuple[int, list[tuple[str, Any]]]]:
    """In-process tests drive time themselves: record timers instead of enqueueing them.

    (Enqueued with a fake clock they would sit in the test queue for a later worker.)
    """
    calls: list[tuple[int, list[tuple[str, Any]]]] = []
    monkeypatch.setattr(
        "games.scheduling.schedule_deadlines",
        lambda game_id, deadlines, version=None: calls.append((game_id, list(deadlines))),
    )
    return calls


@pytest.fixture
def users_factory(transactional_db: None) -> Callable[..., list[Any]]:
    return lambda n, **extra: [make_user(**extra) for _ in range(n)]
