"""A referee that plays whole games between bots, exactly as the service layer would.

The referee is the only code in ``games.bots`` that holds a true ``GameState``; it keeps it to
itself.  After every change it sends each seat what that seat's socket would carry --
``view(state, seat, now)`` and ``event_view(event, seat)`` of the change's events -- into the
seat's ``Memory``, and it asks the bots for moves with ``ask(bot, memory, now, rng)`` (the bot
sees only ``memory.observation()``, and what it decided is recorded in the memory).  Their
answers go through ``Action.from_wire`` and the engine's ``apply`` like any client's, so an
illegal move raises (tests rely on that: thousands of decisions, no refusal).

Time is simulated: a bot's action happens at ``now``, then ``think_ms`` pass (a human-like
pause, so windows of time and start delays play out as at a real table).  When nobody wants to
act, the clock jumps to the next deadline and the engine's ``advance`` applies it.  Seats are
asked in turn starting with the one that acted last, which gives the seat whose turn just
ended the first word in a window its turn opened -- as a player holding the phone would have it.

Generic over the engine interface (docs/ENGINE.md): every game's bots play in it unchanged.
"""

from __future__ import annotations

import random
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from games.engines import engine_for

from .base import Bot, ask, freeze_long_lived
from .observation import Memory


@dataclass(slots=True)
class SeatRecord:
    """One seat's bot in one game: its level, what it did and what it cost."""

    level: str
    actions: int = 0
    asked: int = 0
    cpu_s: float = 0.0  # CPU of all its decide() calls (thread_time: the referee's thread)
    action_cpu_s: float = 0.0  # CPU of the calls that returned an action
    max_cpu_s: float = 0.0


@dataclass(slots=True)
class GameRecord:
    """The outcome of one bot game."""

    seed: str
    seats: list[SeatRecord]
    winners: list[int]
    scores: list[int]
    rounds: list[list[int]] = field(default_factory=list)  # round scores, by round
    actions: int = 0
    sim_ms: int = 0


class GameTooLong(RuntimeError):
    """The game did not end within the step limit (a bot that never ends a round)."""


def play_game(
    kind: str,
    bots: Sequence[Bot],
    *,
    seed: str,
    settings: Any = None,
    think_ms: int = 300,
    rng: random.Random | None = None,
    max_steps: int = 50_000,
    freeze_gc: bool = False,
) -> GameRecord:
    """Play one game of ``kind`` between ``bots`` (seat ``i`` is ``bots[i]``) to its end.

    ``freeze_gc``: first freeze what is alive out of the collector's generations, as a Celery
    worker process does once it is set up (``freeze_long_lived``), so a benchmark's CPU per
    decision is the product's.  Off by default: it costs a full collection per game, which a
    test suite playing hundreds of games does not need.
    """
    eng = engine_for(kind)
    n = len(bots)
    if freeze_gc:
        freeze_long_lived()
    # Game play, not security: seeded so a tournament can be replayed exactly.
    rng = rng or random.Random(seed)  # noqa: S311
    rngs = [random.Random(rng.getrandbits(64)) for _ in range(n)]  # noqa: S311
    state, events = eng.new_game(
        seats=n, settings=settings if settings is not None else eng.Settings(), seed=seed, now=0
    )
    memories = [Memory(kind, i, salt=f"{seed}:{i}") for i in range(n)]
    record = GameRecord(seed, [SeatRecord(b.level) for b in bots], [], [])
    now = 0

    def feed(events: list[Any]) -> None:
        for i, m in enumerate(memories):
            m.observe(view=eng.view(state, i, now), events=[eng.event_view(e, i) for e in events])
        for e in events:
            if e.type == eng.ROUND_END_EVENT:
                record.rounds.append(list(e.data.get("round_scores", [])))

    feed(events)
    last = 0
    for _ in range(max_steps):
        if state.status != "playing":
            break
        acted = False
        for k in range(n):
            i = (last + k) % n
            sr = record.seats[i]
            t0 = time.thread_time()
            wire = ask(bots[i], memories[i], now, rngs[i])
            spent = time.thread_time() - t0
            sr.asked += 1
            sr.cpu_s += spent
            if wire is None:
                continue
            sr.actions += 1
            sr.action_cpu_s += spent
            sr.max_cpu_s = max(sr.max_cpu_s, spent)
            action = eng.Action.from_wire(wire)
            state, events = eng.apply(state, i, action, now)  # an illegal move raises
            record.actions += 1
            feed(events)
            last = i
            now += think_ms
            acted = True
            break
        if not acted:
            deadlines = eng.pending_deadlines(state)
            now = max(now, deadlines[0].at)
            state, events = eng.advance(state, now)
            feed(events)
    else:
        raise GameTooLong(f"{kind} game {seed!r} did not end in {max_steps} steps")
    record.winners = list(state.winners)
    record.scores = list(state.scores)
    record.sim_ms = now
    return record
