"""The shape every bot has: ``decide(memory, now, rng) -> wire action | None``.

The signature *is* the fairness argument (docs/BOTS.md): a bot is handed its seat's
``Observation`` (a frozen record built only from that seat's redacted payloads and its own
past decisions), the instant it acts at, and a plain random source -- nothing that could hold
the true ``GameState``, the deck, the seed or another seat's view, and nothing writable that a
caller could fill with them.  ``Bot.decide`` checks the three exact types before a level's
``choose`` runs, so even a caller that tries to pass something else (a ``Memory``, a state, a
``Random`` subclass carrying an attribute) fails loudly instead of producing a clairvoyant bot.
``ask`` is how a caller takes a decision: the observation in, the decision recorded.
"""

from __future__ import annotations

import gc
import random
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from . import ismcts
from .observation import Memory, Observation, ObservationError


def freeze_long_lived() -> None:
    """Move every object alive now out of the garbage collector's generations (``gc.freeze``).

    Why: a hard decision's search allocates heavily, which triggers generation-2 collections,
    and each walks *every* long-lived object of the process -- Django, Celery, the engines'
    modules.  Landing inside a decision that pass pushed searches past their CPU budget
    (bench/RESULTS.md: 235 ms worst with the default collector, 201.7 ms with this before each
    game).  Call it once a long-lived process is set up (a Celery worker process) or before
    each game of a benchmark: what was frozen earlier is unfrozen first, so a previous game's
    garbage is collected rather than kept for good.  Objects freed by reference counting are
    freed as always; only the collector's passes skip the frozen ones.
    """
    gc.unfreeze()
    gc.collect()
    gc.freeze()


#: The levels every game offers, weakest first.  ``random`` is the benchmark's floor.
LEVELS = ("random", "easy", "medium", "hard")


@dataclass(frozen=True, slots=True)
class Budget:
    """How much CPU one decision may take: a table of bots must not eat the server.

    Measured with ``time.thread_time``: the CPU of the *deciding thread* only.  Wall time
    would let a busy machine (other processes, other engineers' jobs, a loaded server) cut a
    search short and so weaken the bot; the process's CPU (``process_time``) would do the same
    whenever another thread of the process works -- a threaded Celery worker running several
    bots, the benchmark's own bookkeeping.  The thread's CPU is what this decision cost, so the
    same budget buys the same search anywhere (tests/bots/test_bots_budget.py).
    ``max_iterations`` caps the search as well (tests use it for reproducible results
    independent of machine speed).
    """

    cpu_ms: float = 200.0
    max_iterations: int | None = None

    def __post_init__(self) -> None:
        if not (isinstance(self.cpu_ms, (int, float)) and self.cpu_ms > 0):
            raise ValueError("cpu_ms must be a positive number")
        if self.max_iterations is not None and self.max_iterations < 1:
            raise ValueError("max_iterations must be >= 1 or None")


@dataclass(slots=True)
class Stats:
    """What a bot spent: decisions taken, searches run, CPU seconds (``thread_time``)."""

    decisions: int = 0
    searches: int = 0
    overrides: int = 0  # searches whose choice was not the heuristic prior's
    iterations: int = 0
    cpu_s: float = 0.0
    max_cpu_s: float = 0.0

    def add(self, cpu: float) -> None:
        self.decisions += 1
        self.cpu_s += cpu
        self.max_cpu_s = max(self.max_cpu_s, cpu)


