"""Triple Crown over the WebSocket: no frame ever shows a card or a role its receiver may not know.

Random games -- random deals and deals stacked to be Double Stakes hands, the move clock on --
are played through the sockets (acts, refused acts too) and the sweep (time), with all four
seats, a signed-in spectator and an anonymous one listening (``tests/live/leak_sockets.py``:
every socket drained up to the stored version's frame). Every frame each receiver gets --
snapshots, updates, acks, errors, catch-ups after a reconnect or a resync -- is checked by the
REST test's tracker (``tests.games.leak_triple_crown.Truth``: built from the unredacted stored
events and snapshot, never from the engine's view code) at the frame's own version: cards (your
13 are yours, played cards public, all of a hand after its reveal) and roles (your own only in a
Crown hand; the memo only to Double Stakes; everything at the reveal). A seat's state must also
equal the spectator's of the same version but for its own hand and ``you``.
"""

from __future__ import annotations

import asyncio
import json
import random
from typing import Any

import pytest
from channels.db import database_sync_to_async

from games import services
from games.engines.triple_crown import GameState, legal_actions
from games.models import Event, Game
from tests.games.leak_kit import ANONYMOUS, cards_in, label, make_guest, seat_of
from tests.games.leak_triple_crown import Truth, seeds
from tests.live.conftest import make_user, session_cookie
from tests.live.leak_sockets import Sockets

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.timeout(300)]


class Checker:
    """Checks every frame against the tracker; remembers the spectator's views by version."""

    def __init__(self, truth: Truth) -> None:
        self.truth = truth
        self.spectator_views: dict[int, dict[str, Any]] = {}
        self.seat_views: list[tuple[int, int, dict[str, Any]]] = []
        self.frames = 0
        self.kinds: dict[str, int] = {}

    def check(
        self,
        frame: dict[str, Any],
        seat: int | None,
        sent: set[str] = frozenset(),
        who: str | None = None,
    ) -> None:
        """``sent``: the cards of the receiver's own action (a refusal may name them)."""
        who = who or label(seat)
        kind = frame["type"]
        self.frames += 1
        self.kinds[kind] = self.kinds.get(kind, 0) + 1
        self.truth.check_events(frame.get("events", []), seat, f"{who} {kind}")
        payload = frame.get("state")
        if payload is not None and payload.get("state") is not None:
            v = frame["version"]
            self.truth.check_view(payload["state"], seat, f"{who} {kind} v{v}", version=v)
            if seat is None:
                self.spectator_views[v] = payload["state"]
            else:
                self.seat_views.append((seat, v, payload["state"]))
        rest = {k: val for k, val in frame.items() if k not in {"events", "state"}}
        self.truth.check_payload(rest, seat, f"{who} {kind} (rest)", sent)

    def compare_with_spectator(self) -> int:
        compared = 0
        for seat, v, view in self.seat_views:
            spec = self.spectator_views.get(v)
            if spec is not None:
                self.truth.check_same_as_spectator(view, spec, seat, f"seat {seat} v{v}")
                compared += 1
        self.seat_views.clear()
        return compared


def _options(game_id: int, now: int) -> tuple[str, list[tuple[int, dict[str, Any]]]]:
    game = Game.objects.get(pk=game_id)
    state = GameState.from_json(game.state)
    return state.status, [
        (seat, action.to_wire()) for seat in range(4) for action in legal_actions(state, seat, now)
    ]


def _refresh(truth: Truth) -> None:
    truth.refresh()


BAD = [
    {"type": "play", "card": "AS"},
    {"type": "play", "card": "2D"},
    {"type": "declare", "trumps": "NT", "memo": "low"},
    {"type": "declare", "trumps": "H", "memo": "high"},
    {"type": "play"},
]


