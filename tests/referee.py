"""The tests' one bot referee: whole games between bots, with the truth exposed at every step.

``games.bots.arena.play_game`` is the product's referee (tournaments, benchmarks) and keeps the
true state to itself; a test that compares what a bot believes with what is true needs to see
both after every change, so this generator plays exactly as the arena does -- each seat's
``Memory`` fed what that seat's socket would carry (``view`` and ``event_view``), the bots asked
with ``ask`` in turn from the seat that acted last, ``think_ms`` after each action, the clock
jumping to the next deadline when nobody acts -- and yields ``(state, memories, now)`` after
each change.  Generic over the engine interface (docs/ENGINE.md), for every registered kind.
"""

from __future__ import annotations

import random
from collections.abc import Iterator, Sequence
from typing import Any

from games.bots import Bot, Memory, ask
from games.engines import engine_for


def referee_states(
    kind: str,
    bots: Sequence[Bot],
    *,
    seed: str,
    settings: Any,
    think_ms: int = 300,
    max_steps: int = 20_000,
) -> Iterator[tuple[Any, list[Memory], int]]:
    """Play a game of ``kind`` between ``bots`` (seat ``i`` is ``bots[i]``) to its end, yielding
    the true state, the seats' memories and ``now`` at the start and after every change.  An
    illegal move raises (the engine's ``apply``); a game not over in ``max_steps`` fails."""
    eng = engine_for(kind)
    n = len(bots)
    st, ev = eng.new_game(seats=n, settings=settings, seed=seed, now=0)
    mems = [Memory(kind, i, salt=f"{seed}:{i}") for i in range(n)]
    rng = random.Random(seed)
    rngs = [random.Random(rng.getrandbits(32)) for _ in range(n)]
    now = 0

    def feed(events: list[Any]) -> None:
        for i, m in enumerate(mems):
            m.observe(view=eng.view(st, i, now), events=[eng.event_view(e, i) for e in events])

    feed(ev)
    yield st, mems, now
    last = 0
    for _ in range(max_steps):
        if st.status != "playing":
            return
        acted = False
        for k in range(n):
            i = (last + k) % n
            wire = ask(bots[i], mems[i], now, rngs[i])
            if wire is None:
                continue
            st, ev = eng.apply(st, i, eng.Action.from_wire(wire), now)
            feed(ev)
            last, acted = i, True
            now += think_ms
            break
        if not acted:
            now = max(now, eng.pending_deadlines(st)[0].at)
            st, ev = eng.advance(st, now)
            feed(ev)
        yield st, mems, now
    raise AssertionError(f"the {kind} game {seed!r} did not end in {max_steps} steps")
