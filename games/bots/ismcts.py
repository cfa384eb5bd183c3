"""Single-observer information-set Monte Carlo tree search, once, for every game.

Cowling, Powley & Whitehouse, "Information Set Monte Carlo Tree Search", IEEE Transactions on
Computational Intelligence and AI in Games 4(2), 2012 -- the SO-ISMCTS algorithm.  Each
iteration samples one *determinisation* (a full hidden state consistent with what the searching
seat knows), walks the one shared tree using only the actions legal in that determinisation,
expands one edge, finishes with a rollout, and backs the result up.  Two details from the paper
matter and are kept:

* **availability counts**: an edge's exploration term uses how often it was *available* (legal
  in the iteration's determinisation), not how often its parent was visited, because in a
  hidden-information game an action may be legal in some sampled worlds only;
* **one tree over the searcher's information**: edges are actions; an edge's successor is split
  by what the *searching seat* observes of the move (its own drawn card, say) and by nothing it
  does not observe, so the tree never conditions on hidden values -- that is what makes the
  root decision a function of the seat's information set.

The game comes in through ``SearchGame``; this module imports no engine.  ``EngineSearch`` is
the one implementation every game uses: it runs the search on the engine interface itself --
the engine's ``legal_actions`` and ``apply`` at the search clock, on states the game's
determiniser samples -- as OpenSpiel's ``State`` does (``current_player``, ``legal_actions``,
``apply_action``, ``returns``, ``resample_from_infostate``).  A game subclasses it with its
knowledge only: who moves (``mover``; the engine's shared ``awaiting`` will say it), what the
root seat observes of a move (``observe``), its default policy (``rollout_action``) and its
horizon's reward (``rewards``).  See docs/BOTS.md, "Adding a game".
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Generic, Protocol, TypeVar

if TYPE_CHECKING:  # base imports this module (the hard level's search)
    from .base import Budget

S = TypeVar("S")  # one determinised search state (mutable, owned by one iteration)
A = TypeVar("A", bound=Hashable)


class SearchGame(Protocol[S, A]):
    """What one game gives the search.  ``S`` is private to the game (typically its engine's
    ``GameState`` wrapped with the search clock); the search only passes it back."""

    def sample(self, rng: random.Random) -> S:
        """A fresh determinisation of the root information set (a full hypothetical state)."""
        ...

    def to_move(self, s: S) -> int | None:
        """The seat that decides next in ``s``, or ``None`` at the search horizon (the round is
        over, or far enough ahead to be scored by ``rewards``)."""
        ...

    def actions(self, s: S) -> Sequence[A]:
        """The choices of ``to_move(s)`` in ``s``; never empty when ``to_move`` is a seat."""
        ...

    def apply_action(self, s: S, action: A) -> Hashable:
        """Apply ``action`` of ``to_move(s)`` to ``s`` in place (OpenSpiel's name; the engine's
        ``apply``).  Returns what the *root seat* observes of it beyond the action itself
        (``None``: nothing)."""
        ...

    def rollout_action(self, s: S, rng: random.Random) -> A:
        """The default policy's choice for ``to_move(s)``.  It may use only what that seat
        would know in ``s`` (its own cards it has seen), not the rest of the determinisation."""
        ...

    def rewards(self, s: S) -> Sequence[float]:
        """Per seat, in [0, 1], at the horizon."""
        ...


class Engine(Protocol):
    """The part of an engine package the search calls (docs/ENGINE.md)."""

    def legal_actions(self, state: Any, seat: int, now: int) -> list[Any]: ...

    def apply(self, state: Any, seat: int, action: Any, now: int) -> tuple[Any, list[Any]]: ...


class Sampler(Protocol):
    """A game's determiniser: full hypothetical engine states of the root information set."""

    def sample(self, rng: random.Random) -> Any: ...


@dataclass(slots=True)
class World:
    """One determinisation during one search iteration (mutable; owned by the iteration): the
    engine state, the search clock, and the seat ``to_move`` last named.  A game that tracks
    more per world (what each seat knows in it) subclasses it and overrides ``world``."""

    state: Any
    now: int
    actor: int | None = None


