"""Cribbage: no WebSocket frame ever shows a card its receiver may not see (C30).

Random games are played through the sockets (acts) and the sweep (time), with both seats, a
signed-in spectator and an anonymous one listening (``tests/live/leak_sockets.py``: every socket
drained up to the stored version's frame). Every frame each receiver gets -- snapshots, updates,
acks, errors, catch-ups after a reconnect, resyncs of old versions -- is checked against the
knowledge tracker of ``tests/games/leak_cribbage.py`` (``Knowledge``), built from the
*unredacted* stored events; it does not call the engine's view code. An event is judged by what
that event may say to that receiver; a state of version v by what was public at v plus the
receiver's own cards.
"""

from __future__ import annotations

import random
from collections import defaultdict
from dataclasses import dataclass
from typing import Any

import pytest
from channels.db import database_sync_to_async

from games import services
from games.engines.cribbage import GameState, legal_actions
from games.models import Event, Game
from tests.games.leak_cribbage import Knowledge
from tests.games.leak_kit import ANONYMOUS, cards_in, label, make_guest, seat_of
from tests.live.conftest import make_user, session_cookie
from tests.live.leak_sockets import Sockets

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.timeout(240)]


def check(know: Knowledge, frame: dict[str, Any], seat: int | None, who: str) -> None:
    """One frame, every part of it."""
    know.check_events(frame.get("events", []), seat, f"{who} {frame['type']}")
    if frame.get("state") is not None:
        know.check_state(frame["state"], seat, f"{who} {frame['type']}", frame["version"])
    rest = {k: v for k, v in frame.items() if k not in {"events", "state"}}
    assert not cards_in(rest), f"{who} saw cards in {rest}"


@dataclass
class Clock:
    ms: int = 1_900_000_000_000


def _make_game(users: list[Any], seed: str, move_seconds: int | None, target: int) -> Game:
    """A started game; a per-move clock shorter than the host's 30/60 s menu and a short
    target go in with the start's test-only overrides of the engine's settings."""
    game = services.game_create(host=users[0], kind="cribbage", settings={})
    timers: dict[str, Any] = {"target_score": target}
    if move_seconds:
        timers["move_seconds"] = move_seconds
    services.game_join(game=game.pk, user=users[1])
    services.game_start(game=game.pk, user=users[0], seed=seed, timers=timers)
    game.refresh_from_db()
    return game


def _absorb(game_id: int, know: Knowledge) -> int:
    know.absorb(Event.objects.filter(game_id=game_id, seq__gt=know.last_seq).order_by("seq"))
    return Game.objects.get(pk=game_id).version


def _options(game_id: int, now: int) -> tuple[str, list[tuple[int, dict[str, Any]]]]:
    game = Game.objects.get(pk=game_id)
    if game.status != "playing":
        return game.status, []
    state = GameState.from_json(game.state)
    options = [(s, a.to_wire()) for s in (0, 1) for a in legal_actions(state, s, now)]
    return game.status, options


@pytest.mark.parametrize(
    "seed,move_seconds,target", [("crib-ws-a", 2, 61), ("crib-ws-b", None, 121)]
)
async def test_random_cribbage_games_leak_nothing_in_any_frame(
    seed: str,
    move_seconds: int | None,
    target: int,
    scheduled: Any,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    clock = Clock()
    monkeypatch.setattr("games.clock.now_ms", lambda: clock.ms)
    rng = random.Random(seed)
    # A guest plays seat 1 (issue 24); an anonymous spectator watches beside a signed-in one.
    users = await database_sync_to_async(lambda: [make_user(), make_guest()])()
    spectator = await database_sync_to_async(make_user)()
    game = await database_sync_to_async(_make_game)(users, seed, move_seconds, target)
    know = Knowledge()
    seen = await database_sync_to_async(_absorb)(game.pk, know)

    cookies: dict[Any, str | None] = {
        seat: await database_sync_to_async(session_cookie)(users[seat]) for seat in (0, 1)
    }
    cookies[None] = await database_sync_to_async(session_cookie)(spectator)
    cookies[ANONYMOUS] = None
    sockets = Sockets(
        game.pk, cookies, lambda frame, who: check(know, frame, seat_of(who), label(who))
    )
    await sockets.open()
    await sockets.drain(seen)

    acts = sweeps = reconnects = refusals = 0
    for _ in range(260):
        status, options = await database_sync_to_async(_options)(game.pk, clock.ms)
        if status != "playing":
            break
        held: list[dict[str, Any]] = []
        if options and rng.random() < 0.8:
            seat, action = rng.choice(options)
            if rng.random() < 0.07:
                # A refused move: the other seat's, or a card the mover does not hold.
                seat = 1 - seat
                refusals += 1
            # Held until the ack: the tracker learns the new version first.
            held = await sockets.act(seat, acts, action)
            acts += 1
        else:
            clock.ms += rng.choice([300, 1000, 2001, 2500, 4000])
            await database_sync_to_async(services.game_sweep)()
            sweeps += 1
        seen = await database_sync_to_async(_absorb)(game.pk, know)
        for frame in held:
            check(know, frame, seat, f"seat {seat}")
        sockets.frames += len(held)
        await sockets.drain(seen)
        if rng.random() < 0.07:
            # A receiver drops out and comes back with its version (catch-up frames), or
            # asks for a resync of a random older version on its open socket.
            victim = rng.choice(list(sockets.comms))
            if rng.random() < 0.5:
                await sockets.reconnect(victim, back=3)
            else:
                await sockets.resync(victim, rng.randint(0, seen))
            reconnects += 1
    await sockets.drain(seen)
    await sockets.close()
    frames = sockets.frames
    kinds = defaultdict(int)
    for row in know.rows:
        kinds[row.type] += 1
    print(
        f"\ncribbage {seed}: {acts} acts ({refusals} refused on purpose), {sweeps} sweeps, "
        f"{reconnects} reconnects/resyncs, {frames} frames checked, events {dict(kinds)}"
    )
    assert frames > 150
    assert {"laid_away", "play", "show", "hand_over"} <= set(kinds)
    if move_seconds:
        assert any(r.data.get("timeout") for r in know.rows if r.type in {"laid_away", "play"})
