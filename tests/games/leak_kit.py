"""The one REST leak harness (issue 20): random games of any registered kind through the API,
every response checked against the kind's own knowledge tracker.

A random game is driven the same way for every game: random clock jumps (each kind's list holds
its timers' exact boundaries), deadlines swept or fired at random, moves refused on purpose, and
otherwise a random legal move of a random seat, taken from the legal-actions endpoint of every
seat (read again only once the version or the clock moved: the answer is the game's at that
version and instant).  After every step that stored a new version every seat, a signed-in
spectator and an anonymous one (no account at all: watching needs none, issue 24) fetch the state
and the event log (from the start now and then, else since the last event they saw; the mover's
state at that version is its move's answer, which the state endpoint's own function made); the
anonymous one must be answered, with exactly the signed-in spectator's answer (its lobby card
and chat too, every few steps).  After a step that stored nothing one receiver in turn reads the
state.  The caller may seat a guest player (``make_guest``).
Every card code anywhere in any response -- values, keys, and words inside text -- is checked
by the kind's ``LeakTable``: a tracker written from the rules over the unredacted truth
(``Event.data``, ``Game.state``) that never calls the engine's view code
(``tests/games/leak_<kind>.py``).

How many games: ``CRISP_LEAK_GAMES`` (games per kind) if set, else 4 per kind under the
``default`` profile and 8 under ``ci`` (tests/depth.py).
"""

from __future__ import annotations

import os
import random
import re
from collections import defaultdict
from typing import Any, ClassVar

from rest_framework.test import APIClient

from games import services
from games.models import Game
from tests.depth import depth

from .conftest import client_for

#: A card code as a whole string or as a word inside a text (a reason, a log line).
CARD = re.compile(r"\b[A2-9TJQK][SHDC]\b")


def leak_games() -> int:
    """How many random games per kind the leak tests play (see the module's docstring)."""
    if os.environ.get("CRISP_LEAK_GAMES"):
        return int(os.environ["CRISP_LEAK_GAMES"])
    return depth(default=4, ci=8)


#: The receiver key of a spectator with no account at all (no session, no token), beside the
#: seats' numbers and None (a signed-in spectator), in the live leak tests' socket maps.
ANONYMOUS = "anonymous"


def seat_of(who: int | str | None) -> int | None:
    """The seat whose knowledge a receiver may be shown: an anonymous spectator's is None."""
    return None if who == ANONYMOUS else who  # type: ignore[return-value]


def label(who: int | str | None) -> str:
    return {None: "spectator", ANONYMOUS: "anonymous spectator"}.get(who, f"seat {who}")  # type: ignore[arg-type]


def make_guest() -> Any:
    """A guest player (issue 24): a session-bound account with a generated name, made the way
    "Play as guest" makes it."""
    from accounts import services as accounts

    return accounts.guest_create()


def with_guest(users: list[Any], rng: random.Random) -> list[Any]:
    """``users`` with a guest in seat 0 or 1 (every game seats at least two): the host or not."""
    out = list(users)
    out[rng.randrange(2)] = make_guest()
    return out


def without_now(value: Any) -> Any:
    """A JSON answer without the server clock's readings (``now``): two requests are never
    made at the same instant, so answers are compared without them."""
    if isinstance(value, dict):
        return {k: without_now(v) for k, v in value.items() if k != "now"}
    if isinstance(value, list):
        return [without_now(v) for v in value]
    return value


def same_as_spectator(anonymous: Any, signed_in: Any, where: str) -> None:
    """An anonymous spectator's answer is the signed-in spectator's (``now`` aside)."""
    assert without_now(anonymous) == without_now(signed_in), (
        f"{where}: anonymous {anonymous} != {signed_in}"
    )


def cards_in(value: Any) -> set[str]:
    """Every card code anywhere in a JSON value: values, keys, and words inside strings."""
    found: set[str] = set()
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            found.update(CARD.findall(item))
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list | tuple):
            stack.extend(item)
    return found


