"""Cribbage's part of the REST leak harness (tests/games/leak_kit.py): no response carries a
card its receiver may not see at that moment (C30).

Random games to 31, 61 or 121, with and without the move clock (jumps across its boundary).
Every response is checked against ``Knowledge``: a tracker written here from the unredacted
truth (``Event.data`` and ``Game.state``). It never calls the engine's view code.

What a receiver may see (rules/cribbage C30), as the tracker decides it:

* the cut for the deal: public (a);
* your six cards are yours (b); your two crib cards stay yours (c) -- the other's hand and both
  sets of crib discards are hidden, and a lay-away tells others only *that* it happened;
* the starter is public once cut (d); the deck -- the stock, its order -- never, to anyone;
* a played card is public from its play (e);
* at the show each hand is public with the starter; the crib when it is counted (f);
* at the end of a hand (``hand_over``) and of the game, every card of that hand but the stock
  (g); a spectator sees exactly the public part (h).

Each event is judged by what *that event* may say (a lay-away names its cards to its own seat
only, ever; a deal shows a seat its own six cards only), so a payload that attributes crib cards
to the other seat fails even after the crib has been shown.
"""

from __future__ import annotations

import random
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any, ClassVar

from games import services
from games.engines import cribbage
from games.models import Event, Game

from .leak_kit import LeakTable, cards_in


@dataclass
class Row:
    """One stored event, unredacted."""

    seq: int
    version: int
    type: str
    data: dict[str, Any]
    engine: bool


@dataclass
class Knowledge:
    """Who may see which card, from the unredacted record of one cribbage game.

    ``absorb`` takes new ``Event`` rows (in ``seq`` order); ``event_allowed`` says what one
    event may show a receiver; ``state_allowed`` what a state of a given version may show.
    """

    rows: list[Row] = field(default_factory=list)
    last_seq: int = 0
    #: per event seq: (public cards, {seat: private cards})
    by_event: dict[int, tuple[set[str], dict[int, set[str]]]] = field(default_factory=dict)
    dealt: dict[int, list[list[str]]] = field(default_factory=dict)
    discards: dict[int, dict[int, list[str]]] = field(default_factory=lambda: defaultdict(dict))
    starter: dict[int, str] = field(default_factory=dict)
    played: dict[int, list[str]] = field(default_factory=lambda: defaultdict(list))
    cuts: set[str] = field(default_factory=set)
    allowed_cache: dict[tuple[int | None, int | None, int], set[str]] = field(default_factory=dict)

    # --- the truth --------------------------------------------------------------------------
    def kept(self, rnd: int, seat: int) -> set[str]:
        return set(self.dealt[rnd][seat]) - set(self.discards[rnd].get(seat, []))

    def crib(self, rnd: int) -> set[str]:
        return {c for cards in self.discards[rnd].values() for c in cards}

    def whole_hand(self, rnd: int) -> set[str]:
        """Every card of hand ``rnd`` but the stock: both hands, the crib, the starter."""
        out = set(self.dealt[rnd][0]) | set(self.dealt[rnd][1])
        if rnd in self.starter:
            out.add(self.starter[rnd])
        return out

    def absorb(self, events: Any) -> Knowledge:
        for e in events:
            if e.seq <= self.last_seq:
                continue
            self.last_seq = e.seq
            row = Row(e.seq, e.version, e.type, e.data, e.origin == Event.Origin.ENGINE)
            self.rows.append(row)
            public: set[str] = set()
            private: dict[int, set[str]] = {}
            d, t = row.data, row.type
            rnd = d.get("round")
            if not row.engine:
                pass  # lobby events never carry a card
            elif t == "cut_for_deal":
                self.cuts |= {c for pair in d["cuts"] for c in pair}
                public = set(self.cuts)
            elif t == "round_dealt":
                self.dealt[rnd] = [list(h) for h in d["hands"]]
                private = {s: set(h) for s, h in enumerate(d["hands"])}
            elif t == "laid_away":
                self.discards[rnd][d["seat"]] = list(d["cards"])
                private = {d["seat"]: set(d["cards"])}
            elif t in ("starter_cut", "his_heels"):
                self.starter[rnd] = d["card"]
                public = {d["card"]}
            elif t == "play":
                self.played[rnd].append(d["card"])
                public = set(self.played[rnd])
            elif t == "show":
                cards = self.crib(rnd) if d["what"] == "crib" else self.kept(rnd, d["seat"])
                public = cards | {self.starter[rnd]}
            elif t == "hand_over":
                public = self.whole_hand(rnd)
            elif t not in ("turn", "go", "last_card", "count_over", "game_over"):
                raise AssertionError(f"the tracker has no rule for event type {t!r}")
            self.by_event[row.seq] = (public, private)
        return self

    def refresh(self, game: Game) -> Knowledge:
        return self.absorb(Event.objects.filter(game=game, seq__gt=self.last_seq).order_by("seq"))

    # --- what a receiver may see -----------------------------------------------------------
    def event_allowed(self, seq: int, seat: int | None) -> set[str]:
        public, private = self.by_event[seq]
        return public | (private.get(seat, set()) if seat is not None else set())

    def state_allowed(self, seat: int | None, version: int | None = None) -> set[str]:
        """What a state of ``version`` (default: the latest) may show ``seat`` (worked out once
        per record: the harness asks it for every receiver after every step)."""
        key = (seat, version, self.last_seq)
        if key not in self.allowed_cache:
            self.allowed_cache[key] = self._state_allowed(seat, version)
        return self.allowed_cache[key]

    def _state_allowed(self, seat: int | None, version: int | None) -> set[str]:
        rows = [r for r in self.rows if r.engine and (version is None or r.version <= version)]
        rnd = max((r.data["round"] for r in rows if r.type == "round_dealt"), default=None)
        allowed = set(self.cuts)
        if rnd is None:
            return allowed
        finished = any(r.type == "game_over" for r in rows)
        mine = rnd in self.dealt and seat is not None
        if mine:
            allowed |= set(self.dealt[rnd][seat])
        for r in rows:
            if r.data.get("round") != rnd:
                continue
            if r.type in ("starter_cut", "play"):
                allowed.add(r.data["card"])
            if r.type == "show":
                allowed |= self.event_allowed(r.seq, None)
        if finished:
            allowed |= self.whole_hand(rnd)
        if rnd - 1 in self.dealt:
            allowed |= self.whole_hand(rnd - 1)  # the previous hand's show (last_hand)
        return allowed

    def check_state(
        self,
        body: Any,
        seat: int | None,
        where: str,
        version: int | None = None,
        extra: set[str] | frozenset[str] = frozenset(),
    ) -> None:
        leaked = cards_in(body) - self.state_allowed(seat, version) - extra
        assert not leaked, f"{where}: seat {seat} was sent {sorted(leaked)}"

    def check_events(self, events: list[dict[str, Any]], seat: int | None, where: str) -> None:
        for e in events:
            leaked = cards_in(e) - self.event_allowed(e["seq"], seat)
            assert not leaked, f"{where}: seat {seat} was sent {sorted(leaked)} in {e}"