class Bot(ABC):
    """One computer player of one game at one level.

    Stateless between calls except for ``stats``: everything a bot remembers is in the
    ``Observation`` it is handed -- its seat's payloads and its own past decisions, kept by the
    caller's ``Memory`` (so a Celery task can rebuild the bot from its kind and level and the
    stored memory) -- and every random choice comes from the ``rng`` it is handed.
    """

    kind: str = ""
    level: str = ""

    def __init__(self) -> None:
        self.stats = Stats()
        self.started = 0.0  # thread_time when the current decision began

    def decide(self, memory: Observation, now: int, rng: random.Random) -> dict[str, Any] | None:
        """The wire action to submit at ``now`` (``Action.to_wire()`` form), or ``None`` to do
        nothing now (nothing to do, or the bot chose to wait -- e.g. to let a window pass).

        ``now`` is the instant the action will be judged at (ms): the engine's deadlines
        apply as for anybody.  The result is legal at ``now`` for the seat as it was last
        observed; if more happened since (an unseen frame), the service layer refuses it
        like any stale move.
        """
        if type(memory) is not Observation:
            raise ObservationError(
                f"a bot decides from an Observation, not {type(memory).__name__}"
            )
        if memory.kind != self.kind:
            raise ObservationError(f"a {self.kind} bot was handed a {memory.kind} memory")
        if type(now) is not int:
            raise ObservationError("now must be int milliseconds")
        if type(rng) is not random.Random or set(vars(rng)) - {"gauss_next"}:
            # Exactly the standard generator: a subclass or an extra attribute could carry
            # the truth in.
            raise ObservationError("rng must be a plain random.Random")
        t0 = self.started = time.thread_time()
        try:
            return self.choose(memory, now, rng)
        finally:
            self.stats.add(time.thread_time() - t0)

    def remaining(self, budget: Budget) -> Budget:
        """What is left of ``budget`` for this decision (its set-up -- replaying the memory,
        the determiniser -- counts too), for a search that must fit the whole decision."""
        spent_ms = (time.thread_time() - self.started) * 1000.0
        # 2 ms for what follows the search (choosing, the wire form) on a budget of 200.
        reserve = min(2.0, budget.cpu_ms / 100.0)
        return Budget(max(budget.cpu_ms - spent_ms - reserve, 0.5), budget.max_iterations)

    @abstractmethod
    def choose(self, memory: Observation, now: int, rng: random.Random) -> dict[str, Any] | None:
        """The level's policy; only ever called through ``decide`` (inputs checked)."""

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.kind}/{self.level}>"


# ================================================================================================
# The level frame: what every game's levels do alike
# ================================================================================================
def nothing_to_do(view: dict[str, Any], now: int) -> bool:
    """Whether the seat's view leaves it nothing to do at ``now``: the game is not being
    played, or the view offers the seat no move and none of its deadlines has passed since
    (a passed deadline -- a start delay -- may have made a move legal)."""
    if view["status"] != "playing":
        return True
    return not view["you"]["can"] and not any(d["at"] <= now for d in view["deadlines"])


class Level(Bot):
    """The frame every level of every game shares; a game's frame class supplies its knowledge.

    Why one frame: the three games' levels did the same steps in the same order -- nothing to
    do, replay the memory into the seat's knowledge, build the determiniser, ask the engine
    for the seat's legal actions on one sample (they depend only on what the seat may know),
    then the level's choice -- and each game had its own copy.  A game's frame class (in
    ``games/bots/<kind>.py``) sets ``kind``, ``knowledge`` (its tracker),
    ``determiniser`` (a class: ``(observation, knowledge) -> .sample(rng) -> state``) and
    ``legal_actions`` (its engine's), and says how a decision is split (``policy``; ``act``
    when the game has decisions the frame does not know, such as an opening look).  The
    level classes below (``RandomLevel`` ... ``HardLevel``) hold what a level is alike in
    every game; a game's level is ``class MediumBot(MediumLevel, TheGamesBot)``.
    """

    #: ``(observation) -> knowledge``: the game's knowledge tracker
    knowledge: Callable[..., Any]
    #: ``(observation, knowledge) -> determiniser`` with ``sample(rng) -> state``
    determiniser: Callable[..., Any]
    #: ``(state, seat, now) -> list[action]``: the engine's own legal actions
    legal_actions: Callable[..., Sequence[Any]]

    @classmethod
    def legal_now(cls, memory: Observation, now: int, rng: random.Random) -> list[Any]:
        """The seat's legal actions at ``now``, asked of the engine on one determinisation:
        they depend only on what the seat may know, so any consistent sample gives the true
        list (tests use it to check a decision against what the seat could do)."""
        det = cls.determiniser(memory, cls.knowledge(memory))
        return list(cls.legal_actions(det.sample(rng), memory.seat, now))

    def track(self, memory: Observation) -> Any:
        """The seat's knowledge (a level that forgets overrides this)."""
        return type(self).knowledge(memory)

    def choose(self, memory: Observation, now: int, rng: random.Random) -> dict[str, Any] | None:
        view = memory.view
        if view is None or nothing_to_do(view, now):
            return None
        k = self.track(memory)
        det = type(self).determiniser(memory, k)
        legal = list(type(self).legal_actions(det.sample(rng), memory.seat, now))
        if not legal:
            return None
        action = self.act(memory, k, det, legal, now, rng)
        return None if action is None else action.to_wire()

    def act(
        self, memory: Observation, k: Any, det: Any, legal: list[Any], now: int, rng: random.Random
    ) -> Any:
        """The action to take among ``legal`` (never empty), or ``None`` to wait.  Default: the
        only legal action without thinking, else the level's ``policy``."""
        if len(legal) == 1:
            return legal[0]
        return self.policy(memory, k, det, legal, now, rng)

    def policy(
        self, memory: Observation, k: Any, det: Any, legal: list[Any], now: int, rng: random.Random
    ) -> Any:
        """The level's choice among two or more legal actions (a game's frame dispatches it to
        its kinds of decision; ``RandomLevel`` overrides it for every game)."""
        raise NotImplementedError