W = TypeVar("W", bound=World)


class EngineSearch(Generic[W]):
    """``SearchGame`` on the engine interface: the engine's own ``legal_actions``/``apply`` on
    the determiniser's samples, every move at the search clock ``now``.

    Why one adapter: each game used to write its own ``SearchGame`` repeating the same calls
    (to-move, the engine's legal actions for that seat, apply for that seat, the state carried
    in a per-iteration record).  The search needs the game's *knowledge* only, which a
    subclass gives by overriding:

    * ``mover(s)`` -- the seat that decides next, ``None`` at the horizon (the hand or round is
      over, or far enough ahead to be scored).  Until the engines' shared ``awaiting(state,
      now)`` and ``is_over(state)`` exist this is a small per-game hook; it may advance the
      search clock (``s.now``) past a delay in which nobody can act;
    * ``observe(s, action, events)`` -- what the *root seat* sees of a move beyond the action
      itself (its drawn card), and any per-world bookkeeping of who knows what;
    * ``rollout_action(s, rng)`` -- the default policy, on what the mover knows in ``s``;
    * ``rewards(s)`` -- per seat in [0, 1] at the horizon (the engine's ``returns`` would do
      once the game is over; a round's horizon needs the game's own reward);
    * ``actions(s)`` only to narrow the engine's legal actions (equivalent cards) or add a
      decision the engine has no action for (letting a window pass), and ``world(state)`` to
      carry more per world.
    """

    def __init__(self, engine: Engine, sampler: Sampler, seat: int, now: int) -> None:
        self.legal_actions = engine.legal_actions
        self.apply = engine.apply
        self.det = sampler
        self.seat = seat
        self.now = now

    def world(self, state: Any) -> W:
        """A fresh per-iteration record around a sampled ``state``."""
        return World(state, self.now)  # type: ignore[return-value]

    # -- SearchGame --------------------------------------------------------------------------
    def sample(self, rng: random.Random) -> W:
        return self.world(self.det.sample(rng))

    def to_move(self, s: W) -> int | None:
        s.actor = self.mover(s)
        return s.actor

    def actions(self, s: W) -> Sequence[Any]:
        assert s.actor is not None
        return self.legal_actions(s.state, s.actor, s.now)

    def apply_action(self, s: W, action: Any) -> Hashable:
        assert s.actor is not None
        s.state, events = self.apply(s.state, s.actor, action, s.now)
        return self.observe(s, action, events)

    # -- the game's knowledge ------------------------------------------------------------------
    def mover(self, s: W) -> int | None:
        """The seat that decides next in ``s``; ``None`` at the horizon."""
        raise NotImplementedError

    def observe(self, s: W, action: Any, events: list[Any]) -> Hashable:
        """What the root seat observed of ``action`` (by ``s.actor``) beyond the action itself;
        ``None`` by default (every move public)."""
        return None

    def rollout_action(self, s: W, rng: random.Random) -> Any:
        raise NotImplementedError

    def rewards(self, s: W) -> Sequence[float]:
        raise NotImplementedError


@dataclass(slots=True)
class _Node:
    edges: dict[Hashable, _Edge] = field(default_factory=dict)
    visits: int = 0


@dataclass(slots=True)
class _Edge:
    action: Hashable
    seat: int
    visits: int = 0
    total: float = 0.0
    available: int = 0
    next: dict[Hashable, _Node] = field(default_factory=dict)

    def child(self, observed: Hashable) -> _Node:
        node = self.next.get(observed)
        if node is None:
            node = self.next[observed] = _Node()
        return node


@dataclass(frozen=True, slots=True)
class SearchResult(Generic[A]):
    """The decision and what it rests on (for tests, the benchmark and logs)."""

    action: A
    visits: dict[Hashable, int]
    values: dict[Hashable, float]
    iterations: int
    cpu_s: float