class LeakTable:
    """One kind's part of the harness: how its random game starts, and the checks of its
    tracker.  Subclasses set the class attributes and implement the ``check_*`` methods."""

    kind: ClassVar[str]
    #: Clock jumps (ms) while a move clock runs: its exact boundaries among them.
    jumps: ClassVar[list[int]]
    #: Jumps when the game has no move clock.
    calm_jumps: ClassVar[list[int]] = [0, 1000]
    #: Chances of a step: a sweep, else a fired deadline, else a refused move, else a move.
    p_sweep: ClassVar[float] = 0.1
    p_fire: ClassVar[float] = 0.06
    p_bad: ClassVar[float] = 0.08
    steps: ClassVar[int]

    def __init__(self, game: Game, players: list[Any], clocked: bool) -> None:
        self.game = game
        self.players = players
        self.clocked = clocked
        self.stats: dict[str, int] = defaultdict(int)

    # --- the game ------------------------------------------------------------------------------
    @classmethod
    def start(cls, users: list[Any], rng: random.Random, seed: str) -> LeakTable:
        raise NotImplementedError

    def refresh(self) -> None:
        """Take in what the game stored since the last refresh, the game's row with it (the
        harness reads the version and the status from ``self.game``)."""
        raise NotImplementedError

    def bad_move(self, rng: random.Random, seat: int) -> dict[str, Any]:
        """A move ``seat`` may not make now (or a malformed one)."""
        raise NotImplementedError

    def before_options(self, now: int) -> None:
        """Before the seats are asked for their legal moves (a kind may apply due timeouts)."""

    # --- the checks ----------------------------------------------------------------------------
    def check_actions(self, body: Any, seat: int, now: int) -> None:
        raise NotImplementedError

    def check_act(self, body: dict[str, Any], seat: int) -> None:
        """A move's 200 answer: its state and its events."""
        raise NotImplementedError

    def check_refusal(self, body: Any, seat: int, action: dict[str, Any]) -> None:
        raise NotImplementedError

    def check_state(self, body: Any, seat: int | None) -> None:
        """The state endpoint's answer to ``seat`` (None: a spectator)."""
        raise NotImplementedError

    def check_events(self, events: list[dict[str, Any]], seat: int | None, where: str) -> None:
        raise NotImplementedError

    def check_reads(self, step: int, clients: list[tuple[int | None, APIClient]]) -> None:
        """Anything more a kind reads after a step that stored a new version (none by
        default)."""

    def after_step(self, step: int) -> None:
        """Anything a caller checks after every step, reads or not (none by default)."""


#: The reads from ``since=0`` (the whole event log, every receiver) come every FULL-th read step;
#: the anonymous spectator's lobby card and chat are compared every LOBBY-th.
FULL = 10
LOBBY = 5


