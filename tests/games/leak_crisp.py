"""Crisp's part of the REST leak harness (tests/games/leak_kit.py): no response carries a card
its receiver may not see at that moment.

Random games at 2-5 seats, with and without the draw clock, with and without pile draws; the
clock jumps include the exact R18 boundaries.  ``Knowledge`` is written here from the unredacted
truth (``Event.data`` and ``Game.state``) -- it never calls the engine's view code.

What a receiver may see (RULES R3-R5, R8, R21, R26; "a look is shown once"):
* in the round it belongs to: every card that has been face up (discarded, swapped out, played
  special, timed-out card, a card taken from the pile), and every card after the reveal;
* at the current version only: what that seat was privately shown by this version's events
  (its look, its draw, its Jack look, a Queen receipt in a side place);
* while it holds it: its drawn card.
"""

from __future__ import annotations

import random
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any, ClassVar

from games import services
from games.engines.crisp import GameState
from games.models import Event, Game

from .leak_kit import LeakTable, cards_in

FACE_UP = ("discard", "king", "king_discarded", "jack", "queen", "timeout")


class Knowledge:
    """Who may see which card right now, from the unredacted truth (updated incrementally)."""

    def __init__(self, game: Game) -> None:
        self.game = game
        self.public: dict[int | None, set[str]] = defaultdict(set)
        self.round_of_seq: dict[int, int | None] = {}
        self.last_seq = 0
        self.refresh()

    def refresh(self) -> Knowledge:
        game = self.game
        game.refresh_from_db()
        self.version = game.version
        self.fresh: dict[int, set[str]] = defaultdict(set)
        new = Event.objects.filter(game=game, seq__gt=self.last_seq).select_related("round")
        for e in new.order_by("seq"):
            self.last_seq = e.seq
            r = e.round.number if e.round is not None else None
            self.round_of_seq[e.seq] = r
            if e.origin != "engine":
                continue
            d, t = e.data, e.type
            if t in FACE_UP:
                self.public[r].add(d["card"])
            elif t == "swap":
                self.public[r].add(d["card_out"])
            elif t == "draw" and d["source"] == "pile":
                self.public[r].add(d["card"])
            elif t == "reveal":
                self.public[r] |= {c for hand in d["hands"] for c in hand}
        for e in Event.objects.filter(game=game, version=self.version, origin="engine"):
            d, t = e.data, e.type
            if t == "draw":
                self.fresh[d["seat"]].add(d["card"])
            elif t == "look":
                self.fresh[d["seat"]] |= {d["left"], d["right"]}
            elif t == "jack":
                self.fresh[d["seat"]].add(d["centre"])
            elif t == "queen":
                if d["place"] != "centre":
                    self.fresh[d["seat"]].add(d["received"])
                if d["target_place"] != "centre":
                    self.fresh[d["target_seat"]].add(d["given"])
        self.round = None
        if game.state is not None:
            rnd = game.state["round"]
            self.round = rnd["number"]
            self.public[self.round] |= set(rnd["pile"])
            turn = rnd["turn"]
            if turn is not None and turn["held"] is not None:
                if turn["held_from"] == "pile":
                    self.public[self.round].add(turn["held"])
                else:
                    self.fresh[turn["seat"]].add(turn["held"])
        return self

    def allowed(self, seat: int | None, round_number: int | None) -> set[str]:
        out = set(self.public.get(round_number, set()))
        if seat is not None and round_number == self.round:
            out |= self.fresh.get(seat, set())
        return out

    def check_state(self, body: Any, seat: int | None, where: str) -> None:
        leaked = cards_in(body) - self.allowed(seat, self.round)
        assert not leaked, f"{where}: seat {seat} was sent {leaked}"

    def check_events(self, events: list[dict], seat: int | None, where: str) -> None:
        for e in events:
            r = self.round_of_seq[e["seq"]]
            leaked = cards_in(e) - self.allowed(seat, r)
            assert not leaked, f"{where}: seat {seat} was sent {leaked} in {e}"


class CrispTable(LeakTable):
    kind = "crisp"
    jumps: ClassVar[list[int]] = [0, 1, 500, 1999, 2000, 2001, 2999, 3000, 3001, 5000, 8000,
                                  30_000, 30_001]  # fmt: skip
    p_sweep = 0.12
    p_fire = 0.08
    steps = 60

    def __init__(self, game: Game, players: list[Any], clocked: bool) -> None:
        super().__init__(game, players, clocked)
        self.know = Knowledge(game)

    @property
    def calm_jumps(self) -> list[int]:  # type: ignore[override]
        return self.jumps  # the memorise period and turn starts are timed even without a clock

    @classmethod
    def start(cls, users: list[Any], rng: random.Random, seed: str) -> CrispTable:
        players = users[: rng.randint(2, 5)]
        draw_seconds = rng.choice([None, 30])
        settings = {"target_score": 50, "draw_seconds": draw_seconds,
                    "pile_draw": rng.random() < 0.6}  # fmt: skip
        game = services.game_create(host=players[0], settings=settings)
        for p in players[1:]:
            services.game_join(game=game, user=p)
        services.game_start(game=game, user=players[0], seed=f"leak-{seed}")
        game.refresh_from_db()
        return cls(game, players, clocked=draw_seconds is not None)

    def refresh(self) -> None:
        self.know.refresh()

    def bad_move(self, rng: random.Random, seat: int) -> dict[str, Any]:
        return rng.choice([
            {"type": "call"}, {"type": "discard"}, {"type": "king"},
            {"type": "draw", "source": "pile"}, {"type": "swap", "place": "centre"},
            {"type": "nonsense"},
        ])  # fmt: skip

    def check_actions(self, body: Any, seat: int, now: int) -> None:
        self.know.check_state(body, seat, "legal actions")

    def check_act(self, body: dict[str, Any], seat: int) -> None:
        self.know.check_state(body["state"], seat, "act state")
        self.know.check_events(body["events"], seat, "act events")

    def check_refusal(self, body: Any, seat: int, action: dict[str, Any]) -> None:
        self.know.check_state(body, seat, "act refusal")

    def check_state(self, body: Any, seat: int | None) -> None:
        self.know.check_state(body, seat, "state")

    def check_events(self, events: list[dict[str, Any]], seat: int | None, where: str) -> None:
        self.know.check_events(events, seat, where)

    def coverage(self) -> None:
        assert self.stats["payloads"] > 50, dict(self.stats)


#: The plays that end a turn (the held card, if any, is gone).
PLAYS = {"swap", "discard", "jack", "queen", "king", "timeout"}


@dataclass
class FrameTracker:
    """What each seat may know, version by version, from the unredacted record: the live leak
    test's tracker (tests/live/test_leaks.py). Unlike ``Knowledge`` (what may be seen *now*,
    for REST answers) it keeps every version's allowance, because a socket's frame -- a
    catch-up after a reconnect, a resync of an old version -- is judged at its own version:

    * its ``state`` of version v: the cards face up at v (the pile, a card held from the pile,
      Kings in play, every hand after the reveal) and the card the receiver holds itself;
    * an event of version e: the cards face up at some point of the round up to e, and what
      that very version showed the receiver privately (its draw, its look, its Jack, a Queen's
      card landing in its left or right) -- in no other version: a look is shown once.
    """

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