def search(
    game: SearchGame[S, A],
    root_seat: int,
    budget: Budget,
    rng: random.Random,
    exploration: float = 0.7,
    search_opponents: bool = False,
    paired_root: bool = True,
    expand_after: int = 24,
    prior: A | None = None,
    confidence: float = 2.0,
    clock: Callable[[], float] = time.thread_time,
) -> SearchResult[A]:
    """Run SO-ISMCTS from the root information set of ``root_seat`` within ``budget``.

    ``exploration`` is UCB1's constant for rewards in [0, 1].  Two options, both on by default
    because a decision can afford only a few hundred iterations of a noisy card game:

    ``paired_root`` evaluates the root actions on common random numbers: each iteration
    samples one determinisation (one seed) and plays *every* root action in it, then descends
    that action's subtree by SO-ISMCTS as usual.  The root actions are legal in every sample
    (they depend only on the root seat's information), so this is well defined; comparing them
    on the same hidden cards and the same future deck removes most of the variance between
    them, which is what decides a move.  The choice is the best mean (equal visits).  With
    ``False`` the root uses UCB too and the choice is the most visited action (the paper's).

    ``search_opponents=False`` lets the other seats move by the game's default policy inside
    the tree too -- an opponent model -- and searches only the root seat's own decisions.  With
    so few iterations an opponent node would otherwise be expanded action by action with hardly
    any visits each, so the opponents would play near-randomly just below the root: a decision
    whose outcome *is* the opponents' next moves (ending the round early, say) would look far
    better than it is.
    ``True`` is the paper's plain SO-ISMCTS.

    ``expand_after``: a node below the root grows its own edges only once it has been reached
    that many times; until then the default policy moves from it.  A freshly expanded node
    tries its untried actions one by one, i.e. at random, and a node reached a handful of times
    is nothing *but* that: without the threshold the root seat's own later decisions would be
    played near-randomly in every line the search explores little, and an action followed by
    more of them (waiting, against ending the round now) would look worse than it is.

    ``prior`` (paired root only): the game's own heuristic choice.  The search replaces it
    only with an action whose paired advantage over it is at least ``confidence`` standard
    errors: an underpowered search -- a few hundred noisy iterations, near-equal options --
    then falls back on the heuristic instead of on noise, and overrides it where it finds a
    real difference.

    The search stops before an iteration that would, at the mean cost so far, overrun the
    budget, and inside an iteration before a play-out that could overrun it at the dearest
    play-out's cost so far -- an iteration that plays every root action to the end of a
    hand varies in cost with the sampled world; that world is then left out of the
    choice.  Without a ``prior`` at least one iteration per root action runs even on a tiny
    budget; with one, a budget spent before the first whole world returns the prior.

    ``clock`` is what the budget is measured on, in seconds: ``time.thread_time``, the
    deciding thread's CPU (``Budget``).  It is a seam for tests only: a fake clock that
    advances by a fixed cost per play-out makes the stopping rule exact and independent of
    the machine's load (tests/bots/test_bots_budget.py); the bots never pass it.
    """
    root = _Node()
    t0 = clock()
    limit = budget.cpu_ms / 1000.0
    only = None if search_opponents else root_seat
    first = game.sample(rng)
    if game.to_move(first) != root_seat:
        raise ValueError(f"the root seat {root_seat} is not to move in the root state")
    root_actions = list(game.actions(first))
    if len(root_actions) == 1:
        return SearchResult(root_actions[0], {root_actions[0]: 0}, {}, 0, 0.0)
    it = 0
    worst = 0.0  # the dearest single play-out so far (CPU s)
    paired: list[list[float]] = []  # per iteration: the root actions' rewards, same world
    while True:
        if budget.max_iterations is not None and it >= budget.max_iterations:
            break
        if it and len(root.edges) >= len(root_actions):
            spent = clock() - t0
            if spent + spent / it >= limit:  # the next iteration would overrun the budget
                break
        if paired_root:
            seed = rng.getrandbits(64)
            row = []
            for a in root_actions:
                t1 = clock()
                if (it or prior is not None) and t1 - t0 + worst >= limit:
                    break  # the next play-out could overrun: this world is left out
                r = random.Random(seed)  # noqa: S311 - the same world for every root action
                s = game.sample(r)
                game.to_move(s)
                row.append(
                    _iterate(game, root, s, r, exploration, only, expand_after, first_action=a)
                )
                worst = max(worst, clock() - t1)
            if len(row) < len(root_actions):
                break
            paired.append(row)
        else:
            _iterate(game, root, game.sample(rng), rng, exploration, only, expand_after)
        it += 1
    edges = root.edges.values()
    if paired_root and not paired:  # the budget was spent before one whole world: the prior
        assert prior is not None
        return SearchResult(prior, {}, {}, 0, clock() - t0)
    if paired_root:
        # The best mean over the complete worlds (a world cut short by the budget is not in
        # ``paired``; its partial rewards in the edges would favour the actions played first).
        means = [sum(row[i] for row in paired) / len(paired) for i in range(len(root_actions))]
        b = max(range(len(root_actions)), key=lambda i: means[i])
        best = root.edges[root_actions[b]]
        if prior is not None and prior in root.edges and best.action != prior:
            j = root_actions.index(prior)  # type: ignore[arg-type]
            if not _significant([row[b] - row[j] for row in paired], confidence):
                best = root.edges[prior]
    else:
        best = max(edges, key=lambda e: (e.visits, e.total))
    return SearchResult(
        best.action,  # type: ignore[arg-type]
        {e.action: e.visits for e in edges},
        {e.action: e.total / e.visits for e in edges if e.visits},
        it,
        clock() - t0,
    )