class RandomLevel(Level):
    """Uniformly random among the legal actions: the benchmark's floor, in every game."""

    level = "random"

    def policy(
        self, memory: Observation, k: Any, det: Any, legal: list[Any], now: int, rng: random.Random
    ) -> Any:
        return legal[rng.randrange(len(legal))]


class EasyLevel(Level):
    """Simple moves with some randomness or forgetting: the game's easy heuristics."""

    level = "easy"


class MediumLevel(Level):
    """Remembers everything; the game's sound heuristic (and hard's prior and opponent model)."""

    level = "medium"


class HardLevel(Level):
    """The medium heuristic as the prior of an SO-ISMCTS search within a CPU budget.

    What is alike in every game: the budget (``Bot.remaining``: the decision's set-up is paid
    from it too), the prior test (``confidence`` standard errors, ``ismcts.search``), the
    statistics (``stats.searches``/``iterations``/``overrides``) and ``last`` (the latest
    ``SearchResult``, for tests and logs).  A game's hard level builds its ``SearchGame``
    (normally an ``ismcts.EngineSearch``) and its prior, and calls ``search``.
    """

    level = "hard"
    #: standard errors by which a searched move must beat the prior (``ismcts.search``)
    confidence = 2.0

    def __init__(self, budget: Budget | None = None) -> None:
        super().__init__()
        self.budget = budget or Budget()
        self.last: Any = None  # ismcts.SearchResult of the latest search

    def search(self, game: Any, seat: int, rng: random.Random, prior: Any) -> Any:
        """Search ``game`` from ``seat``'s information set with what is left of the budget;
        the chosen action (``prior`` unless another is better by ``confidence`` standard
        errors)."""
        res = ismcts.search(
            game, seat, self.remaining(self.budget), rng, prior=prior, confidence=self.confidence
        )
        self.stats.searches += 1
        self.stats.iterations += res.iterations
        self.stats.overrides += prior is not None and res.action != prior
        self.last = res
        return res.action


def ask(bot: Bot, memory: Memory, now: int, rng: random.Random) -> dict[str, Any] | None:
    """Take one decision of ``bot`` for the seat of ``memory`` and record it there.

    The caller's one call (service layer, referee, tests): the bot sees only
    ``memory.observation()`` -- frozen, from the seat's payloads and its past decisions -- and
    what it returned becomes one more past decision (``Memory.record``), which is all a bot
    remembers of itself between calls.
    """
    action = bot.decide(memory.observation(), now, rng)
    memory.record(now, action)
    return action