@pytest.mark.parametrize("seed", ["tc-ws-0", "tc-ws-1", *seeds(2, "tc-ws-ds")])
async def test_random_games_leak_nothing_in_any_frame(
    seed: str, scheduled: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    clock = {"ms": 1_900_000_000_000}
    monkeypatch.setattr("games.clock.now_ms", lambda: clock["ms"])
    rng = random.Random(seed)
    # A guest plays seat 2 (issue 24); an anonymous spectator watches beside a signed-in one.
    users = await database_sync_to_async(
        lambda: [make_user(), make_user(), make_guest(), make_user()]
    )()
    spectator = await database_sync_to_async(make_user)()

    def start() -> Game:
        game = services.game_create(
            host=users[0], kind="triple_crown", settings={"move_seconds": 30}
        )
        for u in users[1:]:
            services.game_join(game=game.pk, user=u)
        services.game_start(game=game.pk, user=users[0], seed=seed, timers={"target_score": 8})
        game.refresh_from_db()
        return game

    game = await database_sync_to_async(start)()
    truth = await database_sync_to_async(Truth)(game)
    checker = Checker(truth)
    cookies: dict[Any, str | None] = {
        s: await database_sync_to_async(session_cookie)(users[s]) for s in range(4)
    }
    cookies[None] = await database_sync_to_async(session_cookie)(spectator)
    cookies[ANONYMOUS] = None
    sockets = Sockets(
        game.pk, cookies, lambda frame, who: checker.check(frame, seat_of(who), who=label(who))
    )
    await sockets.open()
    await sockets.drain(truth.version)

    acts = refusals = sweeps = reconnects = compared = 0
    for i in range(260):
        status, options = await database_sync_to_async(_options)(game.pk, clock["ms"])
        if status != "playing":
            break
        roll = rng.random()
        if options and roll < 0.8:
            if roll < 0.1:
                seat, action = rng.randrange(4), rng.choice(BAD)
            else:
                seat, action = rng.choice(options)
            # Held until the answer: the tracker learns the version first.
            held = await sockets.act(seat, i, action)
            await database_sync_to_async(_refresh)(truth)
            for frame in held:
                checker.check(frame, seat, cards_in(action) if frame["type"] == "error" else set())
            if held[-1]["type"] == "ack":
                acts += 1
            else:
                refusals += 1
        else:
            clock["ms"] += rng.choice([400, 5_000, 29_999, 30_001, 31_000])
            await database_sync_to_async(services.game_sweep)()
            await database_sync_to_async(_refresh)(truth)
            sweeps += 1
        await sockets.drain(truth.version)
        compared += checker.compare_with_spectator()
        if rng.random() < 0.06:
            victim = rng.choice(list(sockets.comms))
            if rng.random() < 0.5:
                await sockets.reconnect(victim, back=rng.choice([1, 3, 40]))
            else:
                await sockets.resync(victim, rng.randint(0, truth.version))
            reconnects += 1
    await sockets.drain(truth.version)
    await sockets.close()
    compared += checker.compare_with_spectator()
    types = {
        e.type
        for e in await database_sync_to_async(lambda: list(Event.objects.filter(game_id=game.pk)))()
    }
    print(
        f"\n{seed}: {acts} acts, {refusals} refusals, {sweeps} sweeps, {reconnects} "
        f"reconnects/resyncs, {checker.frames} frames {checker.kinds}, {compared} compared "
        f"with the spectator's, hands {len(truth.hands)}, event types {sorted(types)}"
    )
    assert checker.frames > 300 and acts > 40 and compared > 100
    assert {"round_dealt", "card_played", "trick_won", "hand_over"} <= types
    if "-ds-" in seed:
        assert "declared" in types


def test_the_frame_checker_catches_a_leak(transactional_db: None) -> None:
    """Not vacuous: an update carrying the stored (unredacted) deal fails for another seat, and
    so does a snapshot whose state shows a second hand."""
    users = [make_user() for _ in range(4)]
    game = services.game_create(host=users[0], kind="triple_crown", settings={})
    for u in users[1:]:
        services.game_join(game=game.pk, user=u)
    services.game_start(game=game.pk, user=users[0], seed="tc-ws-checker")
    game.refresh_from_db()
    checker = Checker(Truth(game))
    deal = Event.objects.get(game=game, type="round_dealt")
    raw = {"seq": deal.seq, "version": deal.version, "type": deal.type, "data": deal.data}
    with pytest.raises(AssertionError):
        checker.check({"type": "update", "version": game.version, "events": [raw]}, 1)
    engine_view = GameState.from_json(game.state).to_json()["round"]
    state = {"round": 1, "hands": engine_view["hands"], "you": None}
    with pytest.raises(AssertionError):
        checker.check(
            {"type": "snapshot", "version": game.version, "state": {"state": state}}, None
        )


async def test_the_socket_drain_catches_a_planted_leak(scheduled: Any) -> None:
    """Not vacuous, through the shared harness's drain: an update carrying the stored
    (unredacted) deal, planted in seat 0's socket, fails the drain -- whether it is already
    queued when the drain starts, or arrives later than any quiet time the old drain waited
    (0.03 s per step) as the frame of the version the drain awaits."""
    users = await database_sync_to_async(lambda: [make_user() for _ in range(4)])()

    def start() -> tuple[Game, dict[str, Any]]:
        game = services.game_create(host=users[0], kind="triple_crown", settings={})
        for u in users[1:]:
            services.game_join(game=game.pk, user=u)
        services.game_start(game=game.pk, user=users[0], seed="tc-ws-planted")
        game.refresh_from_db()
        deal = Event.objects.get(game=game, type="round_dealt")
        raw = {"seq": deal.seq, "version": deal.version, "type": deal.type, "data": deal.data}
        return game, raw

    game, raw = await database_sync_to_async(start)()
    truth = await database_sync_to_async(Truth)(game)
    checker = Checker(truth)
    cookies: dict[Any, str | None] = {
        s: await database_sync_to_async(session_cookie)(users[s]) for s in range(4)
    }
    cookies[ANONYMOUS] = None
    sockets = Sockets(
        game.pk, cookies, lambda frame, who: checker.check(frame, seat_of(who), who=label(who))
    )
    await sockets.open()
    assert await sockets.drain(truth.version) >= 5  # the same drain passes without the plant

    def plant(version: int) -> None:
        frame = {"type": "update", "version": version, "events": [raw]}
        sockets.comms[0].output_queue.put_nowait(
            {"type": "websocket.send", "text": json.dumps(frame)}
        )

    plant(truth.version)
    with pytest.raises(AssertionError, match="seat 0"):
        await sockets.drain(truth.version)
    # Late: the drain waits for the frame of its version, however late it comes.
    asyncio.get_running_loop().call_later(0.2, plant, truth.version + 1)
    with pytest.raises(AssertionError, match="seat 0"):
        await sockets.drain(truth.version + 1)
    for comm in sockets.comms.values():
        await comm.disconnect()
