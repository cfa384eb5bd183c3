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
from typing import Any, ClassVar

from games import services
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
