"""No WebSocket frame ever shows a card its receiver may not see (R3, R4, R5, R8, R21, R26).

Random games are played through the sockets (acts) and the sweep (time), with every seat, a
signed-in spectator and an anonymous one listening (the shared harness,
``tests/live/leak_sockets.py``: every socket drained up to the stored version's frame). Every
frame each receiver gets -- snapshots, updates, acks, errors, catch-ups after a reconnect,
resyncs -- is checked against ``FrameTracker`` (``tests/games/leak_crisp.py``), written from
the rules and the *unredacted* stored events and snapshots; it does not call the engine's view
code. A frame is judged at its own version: its state by the cards face up then plus the
receiver's own held card; an event by the round's face-up cards up to it plus what that very
version showed the receiver privately (a look is shown once).
"""

from __future__ import annotations

import random
from collections import defaultdict
from dataclasses import dataclass
from typing import Any

import pytest
from channels.db import database_sync_to_async

from games import services
from games.engines.crisp import GameState, legal_actions
from games.models import Event, Game
from tests.games.leak_crisp import FrameTracker
from tests.games.leak_kit import ANONYMOUS, label, make_guest, seat_of
from tests.live.conftest import make_game, make_user, session_cookie
from tests.live.leak_sockets import Sockets

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.timeout(240)]


@dataclass
class Clock:
    ms: int = 1_900_000_000_000


def _absorb_new(game_id: int, tracker: FrameTracker, seen: int) -> int:
    game = Game.objects.get(pk=game_id)
    rows = list(Event.objects.filter(game_id=game_id, version__gt=seen).order_by("seq"))
    for version in range(seen + 1, game.version + 1):
        # Only the current snapshot is stored: each step makes at most one version.
        tracker.absorb(version, [r for r in rows if r.version == version], game.state)
    return game.version


def _options(game_id: int, now: int) -> tuple[str, list[tuple[int, dict[str, Any]]], int]:
    game = Game.objects.get(pk=game_id)
    state = GameState.from_json(game.state)
    options = [
        (seat, action.to_wire())
        for seat in range(state.seats)
        for action in legal_actions(state, seat, now)
    ]
    return state.status, options, game.version


@pytest.mark.parametrize("seats,seed", [(2, "leak-two"), (3, "leak-three"), (4, "leak-four")])
async def test_random_games_leak_nothing_in_any_frame(
    seats: int, seed: str, scheduled: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    clock = Clock()
    monkeypatch.setattr("games.clock.now_ms", lambda: clock.ms)
    rng = random.Random(seed)
    # A guest plays seat 0 (issue 24); an anonymous spectator watches beside a signed-in one.
    users = await database_sync_to_async(
        lambda: [make_guest(), *(make_user() for _ in range(seats - 1))]
    )()
    spectator = await database_sync_to_async(make_user)()
    game = await database_sync_to_async(
        lambda: make_game(
            users,
            draw_seconds=2,
            seed=seed,
            target_score=150,
            timers={
                "memorise_ms": 1000,
                "start_delay_ms": 400,
                "window_ms": 800,
                "between_rounds_ms": 1500,
            },
        )
    )()
    tracker = FrameTracker(seats)
    seen = await database_sync_to_async(_absorb_new)(game.pk, tracker, 0)

    cookies: dict[Any, str | None] = {
        seat: await database_sync_to_async(session_cookie)(users[seat]) for seat in range(seats)
    }
    cookies[None] = await database_sync_to_async(session_cookie)(spectator)
    cookies[ANONYMOUS] = None
    sockets = Sockets(
        game.pk, cookies, lambda frame, who: tracker.check(frame, seat_of(who), label(who))
    )
    await sockets.open()
    await sockets.drain(seen)

    acts = sweeps = reconnects = 0
    for _ in range(220):
        status, options, _version = await database_sync_to_async(_options)(game.pk, clock.ms)
        if status != "playing":
            break
        held: list[dict[str, Any]] = []
        if options and rng.random() < 0.75:
            by_type: dict[str, list[tuple[int, dict[str, Any]]]] = defaultdict(list)
            for seat, action in options:
                by_type[action["type"]].append((seat, action))
            # Every kind of action equally often, but calls rarely: rounds get long enough
            # for Queens, Jacks, Kings and pile turnovers to happen.
            kinds = sorted(by_type)
            kind = rng.choices(kinds, [0.15 if k == "call" else 1.0 for k in kinds])[0]
            seat, action = rng.choice(by_type[kind])
            # Held until the ack: the tracker learns the new version first.
            held = await sockets.act(seat, acts, action)
            acts += 1
        else:
            clock.ms += rng.choice([150, 400, 900, 2100, 4000])
            await database_sync_to_async(services.game_sweep)()
            sweeps += 1
        seen = await database_sync_to_async(_absorb_new)(game.pk, tracker, seen)
        for frame in held:
            tracker.check(frame, seat, f"seat {seat}")
        sockets.frames += len(held)
        await sockets.drain(seen)
        if rng.random() < 0.06:
            # A receiver drops out and comes back with its version (catch-up frames), or
            # asks for a resync of a random older version on its open socket.
            victim = rng.choice(list(sockets.comms))
            if rng.random() < 0.5:
                await sockets.reconnect(victim, back=2)
            else:
                await sockets.resync(victim, rng.randint(0, seen))
            reconnects += 1
    await sockets.drain(seen)
    await sockets.close()
    kinds = {
        e.type
        for e in await database_sync_to_async(lambda: list(Event.objects.filter(game_id=game.pk)))()
    }
    print(
        f"\n{seats} seats: {acts} acts, {sweeps} sweeps, {reconnects} reconnects/resyncs, "
        f"{sockets.frames} frames checked, event types {sorted(kinds)}"
    )
    assert sockets.frames > 100
    assert {"look", "draw", "timeout"} <= kinds