def _iterate(
    game: SearchGame[S, A],
    root: _Node,
    s: S,
    rng: random.Random,
    c: float,
    only_seat: int | None,
    expand_after: int,
    first_action: A | None = None,
) -> float:
    node = root
    path: list[_Edge] = []
    if first_action is not None:  # paired root: this root action, in this world
        seat = game.to_move(s)
        assert seat is not None
        e = node.edges.get(first_action)
        if e is None:
            e = node.edges[first_action] = _Edge(first_action, seat)
        e.available += 1
        path.append(e)
        node = e.child(game.apply_action(s, first_action))
        node.visits += 1
    # Selection and expansion: down the tree while every legal action has an edge.
    while True:
        seat = game.to_move(s)
        if seat is None:
            break
        if node is not root and node.visits < expand_after:
            break  # not reached often enough to search here: the default policy moves
        if only_seat is not None and seat != only_seat:
            # An opponent moves by the default policy; the tree still branches on its move
            # (public) so the root seat's later decisions are keyed by what it has seen.
            a = game.rollout_action(s, rng)
            e = node.edges.get(a)
            if e is None:
                e = node.edges[a] = _Edge(a, seat)
            node = e.child(game.apply_action(s, a))
            node.visits += 1
            continue
        acts = game.actions(s)
        untried = []
        legal_edges = []
        for a in acts:
            e = node.edges.get(a)
            if e is None:
                untried.append(a)
            else:
                e.available += 1
                legal_edges.append(e)
        if untried:
            a = untried[rng.randrange(len(untried))]
            e = node.edges[a] = _Edge(a, seat, available=1)
            path.append(e)
            node = e.child(game.apply_action(s, a))
            break
        e = max(legal_edges, key=lambda e: _ucb(e, c))
        path.append(e)
        node = e.child(game.apply_action(s, e.action))  # type: ignore[arg-type]
        node.visits += 1
    # Simulation with the game's default policy.
    while game.to_move(s) is not None:
        game.apply_action(s, game.rollout_action(s, rng))
    rewards = game.rewards(s)
    for e in path:
        e.visits += 1
        e.total += rewards[e.seat]
    return rewards[path[0].seat] if path else 0.0


def _significant(diffs: list[float], z: float) -> bool:
    """Whether the mean of paired differences is more than ``z`` standard errors above 0."""
    n = len(diffs)
    if n < 2:
        return False
    mean = sum(diffs) / n
    var = sum((d - mean) ** 2 for d in diffs) / (n - 1)
    if var == 0.0:
        return mean > 0.0
    return mean > z * math.sqrt(var / n)


def _ucb(e: _Edge, c: float) -> float:
    if e.visits == 0:
        return math.inf
    return e.total / e.visits + c * math.sqrt(math.log(e.available) / e.visits)
