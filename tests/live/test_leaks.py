"""No WebSocket frame ever shows a card its receiver may not see (R3, R4, R5, R8, R21, R26).

Random games are played through the sockets (acts) and the sweep (time), with every seat and
a spectator listening. Every frame each receiver gets -- snapshots, updates, acks, errors,
catch-ups after a reconnect -- is checked against a knowledge tracker written here from the
rules and the *unredacted* stored events and snapshots; it does not call the engine's view
code. For a frame of version v the receiver may see:

* in its `state`: the cards face up at v (the pile, a card held from the pile, Kings in play,
  every hand after the reveal) and the card it holds itself;
* in an event of version e: the cards that were face up at some point of the round up to e,
  and what that very version showed it privately (its draw, its look, its Jack, a Queen's
  card landing in its left or right). A private value is allowed in no other version: a look
  is shown once.
"""

from __future__ import annotations

import asyncio
import random
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

import pytest
from channels.db import database_sync_to_async

from games import services
from games.engines.crisp import GameState, legal_actions
from games.models import Event, Game
from tests.games.leak_kit import ANONYMOUS, cards_in, label, make_guest, seat_of
from tests.live.conftest import communicator, make_game, make_user, session_cookie

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.timeout(240)]

PLAYS = {"swap", "discard", "jack", "queen", "king", "timeout"}


@dataclass
class Tracker:
    """What each seat may know, version by version, from the unredacted record."""

    seats: int
    public: set[str] = field(default_factory=set)  # face up at some point of this round
    holding: dict[int, str] = field(default_factory=dict)
    event_public: dict[int, set[str]] = field(default_factory=dict)
    event_private: dict[int, dict[int, set[str]]] = field(default_factory=dict)
    state_visible: dict[int, set[str]] = field(default_factory=dict)
    state_private: dict[int, dict[int, set[str]]] = field(default_factory=dict)

    def absorb(self, version: int, rows: list[Event], snapshot: dict[str, Any]) -> None:
        public_during = set(self.public)
        private: dict[int, set[str]] = defaultdict(set)
        for row in rows:
            if row.origin != Event.Origin.ENGINE:
                continue
            d, kind = row.data, row.type
            if kind == "round_dealt":
                self.public, self.holding = set(), {}
            elif kind == "draw":
                if d["source"] == "pile":
                    self.public.add(d["card"])
                self.holding[d["seat"]] = d["card"]
            elif kind == "look":
                private[d["seat"]] |= {d["left"], d["right"]}
            elif kind == "jack":
                private[d["seat"]].add(d["centre"])
            elif kind == "queen":
                if d["place"] != "centre":
                    private[d["seat"]].add(d["received"])
                if d["target_place"] != "centre":
                    private[d["target_seat"]].add(d["given"])
            elif kind == "reveal":
                self.public |= {c for hand in d["hands"] for c in hand}
            if kind in {"discard", "jack", "queen", "king", "king_discarded", "timeout"}:
                self.public.add(d["card"])
            if kind == "swap":
                self.public.add(d["card_out"])
            if kind in PLAYS and kind != "king":
                self.holding.pop(d.get("seat"), None)
            if kind == "king":
                self.holding.pop(d["seat"], None)
            public_during |= self.public
            for seat, card in self.holding.items():
                private[seat].add(card)
        self.event_public[version] = public_during
        self.event_private[version] = private

        state = GameState.from_json(snapshot) if snapshot else None
        visible: set[str] = set()
        held: dict[int, set[str]] = defaultdict(set)
        if state is not None:
            r = state.round
            visible |= set(r.pile)
            if r.reveal is not None:
                visible |= {c for hand in r.hands for c in hand}
            t = r.turn
            if t is not None:
                visible |= {k[0] for k in t.kings}
                if t.held is not None:
                    if t.held_from == "pile":
                        visible.add(t.held)
                    held[t.seat].add(t.held)
        self.state_visible[version] = visible
        self.state_private[version] = held

    def check(self, frame: dict[str, Any], seat: int | None, who: str) -> None:
        for event in frame.get("events", []):
            v = event["version"]
            allowed = self.event_public[v] | (
                self.event_private[v].get(seat, set()) if seat is not None else set()
            )
            leaked = cards_in(event) - allowed
            assert not leaked, f"{who} saw {leaked} in event {event} (v{v})"
        if "state" in frame:
            v = frame["version"]
            allowed = self.state_visible[v] | (
                self.state_private[v].get(seat, set()) if seat is not None else set()
            )
            leaked = cards_in(frame["state"]) - allowed
            assert not leaked, f"{who} saw {leaked} in the state of v{v}"
        rest = {k: v for k, v in frame.items() if k not in {"events", "state"}}
        assert not cards_in(rest), f"{who} saw cards in {rest}"


