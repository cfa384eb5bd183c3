"""No response carries a card its receiver may not see at that moment.

Random games are played through the API (random legal actions from the legal-actions endpoint,
random clock jumps including the exact R18 boundaries, timers fired and swept at random).  After
every step every seated user and a spectator fetch the state and the event log, and every card
code anywhere in any response is checked against a knowledge tracker written here from the
unredacted truth (``Event.data`` and ``Game.state``) -- it never calls the engine's view code.

What a receiver may see (RULES R3-R5, R8, R21, R26; "a look is shown once"):
* in the round it belongs to: every card that has been face up (discarded, swapped out, played
  special, timed-out card, a card taken from the pile), and every card after the reveal;
* at the current version only: what that seat was privately shown by this version's events
  (its look, its draw, its Jack look, a Queen receipt in a side place);
* while it holds it: its drawn card.
"""

from __future__ import annotations

import random
import re
from collections import defaultdict
from typing import Any

import pytest

from games import services
from games.models import Event, Game

from .conftest import client_for

CARD = re.compile(r"^[A2-9TJQK][SHDC]$")
FACE_UP = ("discard", "king", "king_discarded", "jack", "queen", "timeout")


def cards_in(obj: Any) -> set[str]:
    out: set[str] = set()
    stack = [obj]
    while stack:
        x = stack.pop()
        if isinstance(x, dict):
            stack.extend(x.keys())
            stack.extend(x.values())
        elif isinstance(x, list):
            stack.extend(x)
        elif isinstance(x, str) and CARD.match(x):
            out.add(x)
    return out


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


def play_and_check(users, spectator, fake_clock, rng: random.Random, steps: int) -> int:
    n = rng.randint(2, 5)
    players = users[:n]
    draw_seconds = rng.choice([None, 30])
    settings = {"target_score": 50, "draw_seconds": draw_seconds, "pile_draw": rng.random() < 0.6}
    game = services.game_create(host=players[0], settings=settings)
    for p in players[1:]:
        services.game_join(game=game, user=p)
    services.game_start(game=game, user=players[0], seed=f"leak-{rng.random()}")
    clients = [(i, client_for(u)) for i, u in enumerate(players)] + [(None, client_for(spectator))]
    seen = dict.fromkeys(range(-1, n), 0)
    base = f"/api/v1/games/{game.pk}/"
    jumps = [0, 1, 500, 1999, 2000, 2001, 2999, 3000, 3001, 5000, 8000, 30_000, 30_001]
    checked = 0
    know = Knowledge(game)
    for step in range(steps):
        game.refresh_from_db()
        if game.status != "playing":
            break
        fake_clock.advance(rng.choice(jumps))
        roll = rng.random()
        if roll < 0.12:
            services.game_sweep()
        elif roll < 0.2 and game.deadlines:
            services.game_fire_deadline(game_id=game.pk, key=rng.choice(game.deadlines)["key"])
        else:
            options = []
            for seat, c in clients[:-1]:
                body = c.get(base + "actions/").json()
                options += [(seat, c, a) for a in body["actions"]]
            if options:
                seat, c, action = rng.choice(options)
                r = c.post(base + "actions/", {"action": action}, format="json")
                know.refresh()
                if r.status_code == 200:
                    know.check_state(r.json()["state"], seat, "act state")
                    know.check_events(r.json()["events"], seat, "act events")
                else:
                    know.check_state(r.json(), seat, "act refusal")
        know.refresh()
        for seat, c in clients:
            key = -1 if seat is None else seat
            know.check_state(c.get(base + "state/").json(), seat, "state")
            since = 0 if step % 10 == 0 else seen[key]
            events = c.get(base + "events/", {"since": since}).json()["events"]
            know.check_events(events, seat, "events")
            if events:
                seen[key] = events[-1]["seq"]
            checked += 2
    return checked


@pytest.mark.parametrize("seed", range(8))
def test_no_response_leaks_a_card(users, make_user, fake_clock, seed):
    rng = random.Random(seed)
    checked = play_and_check(users, make_user(), fake_clock, rng, steps=60)
    assert checked > 50


def test_tracker_catches_a_leak(users, start_game):
    """The tracker itself is not vacuous: the unredacted log would fail it."""
    g = start_game(users[:2])
    services.game_act(game=g, user=users[0], action={"type": "look"}, expected_version=3)
    know = Knowledge(g)
    raw = [{"seq": e.seq, "data": e.data} for e in Event.objects.filter(game=g, type="look")]
    know.check_events(raw, 0, "raw")  # seat 0 may see its own fresh look
    with pytest.raises(AssertionError):
        know.check_events(raw, 1, "raw")
