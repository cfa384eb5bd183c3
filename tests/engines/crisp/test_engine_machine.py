"""Hypothesis state machines: random legal play, every setting, 2-8 seats, random timing.

Invariants checked after every step (rules/crisp.md numbers in brackets):

* the 52 cards are conserved: deck + pile + hands + held card + Kings in play [1, 5];
* three cards per seat [2]; exactly one thing awaited;
* the state round-trips through JSON exactly; replaying the log reproduces it;
* **no view and no event form carries a card value its receiver may not see** [R4, R5, R8, R21]
  -- judged by ``Knowledge``, a tracker written here from the rules, which follows the cards
  itself (deal R1, draws, swaps, Queens, Kings, turnovers R7, timeouts) and never calls the
  engine's view code to decide what is visible;
* every illegal action is refused with a known code and changes nothing.
"""

from __future__ import annotations

import json
import random
from typing import Any

import pytest
from engine_support import cards_in, cards_in_json
from hypothesis import HealthCheck, settings
from hypothesis import event as hyp_event
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    precondition,
    rule,
)

from games.engines.crisp import (
    FULL_DECK,
    PLACES,
    Action,
    Event,
    GameState,
    IllegalAction,
    Settings,
    advance,
    apply,
    event_view,
    fire,
    legal_actions,
    new_game,
    pending_deadlines,
    view,
)
from games.engines.crisp import errors as codes

KNOWN_CODES = {v for k, v in vars(codes).items() if k.isupper() and isinstance(v, str)}
PLACE = {p: i for i, p in enumerate(PLACES)}