@dataclass
class Clock:
    ms: int = 1_900_000_000_000


def _absorb_new(game_id: int, tracker: Tracker, seen: int) -> int:
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


async def _drain(comms: dict[Any, Any], tracker: Tracker, quiet: float) -> int:
    """Check every frame that has arrived, on all sockets at once, until `quiet` of silence."""

    async def one(seat: Any, comm: Any) -> int:
        count = 0
        while not await comm.receive_nothing(timeout=quiet, interval=0.005):
            frame = await comm.receive_json_from()
            tracker.check(frame, seat_of(seat), label(seat))
            if frame["type"] in {"snapshot", "update"}:
                comm.version = max(getattr(comm, "version", -1), frame["version"])
            count += 1
        return count

    return sum(await asyncio.gather(*(one(seat, comm) for seat, comm in comms.items())))


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
    tracker = Tracker(seats)
    seen = await database_sync_to_async(_absorb_new)(game.pk, tracker, 0)

    cookies = {
        seat: await database_sync_to_async(session_cookie)(users[seat]) for seat in range(seats)
    }
    cookies[None] = await database_sync_to_async(session_cookie)(spectator)
    cookies[ANONYMOUS] = None
    comms: dict[Any, Any] = {}
    for seat, cookie in cookies.items():
        comms[seat] = communicator(game.pk, cookie=cookie)
        assert (await comms[seat].connect())[0]
    frames = await _drain(comms, tracker, 0.3)

    acts = sweeps = reconnects = 0
    pending: list[tuple[int | None, dict[str, Any]]] = []
    for _ in range(220):
        status, options, _version = await database_sync_to_async(_options)(game.pk, clock.ms)
        if status != "playing":
            break
        if options and rng.random() < 0.75:
            by_type: dict[str, list[tuple[int, dict[str, Any]]]] = defaultdict(list)
            for seat, action in options:
                by_type[action["type"]].append((seat, action))
            # Every kind of action equally often, but calls rarely: rounds get long enough
            # for Queens, Jacks, Kings and pile turnovers to happen.
            kinds = sorted(by_type)
            kind = rng.choices(kinds, [0.15 if k == "call" else 1.0 for k in kinds])[0]
            seat, action = rng.choice(by_type[kind])
            await comms[seat].send_json_to({"type": "act", "id": acts, "action": action})
            # Hold the frames until the ack: the tracker learns the new version first.
            while True:
                frame = await comms[seat].receive_json_from()  # WAIT: a hang guard
                pending.append((seat, frame))
                if frame["type"] in {"ack", "error"} and frame.get("id") == acts:
                    break
            acts += 1
        else:
            clock.ms += rng.choice([150, 400, 900, 2100, 4000])
            await database_sync_to_async(services.game_sweep)()
            sweeps += 1
        seen = await database_sync_to_async(_absorb_new)(game.pk, tracker, seen)
        for seat, frame in pending:
            tracker.check(frame, seat, f"seat {seat}")
        frames += len(pending)
        pending.clear()
        frames += await _drain(comms, tracker, 0.03)
        if rng.random() < 0.06:
            # A receiver drops out and comes back with its version (catch-up frames), or
            # asks for a resync of a random older version on its open socket.
            victim = rng.choice(list(comms))
            if rng.random() < 0.5:
                await comms[victim].disconnect()
                comms[victim] = communicator(
                    game.pk,
                    cookie=cookies[victim],
                    query=f"version={max(0, getattr(comms[victim], 'version', 0) - 2)}",
                )
                assert (await comms[victim].connect())[0]
            else:
                await comms[victim].send_json_to(
                    {"type": "resync", "version": rng.randint(0, seen)}
                )
            reconnects += 1
    frames += await _drain(comms, tracker, 0.5)
    for comm in comms.values():
        await comm.disconnect()
    kinds = {
        e.type
        for e in await database_sync_to_async(lambda: list(Event.objects.filter(game_id=game.pk)))()
    }
    print(
        f"\n{seats} seats: {acts} acts, {sweeps} sweeps, {reconnects} reconnects/resyncs, "
        f"{frames} frames checked, event types {sorted(kinds)}"
    )
    assert frames > 100
    assert {"look", "draw", "timeout"} <= kinds