def play_and_check(
    table_cls: type[LeakTable],
    users: list[Any],
    spectator: Any,
    fake_clock: Any,
    seed: str,
    steps: int | None = None,
    reads: bool = True,
) -> LeakTable:
    """One random game of ``table_cls``'s kind through the API, every response checked, for
    ``steps`` steps (the kind's own number by default) or to its end.  Returns the table, whose
    ``stats`` say what was covered.

    ``reads=False`` drops the per-step reads (state, events, the anonymous spectator, the
    kind's ``check_reads``): the moves, the legal actions and every answer to them are still
    checked.  A caller that checks something else along a game (the notifications) uses it
    and leaves the reads' guarantee to ``tests/games/test_leak.py``, which plays with them.

    A step that stored no new version (a refused move, a sweep or a fired deadline that did
    nothing) cannot have changed what the event log says, nor the state but for the instant it
    is read at: the receivers' full reads are skipped then and one receiver in turn (a seat,
    the signed-in or the anonymous spectator) reads the state.  So every version is still read
    by every receiver, and every refusal's answer is still checked."""
    rng = random.Random(seed)
    t = table_cls.start(users, rng, seed)
    game = t.game
    seats = [(i, client_for(u)) for i, u in enumerate(t.players)]
    clients: list[tuple[int | None, APIClient]] = [*seats, (None, client_for(spectator))]
    anonymous = APIClient()  # no session, no token: watching needs no account
    base = f"/api/v1/games/{game.pk}/"
    seen: dict[int | None, int] = defaultdict(int)
    read_version: int | None = None  # the version every receiver last read
    # The seats' legal actions as last read, and at which (version, clock): the answer is the
    # game's at that version and instant, so it cannot differ while neither moved.
    listed: tuple[int, int] | None = None
    listing: list[tuple[int, APIClient, Any]] = []
    full_reads = 0
    for step in range(steps or t.steps):
        # ``t.refresh()`` read the game at the end of the last step, and reads write nothing.
        if game.status != Game.Status.PLAYING:
            break
        fake_clock.advance(rng.choice(t.jumps if t.clocked else t.calm_jumps))
        refreshed = False  # the tracker took in the step's move (nothing happens after it)
        acted: tuple[int, int, Any] | None = None  # (seat, version, state) of a 200 answer
        roll = rng.random()
        if roll < t.p_sweep:
            services.game_sweep()
            t.stats["sweeps"] += 1
        elif roll < t.p_sweep + t.p_fire and game.deadlines:
            services.game_fire_deadline(game_id=game.pk, key=rng.choice(game.deadlines)["key"])
            t.stats["fires"] += 1
        else:
            move = None
            if rng.random() < t.p_bad:
                seat, c = rng.choice(seats)
                move = (seat, c, t.bad_move(rng, seat))
            else:
                t.before_options(fake_clock.ms)
                if listed != (game.version, fake_clock.ms):
                    listing = []
                    for seat, c in seats:
                        body = c.get(base + "actions/").json()
                        t.check_actions(body, seat, fake_clock.ms)
                        listing += [(seat, c, a) for a in body["actions"]]
                    listed = (game.version, fake_clock.ms)
                else:
                    t.stats["actions listed before"] += 1
                options = listing
                if options:
                    move = rng.choice(options)
            if move is not None:
                seat, c, action = move
                r = c.post(base + "actions/", {"action": action}, format="json")
                assert r.status_code < 500, r.content
                t.refresh()
                refreshed = True
                if r.status_code == 200:
                    t.stats["acts"] += 1
                    body = r.json()
                    t.check_act(body, seat)
                    acted = (seat, body["version"], body["state"])
                else:
                    t.stats["refusals"] += 1
                    t.check_refusal(r.json(), seat, action)
        if not refreshed:  # a sweep, a fired deadline, or no move at all
            t.refresh()
        if reads:
            version = game.version  # as ``t.refresh()`` just read it
            if version == read_version:
                # Nothing new to read: the state at this instant, by one receiver in turn.
                readers = [*clients, (ANONYMOUS, anonymous)]
                who, c = readers[t.stats["unchanged steps"] % len(readers)]
                t.check_state(c.get(base + "state/").json(), seat_of(who))
                t.stats["unchanged steps"] += 1
                t.stats["payloads"] += 1
            else:
                read_version = version
                answers: dict[str, Any] = {}
                full = full_reads % FULL == 0
                for seat, c in clients:
                    if acted is not None and acted[:2] == (seat, version):
                        # The mover's move answer is its state at this very version, made by
                        # the state endpoint's own function (``game_payload_for_seat``): no
                        # second request, the same check.
                        state = acted[2]
                        t.stats["states from the move"] += 1
                    else:
                        state = c.get(base + "state/").json()
                    t.check_state(state, seat)
                    since = 0 if full else seen[seat]
                    body = c.get(base + "events/", {"since": since}).json()
                    events = body["events"]
                    t.check_events(events, seat, "events")
                    if events:
                        seen[seat] = events[-1]["seq"]
                    t.stats["payloads"] += 2
                    if seat is None:
                        answers = {"state/": state, "events/": body}
                        spectator_since = since
                check_anonymous(
                    t,
                    base,
                    anonymous,
                    clients[-1][1],
                    since=spectator_since,
                    answers=answers,
                    lobby=full_reads % LOBBY == 0,
                )
                full_reads += 1
                t.check_reads(step, clients)
        t.after_step(step)
    game.refresh_from_db()
    t.stats["finished"] = game.status == Game.Status.FINISHED
    return t


def check_anonymous(
    t: LeakTable,
    base: str,
    anonymous: APIClient,
    spectator: APIClient,
    since: int,
    answers: dict[str, Any],
    lobby: bool,
) -> None:
    """The anonymous spectator's reads: answered (200) and the same as the signed-in
    spectator's answers -- its state and events (from the same ``since``) those the signed-in
    one got this step, which the tracker checked; with ``lobby`` also the game's detail and
    chat, fetched for both here (neither carries a card: no tracker reads them)."""
    paths: list[tuple[str, dict[str, Any]]] = [("state/", {}), ("events/", {"since": since})]
    if lobby:
        paths += [("", {}), ("chat/", {})]
    for path, params in paths:
        r = anonymous.get(base + path, params)
        assert r.status_code == 200, (path, r.status_code, r.content[:200])
        theirs = answers.get(path)
        if theirs is None:
            theirs = spectator.get(base + path, params).json()
        same_as_spectator(r.json(), theirs, f"anonymous {path}")
        t.stats["anonymous payloads"] += 1