class Knowledge:
    """An independent model of where every card is and who may see it.

    It is driven by the full (admin) events, but it decides visibility from the rules alone:
    the pile, a pile card being held, Kings lying face up in play and, after the reveal, every
    card are public; a draw from the deck is seen by its drawer; a look (opening, Jack, Queen
    receipt into left/right) by its looker, in that event only.  It also follows the cards
    itself, so a wrong card in an event or the state is caught too."""

    def __init__(self, seats: int) -> None:
        self.n = seats
        self.deck: list[str] = []
        self.pile: list[str] = []
        self.hands: list[list[str]] = []
        self.held: tuple[int, str, str] | None = None
        self.kings: list[str] = []
        self.revealed = False

    def public(self) -> set[str]:
        if self.revealed:
            return set(FULL_DECK)
        out = set(self.pile) | set(self.kings)
        if self.held is not None and self.held[2] == "pile":
            out.add(self.held[1])
        return out

    def view_allowed(self, viewer: int | None) -> set[str]:
        out = self.public()
        if self.held is not None and self.held[0] == viewer:
            out.add(self.held[1])
        return out

    def event(self, e: Event) -> dict[int | None, set[str]]:
        """Follow one event; return the private grants it makes, per viewer, and check that
        the event names the cards the model says it should."""
        d = e.data
        grants: dict[int | None, set[str]] = {}
        typ = e.type
        seat = d.get("seat")
        if typ == "round_dealt":
            order = d["deck"]
            self.hands = [["", "", ""] for _ in range(self.n)]
            for i in range(3 * self.n):  # R1
                self.hands[(d["dealer"] + 1 + i) % self.n][i // self.n] = order[i]
            self.deck = list(order[3 * self.n :])
            self.pile, self.held, self.kings, self.revealed = [], None, [], False
        elif typ == "pile_turned":
            assert self.deck == []
            self.deck, self.pile = self.pile, []  # R7: the first discarded is the new top
        elif typ == "draw":
            assert self.held is None
            card = self.deck.pop(0) if d["source"] == "deck" else self.pile.pop()
            assert card == d["card"]
            self.held = (seat, card, d["source"])
            grants[seat] = {card}
        elif typ == "look":
            left, right = self.hands[seat][0], self.hands[seat][2]  # R17: lying there now
            assert (d["left"], d["right"]) == (left, right)
            grants[seat] = {left, right}
        elif typ in ("swap", "discard", "jack", "queen", "king"):
            assert self.held is not None and self.held[0] == seat
            card = self.held[1]
            self.held = None
            if typ == "swap":
                i = PLACE[d["place"]]
                out = self.hands[seat][i]
                assert d["card_out"] == out and d["card_in"] == card
                self.hands[seat][i] = card
                self.pile.append(out)
            elif typ == "discard":
                self.pile.append(card)
            elif typ == "jack":
                assert card[0] == "J"
                grants[seat] = {self.hands[seat][1]}
                self.pile.append(card)
            elif typ == "queen":
                assert card[0] == "Q" and d["target_seat"] != seat
                i, ts, j = PLACE[d["place"]], d["target_seat"], PLACE[d["target_place"]]
                given, received = self.hands[seat][i], self.hands[ts][j]
                self.hands[seat][i], self.hands[ts][j] = received, given
                if i != 1:
                    grants.setdefault(seat, set()).add(received)
                if j != 1:
                    grants.setdefault(ts, set()).add(given)
                self.pile.append(card)
            else:
                assert card[0] == "K"
                self.kings.append(card)
        elif typ == "king_discarded":
            card = self.kings.pop()
            assert card == d["card"]
            self.pile.append(card)
        elif typ == "timeout":
            if d["stage"] == "before_draw":
                assert self.held is None
                card = self.deck.pop(0)
            else:
                assert self.held is not None
                card = self.held[1]
                self.held = None
            assert card == d["card"]
            self.pile.append(card)
        elif typ == "reveal":
            assert d["hands"] == self.hands
            self.revealed = True
        else:
            assert typ in {"draw_ready", "turn_ended", "window_closed", "call", "game_over"}
        return grants


TIME_STEPS = st.one_of(
    st.sampled_from([0, 0, 0, 1, 999, 1000, 1999, 2000, 2001, 2999, 3000, 3001]),
    st.integers(0, 70_000),
)


def bounded(dt: int, cfg: Settings) -> int:
    """Keep a step to a couple of draw clocks, so that with a 1 s clock a long step is a few
    timeouts, not seventy (they are tested, but should not crowd out play)."""
    if cfg.draw_seconds is not None:
        return min(dt, 2 * cfg.draw_seconds * 1000 + 5000)
    return dt


def settings_strategy() -> st.SearchStrategy[Settings]:
    return st.builds(
        Settings,
        target_score=st.sampled_from([1, 20, 40, 50, 100]),
        draw_seconds=st.sampled_from([None, 1, 2, 30]),
        pile_draw=st.booleans(),
        window_ms=st.sampled_from([3000]),
        start_delay_ms=st.sampled_from([2000, 0]),
        memorise_ms=st.sampled_from([5000, 0]),
        between_rounds_ms=st.sampled_from([8000, 0]),
    )


def universe(seats: int) -> list[Action]:
    """Every well-formed action, for the illegal-action rule."""
    out = [Action.look(), Action.call(), Action.draw("deck"), Action.draw("pile")]
    out += [Action.swap(p) for p in PLACES]
    out += [Action.discard(), Action.jack(), Action.king()]
    out += [Action.queen(p, s, q) for p in PLACES for s in range(-1, seats + 1) for q in PLACES]
    return out


class Checked:
    """A game under observation: every change goes through here and is checked.

    Shared by the Hypothesis machine and the plain random-games test."""

    def __init__(self, seats, cfg, seed, start, decks) -> None:
        self.seats, self.cfg = seats, cfg
        self.seed = "SEED\x1f" + seed  # a marker no view or event form may ever contain
        self.decks, self.start = decks, start
        self.state, ev = new_game(seats=seats, settings=cfg, seed=self.seed, now=start, decks=decks)
        self.now = start
        self.log: list[tuple[str, Any, Any, int]] = []
        self.know = Knowledge(seats)
        self.meaning: dict[str, tuple[str, int]] = {}
        self.seen_keys: set[str] = set()
        self.universe = universe(seats)
        self.kinds: set[str] = set()
        self.steps = 0
        self._events(ev)

    # -- changes ----------------------------------------------------------------------------
    def options(self, now: int) -> list[tuple[int, list[Action]]]:
        out = []
        for s in range(self.seats):
            la = legal_actions(self.state, s, now)
            if la:
                out.append((s, la))
        return out

    def apply(self, seat: int, action: Action, now: int) -> None:
        new, ev = apply(self.state, seat, action, now)
        self.log.append(("apply", seat, action, now))
        self.state, self.now = new, now
        self._events(ev)

    def fire(self, key: str, at: int, now: int) -> None:
        new, ev = fire(self.state, key, now)
        if at > now:
            assert new is self.state and ev == []
            return
        self.log.append(("fire", None, key, now))
        self.state, self.now = new, max(self.now, now)
        self._events(ev)
        assert key not in {x.key for x in pending_deadlines(new)}

    def fire_stale(self, key: str) -> None:
        new, ev = fire(self.state, key, self.now + 10**7)
        assert new is self.state and ev == []

    def advance(self, now: int) -> None:
        new, ev = advance(self.state, now)
        if ev:
            self.log.append(("advance", None, None, now))
        else:
            assert new is self.state
        self.state, self.now = new, now
        self._events(ev)

    def try_illegal(self, seat: int, action: Action, now: int) -> None:
        legal = legal_actions(self.state, seat, now) if 0 <= seat < self.seats else []
        if action in legal:
            return
        before = self.state.to_json()
        try:
            apply(self.state, seat, action, now)
        except IllegalAction as e:
            assert e.code in KNOWN_CODES
            if not self.know.revealed:
                assert not cards_in(e.reason) - self.know.view_allowed(seat)
        else:
            raise AssertionError(f"{action} by {seat} at {now} was accepted but not listed")
        assert self.state.to_json() == before

    def _events(self, events: list[Event]) -> None:
        viewers: list[int | None] = [None, *range(self.seats)]
        for e in events:
            self.kinds.add(e.type)
            assert json.loads(json.dumps(e.to_json())) == e.to_json()
            grants = self.know.event(e)
            public = self.know.public()
            for v in viewers:
                form = event_view(e, v)
                assert form["type"] == e.type
                raw = json.dumps(form)
                shown = cards_in_json(raw)
                allowed = public | grants.get(v, set())
                assert shown <= allowed, (e.type, v, shown - allowed)
                # ... and the seat entitled to a look does get it.
                assert grants.get(v, set()) <= shown, (e.type, v)
                assert self.seed not in raw
        for d in pending_deadlines(self.state):
            assert self.meaning.setdefault(d.key, (d.kind, d.at)) == (d.kind, d.at)
            self.seen_keys.add(d.key)
        self.steps += 1
        self.check()

    # -- invariants ---------------------------------------------------------------------------
    def check(self) -> None:
        self.cards_conserved_and_three_per_seat()
        self.model_agrees_with_state()
        self.exactly_one_thing_awaited()
        self.json_round_trip()
        self.views_show_only_what_each_viewer_may_see()

    def cards_conserved_and_three_per_seat(self) -> None:
        r = self.state.round
        t = r.turn
        cards = r.deck + r.pile + [c for h in r.hands for c in h]
        if t is not None:
            cards += [k[0] for k in t.kings] + ([t.held] if t.held else [])
        assert sorted(cards) == sorted(FULL_DECK)
        assert len(r.hands) == self.seats and all(len(h) == 3 for h in r.hands)

    def model_agrees_with_state(self) -> None:
        r, k = self.state.round, self.know
        assert (r.deck, r.pile, r.hands) == (k.deck, k.pile, k.hands)
        t = r.turn
        held = (t.seat, t.held, t.held_from) if t is not None and t.held else None
        assert held == k.held
        assert ([x[0] for x in t.kings] if t is not None else []) == k.kings

    def exactly_one_thing_awaited(self) -> None:
        st_, r = self.state, self.state.round
        t = r.turn
        ds = pending_deadlines(st_)
        if st_.status == "finished":
            assert t is None and ds == [] and st_.winners
            low = min(st_.scores)
            assert st_.winners == [i for i, v in enumerate(st_.scores) if v == low]
            assert max(st_.scores) >= self.cfg.target_score
            return
        assert st_.winners == []
        if r.reveal is not None:
            assert t is None and [d.kind for d in ds] == ["next_round"]
            return
        assert t is not None and t.phase in ("start", "draw", "play")
        assert (t.phase == "play") == (t.held is not None)
        starts = [d for d in ds if d.kind in ("memorise_over", "may_start")]
        assert len(starts) == (1 if t.phase == "start" else 0)
        timeouts = [d for d in ds if d.kind == "draw_timeout"]
        assert len(timeouts) == (1 if t.phase != "start" and self.cfg.draw_seconds else 0)
        assert ds == sorted(ds, key=lambda d: d.at)

    def json_round_trip(self) -> None:
        raw = json.dumps(self.state.to_json())
        back = GameState.from_json(json.loads(raw))
        assert back == self.state and json.dumps(back.to_json()) == raw

    def views_show_only_what_each_viewer_may_see(self) -> None:
        for v in [None, *range(self.seats)]:
            vw = view(self.state, v, self.now)
            raw = json.dumps(vw)
            shown = cards_in_json(raw)
            allowed = self.know.view_allowed(v)
            assert shown <= allowed, (v, shown - allowed)
            assert self.seed not in raw
            assert vw["pile"] == self.know.pile and vw["deck_size"] == len(self.know.deck)
            if self.know.held is not None and self.know.held[0] == v:
                assert vw["held"]["card"] == self.know.held[1]
            if not self.know.revealed:
                assert all(h == [None, None, None] for h in vw["hands"])
            if v is not None:  # the cheap summary agrees with the full legality check
                kinds = {
                    f"draw_{a.source}" if a.type == "draw" else a.type
                    for a in legal_actions(self.state, v, self.now)
                }
                assert set(vw["you"]["can"]) == kinds, (vw["you"]["can"], kinds)

    def check_replay(self) -> None:
        st_, _ = new_game(
            seats=self.seats, settings=self.cfg, seed=self.seed, now=self.start, decks=self.decks
        )
        for kind, seat, x, now in self.log:
            if kind == "apply":
                st_, _ = apply(st_, seat, x, now)
            elif kind == "fire":
                st_, _ = fire(st_, x, now)
            else:
                st_, _ = advance(st_, now)
        assert st_ == self.state, "replay differs"


def random_step(g: Checked, rng: random.Random, call_rate: float) -> None:
    """One step of plain random play: mostly a legal action after a random pause, sometimes
    a timer, now and then an illegal attempt."""
    now = g.now + bounded(rng.choice([0, 0, 1, 1000, 2000, 3001, rng.randrange(40_000)]), g.cfg)
    options = g.options(now)
    ds = pending_deadlines(g.state)
    if ds and (not options or rng.random() < 0.1):
        d = ds[0]
        g.fire(d.key, d.at, max(g.now, d.at + rng.choice([0, 0, 1, 500])))
        return
    if not options:
        return
    t = g.state.round.turn
    mover = [o for o in options if t is not None and o[0] == t.seat]
    seat, la = mover[0] if mover and rng.random() < 0.7 else rng.choice(options)
    calls = [a for a in la if a.type == "call"]
    if calls and rng.random() < call_rate:
        g.apply(seat, calls[0], now)
        return
    la = [a for a in la if a.type != "call"]
    if not la:
        return
    kinds = sorted({a.type for a in la})
    special = [k for k in kinds if k in ("jack", "queen")]
    kind = special[0] if special and rng.random() < 0.7 else rng.choice(kinds)
    g.apply(seat, rng.choice([a for a in la if a.type == kind]), now)
    if rng.random() < 0.05:
        g.try_illegal(rng.randrange(-1, g.seats + 1), rng.choice(g.universe), g.now)


class CrispMachine(RuleBasedStateMachine):
    @initialize(
        seats=st.integers(2, 8),
        cfg=settings_strategy(),
        seed=st.text(alphabet="abcxyz-019", min_size=1, max_size=6),
        start=st.integers(0, 2**41),
        decks=st.none() | st.lists(st.permutations(FULL_DECK), min_size=1, max_size=2),
        call_level=st.integers(0, 9),
        warmup=st.integers(0, 150),
        rng_seed=st.integers(0, 2**32),
    )
    def start_game(self, seats, cfg, seed, start, decks, call_level, warmup, rng_seed):
        """A new game, then (to reach deep states cheaply) ``warmup`` steps of plain random
        play, every one checked like the rules' steps; the rules then take over."""
        self.g = Checked(seats, cfg, seed, start, decks)
        self.call_level = call_level
        rng = random.Random(rng_seed)
        for _ in range(warmup):
            if self.g.state.status != "playing":
                break
            random_step(self.g, rng, call_level / 100)
        self.actions = 0
        self.rules = 0

    @precondition(lambda self: self.g.state.status == "playing")
    @rule(data=st.data(), burst=st.integers(1, 50))
    def act(self, data, burst):
        """A few actions in a row, each after a random pause."""
        g = self.g
        self.rules += 1
        for _ in range(burst):
            if g.state.status != "playing":
                return
            now = g.now + bounded(data.draw(TIME_STEPS, label="dt"), g.cfg)
            options = g.options(now)
            if not options:
                g.advance(now)
                continue
            self.actions += 1
            seat, la = data.draw(st.sampled_from(options), label="seat")
            kinds = sorted({a.type for a in la})
            if (
                "call" in kinds
                and len(kinds) > 1
                and data.draw(st.integers(0, 9)) >= self.call_level
            ):
                kinds.remove("call")
            kind = data.draw(st.sampled_from(kinds), label="kind")
            g.apply(seat, data.draw(st.sampled_from([a for a in la if a.type == kind])), now)

    @rule(data=st.data())
    def time_passes(self, data):
        """A timer fires (on time, late, early or stale) or the sweep runs."""
        g = self.g
        self.rules += 1
        ds = pending_deadlines(g.state)
        how = data.draw(st.sampled_from(["fire", "fire", "sweep", "stale"]), label="how")
        if how == "fire" and ds:
            d = data.draw(st.sampled_from(ds), label="deadline")
            late = data.draw(st.sampled_from([-1, 0, 0, 1, 2500, 100_000]), label="late")
            late = bounded(late, g.cfg) if late > 0 else late
            g.fire(d.key, d.at, max(g.now, d.at + late))
        elif how == "stale" and g.seen_keys - {d.key for d in ds}:
            g.fire_stale(data.draw(st.sampled_from(sorted(g.seen_keys - {d.key for d in ds}))))
        else:
            g.advance(g.now + bounded(data.draw(TIME_STEPS, label="dt"), g.cfg))

    @rule(data=st.data())
    def illegal(self, data):
        g = self.g
        now = g.now + data.draw(st.sampled_from([0, 1, 2000, 3001]))
        seat = data.draw(st.integers(-1, g.seats))
        g.try_illegal(seat, data.draw(st.sampled_from(g.universe)), now)

    def teardown(self):
        if not hasattr(self, "g"):
            return
        g = self.g
        g.check_replay()
        for k in ("call", "queen", "king", "timeout", "pile_turned", "reveal", "game_over"):
            hyp_event(f"{k}: {'yes' if k in g.kinds else 'no'}")
        hyp_event(f"seats: {g.seats}")
        hyp_event(f"actions: {min(self.actions // 10 * 10, 100)}+")
        hyp_event(f"rules run: {min(self.rules // 10 * 10, 100)}+")


CrispMachine.TestCase.settings = settings(
    max_examples=100,
    stateful_step_count=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
TestCrispMachine = CrispMachine.TestCase


GAMES_PER_SEAT_COUNT = 6


@pytest.mark.parametrize("seats", range(2, 9))
def test_random_full_games(seats):
    """Plain random play to the end of the game, many games, every setting, same checks."""
    rng = random.Random(f"full-{seats}")
    finished = 0
    kinds: set[str] = set()
    for game in range(GAMES_PER_SEAT_COUNT):
        cfg = Settings(
            target_score=rng.choice([10, 20, 30]),
            draw_seconds=rng.choice([None, 1, 30]),
            pile_draw=rng.random() < 0.5,
            memorise_ms=rng.choice([0, 5000]),
            between_rounds_ms=rng.choice([0, 8000]),
        )
        g = Checked(seats, cfg, f"g{game}", rng.randrange(2**40), None)
        call_rate = rng.choice([0.02, 0.05, 0.3, 0.9])
        for _ in range(2000):
            if g.state.status != "playing":
                finished += 1
                break
            random_step(g, rng, call_rate)
        g.check_replay()
        kinds |= g.kinds
    assert finished >= GAMES_PER_SEAT_COUNT - 3
    assert kinds >= {
        "look", "draw", "swap", "discard", "jack", "queen", "king", "king_discarded", "call",
        "timeout", "window_closed", "reveal", "game_over",
    }  # fmt: skip


@pytest.mark.parametrize("seats", [2, 5, 8])
def test_random_long_rounds_turn_the_pile_over(seats):
    """Nobody calls: the round goes on through turnovers (R24), every step checked."""
    rng = random.Random(f"long-{seats}")
    cfg = Settings(pile_draw=seats == 5, draw_seconds=30)
    g = Checked(seats, cfg, "long", 0, None)
    while g.state.round.turnovers < 2:
        random_step(g, rng, 0.0)
    assert g.state.round.number == 1 and g.state.round.reveal is None
    g.check_replay()