def due_hands(game: Game, now: int) -> list[set[str]]:
    """Each seat's own unplayed cards once every deadline due at ``now`` has run (the truth:
    the engine's rules on the stored snapshot ``game`` holds, not its view)."""
    state, _ = cribbage.advance(cribbage.GameState.from_json(game.state), now)
    return [set(hand) for hand in state.round.hands]


class CribbageTable(LeakTable):
    kind = "cribbage"
    jumps: ClassVar[list[int]] = [0, 1, 500, 5000, 29_999, 30_000, 30_001, 31_000, 61_000]
    steps = 90

    def __init__(self, game: Game, players: list[Any], clocked: bool) -> None:
        super().__init__(game, players, clocked)
        self.know = Knowledge().refresh(game)
        self.ahead: list[set[str]] = [set(), set()]

    @classmethod
    def start(cls, users: list[Any], rng: random.Random, seed: str) -> CribbageTable:
        players = users[:2]
        move = rng.choice([None, 30])
        game = services.game_create(
            host=players[0], kind="cribbage", settings={"move_seconds": move}
        )
        services.game_join(game=game, user=players[1])
        services.game_start(
            game=game,
            user=players[0],
            seed=f"crib-leak-{seed}",
            timers={"target_score": rng.choice([31, 61, 121])},
        )
        game.refresh_from_db()
        return cls(game, players, clocked=move is not None)

    def refresh(self) -> None:
        self.game.refresh_from_db()
        self.know.refresh(self.game)

    def before_options(self, now: int) -> None:
        # Legal actions are computed at the server's now: a deadline already due is taken into
        # account before it is stored (a timeout may have dealt anew), so a seat may see its
        # own hand as it will be once the due deadlines run. Worked out once for every seat:
        # the seats' reads that follow store nothing.
        self.ahead = due_hands(self.game, now)

    def bad_move(self, rng: random.Random, seat: int) -> dict[str, Any]:
        # A move that cannot be: a card the mover does not hold, or out of turn.
        return {"type": "play", "card": rng.choice(["AS", "KH", "5D", "TC"])}

    def check_actions(self, body: Any, seat: int, now: int) -> None:
        self.know.check_state(body, seat, "legal actions", extra=self.ahead[seat])

    def check_act(self, body: dict[str, Any], seat: int) -> None:
        self.know.check_state(body["state"], seat, "act state", body["version"])
        self.know.check_events(body["events"], seat, "act events")

    def check_refusal(self, body: Any, seat: int, action: dict[str, Any]) -> None:
        self.know.check_state(body, seat, "act refusal")

    def check_state(self, body: Any, seat: int | None) -> None:
        self.know.check_state(body, seat, "state")

    def check_events(self, events: list[dict[str, Any]], seat: int | None, where: str) -> None:
        self.know.check_events(events, seat, where)

    @property
    def types(self) -> set[str]:
        return {r.type for r in self.know.rows}

    def coverage(self) -> None:
        assert self.stats["payloads"] > 60, dict(self.stats)
        # Every kind of moment was reached: the lay-away, the play, counts ending.
        assert {"laid_away", "starter_cut", "play", "count_over"} <= self.types
