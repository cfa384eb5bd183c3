"""R28 (rules/crisp.md): Crisp in turn-based mode -- "Call crisp?" as the last step of a turn,
every move on ``turn_seconds``, no crisp window, no memorise period, the opening look open
until the seat's own first action.

Scenarios name the ruling they check; the random games and the Hypothesis machine reuse the
live machine's independent ``Knowledge`` tracker (every view and event form against what each
viewer may see) and add a checker of the call step written from R28 alone (``CallStep``).
"""

from __future__ import annotations

import random

import pytest
from engine_support import Table, of_type, types
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import initialize
from test_engine_machine import Checked, CrispMachine, Knowledge, random_step, universe

from games.engines.base import PACE_PROPERTIES, TURN_SECONDS
from games.engines.crisp import (
    ACTION_TYPES,
    EVENT_TYPES,
    SETTINGS_SCHEMA,
    Action,
    Event,
    IllegalAction,
    Settings,
    awaiting,
    event_view,
    host_settings,
    legal_actions,
    new_game,
    pending_deadlines,
    view,
)

HANDS = {0: ["AC", "2C", "3C"], 1: ["4S", "5S", "6S"], 2: ["7D", "8D", "9D"]}
TB = {"pace": "turn_based", "turn_seconds": 60}
MOVE = 60_000


def table(top=(), seats=3, **kw) -> Table:
    hands = {s: h for s, h in HANDS.items() if s < seats}
    return Table(seats, hands, top=top, **(TB | kw))


# -- settings -------------------------------------------------------------------------------
def test_r28_settings_and_host_menu():
    assert SETTINGS_SCHEMA["properties"]["pace"] == PACE_PROPERTIES["pace"]
    assert SETTINGS_SCHEMA["properties"]["turn_seconds"] == PACE_PROPERTIES["turn_seconds"]
    for secs in TURN_SECONDS:
        s = host_settings({"pace": "turn_based", "turn_seconds": secs})
        assert (s.pace, s.turn_seconds, s.move_ms, s.draw_seconds) == (
            "turn_based",
            secs,
            secs * 1000,
            None,
        )
    assert host_settings({}).pace == "live"
    with pytest.raises(IllegalAction, match="needs turn_seconds") as info:
        host_settings({"pace": "turn_based"})
    assert info.value.code == "bad_settings"
    with pytest.raises(IllegalAction, match="draw_seconds must be null") as info:
        host_settings({"pace": "turn_based", "turn_seconds": 86400, "draw_seconds": 30})
    assert info.value.code == "bad_settings"
    with pytest.raises(IllegalAction, match="turn-based games only"):
        host_settings({"turn_seconds": 86400})
    with pytest.raises(IllegalAction, match="must be"):
        host_settings({"pace": "turn_based", "turn_seconds": 5})  # not on the host's menu
    with pytest.raises(IllegalAction):
        Settings(pace="turn_based", turn_seconds=60, draw_seconds=30)
    with pytest.raises(IllegalAction):
        Settings(pace="slow")
    s = Settings(**TB)
    assert Settings.from_json(s.to_json()) == s
    # A game stored before issue 26 has no pace fields: it is live.
    old = {k: v for k, v in Settings().to_json().items() if k not in ("pace", "turn_seconds")}
    assert Settings.from_json(old).pace == "live"
    assert "pass" in ACTION_TYPES and {"pass", "call_ready"} <= EVENT_TYPES


# -- no memorise period, no start delay ---------------------------------------------------
def test_r28_play_does_not_wait_for_a_memorise_period():
    t = table(top=["AH"])
    dealt = of_type(t.events, "round_dealt")[0]
    assert dealt.data["memorise_until"] == 0
    assert types(t.events) == ["round_dealt", "draw_ready"]
    assert t.t.seat == 1 and t.t.phase == "draw"
    assert awaiting(t.state, 0) == {"kind": "draw", "seats": [1], "deadline": MOVE + 1}
    assert of_type(t.events, "draw_ready")[0].data["deadline"] == MOVE
    assert t.view(None)["turn"]["draw_deadline"] == MOVE
    t.do(1, "draw", at=0)  # at the deal


# -- the call step --------------------------------------------------------------------------
def test_r28_call_step_is_the_last_step_of_the_turn_and_pass_starts_the_next():
    t = table(top=["AH", "2H"])
    ev = t.do(1, "draw", "swap:left", at=1000)
    assert types(ev)[-1] == "call_ready"
    assert of_type(ev, "call_ready")[0].data == {
        "seat": 1,
        "at": 1000,
        "turn": 1,
        "deadline": 1000 + MOVE,
    }
    assert t.t.seat == 1 and t.t.phase == "call"
    assert awaiting(t.state, 1000) == {
        "kind": "call_or_pass",
        "seats": [1],
        "deadline": 1000 + MOVE + 1,
    }
    assert [str(a) for a in legal_actions(t.state, 1, 1000)] == ["call", "pass"]
    assert legal_actions(t.state, 2, 1000)[:1] == [Action.look()]
    assert not any(a.type in ("draw", "call", "pass") for a in legal_actions(t.state, 2, 1000))
    assert t.view(1)["you"]["can"] == ["call", "pass"]
    assert t.view(None)["windows"] == [] and t.view(None)["turn"]["draw_deadline"] == 1000 + MOVE
    # Nothing else of the turn, and nobody else's turn, before the answer.
    t.refuse(1, "draw", "wrong_phase")
    t.refuse(1, "discard", "wrong_phase")
    t.refuse(2, "draw", "not_your_turn")
    t.refuse(2, "call", "not_your_turn")
    t.refuse(2, "pass", "not_your_turn")
    ev = t.do(1, "pass", at=5000)
    assert types(ev) == ["pass", "turn_ended", "draw_ready"]
    assert ev[0].data == {"seat": 1, "at": 5000, "turn": 1, "timeout": False}
    te = ev[1].data
    assert (te["timeout"], te["window_closes_at"], te["next_seat"], te["next_start_at"]) == (
        False,
        None,
        2,
        5000,
    )
    assert t.t.seat == 2 and t.t.phase == "draw" and t.t.clock_from == 5000
    t.refuse(1, "call", "not_your_turn")  # the answer was no: no later call
    t.do(2, "draw", at=5000)


def test_r28_the_step_comes_after_a_kings_extra_draws():
    t = table(top=["KH", "AH", "2H"])
    ev = t.do(1, "draw", "king", "draw", "discard", at=1000)
    assert "call_ready" not in types(ev)
    ev = t.do(1, "draw", "discard")
    assert types(ev)[-2:] == ["king_discarded", "call_ready"]
    assert t.t.phase == "call"


def test_r28_yes_makes_every_other_turn_final_and_the_round_ends():
    t = table(top=["AH", "2H", "3H", "4H"])
    t.do(1, "draw", "discard", at=1000)
    ev = t.do(1, "call", at=2000)
    assert types(ev) == ["turn_ended", "call", "draw_ready"]
    assert ev[1].data == {
        "seat": 1,
        "at": 2000,
        "turn": 1,
        "finals_done": [],
        "final_turns_left": 2,
    }
    assert t.r.caller == 1 and t.t.seat == 2 and t.t.final and t.t.clock_from == 2000
    ev = t.do(2, "draw", "discard", at=3000)  # a final turn asks nothing (section 7)
    assert "call_ready" not in types(ev) and t.t.seat == 0 and t.t.final
    t.refuse(0, "call", "final_turns")
    t.refuse(1, "call", "already_called")
    ev = t.do(0, "draw", "discard", at=4000)
    assert types(ev)[-2:] == ["turn_ended", "reveal"]
    assert of_type(ev, "reveal")[0].data["caller"] == 1
    assert t.replay() == t.state


def test_r28_two_seats_call_then_one_final_turn():
    t = table(top=["AH", "2H"], seats=2)
    first = t.t.seat
    t.do(first, "draw", "discard", "call", at=10)
    other = 1 - first
    assert t.t.seat == other and t.t.final
    ev = t.do(other, "draw", "discard", at=20)
    assert "reveal" in types(ev)


def test_r28_a_timeout_answers_no():
    t = table(top=["AH", "2H"])
    t.do(1, "draw", "discard", at=1000)
    assert {d.kind: d.at for d in pending_deadlines(t.state)} == {"call_timeout": 1000 + MOVE + 1}
    assert pending_deadlines(t.state)[0].key == "r1:t1:call"
    # The boundary is on time (R18) ...
    on_time = Table(3, HANDS, top=["AH", "2H"], **TB)
    on_time.do(1, "draw", "discard", at=1000)
    on_time.do(1, "call", at=1000 + MOVE)
    assert on_time.r.caller == 1
    # ... one ms later the clock has answered no.
    t.refuse(1, "call", "not_your_turn", at=1000 + MOVE + 1)
    ev = t.fire("r1:t1:call", 1000 + MOVE + 1)
    assert types(ev) == ["pass", "turn_ended", "draw_ready"]
    assert ev[0].data == {"seat": 1, "at": 1000 + MOVE + 1, "turn": 1, "timeout": True}
    assert ev[1].data["timeout"] is True
    assert t.r.caller is None and t.t.seat == 2 and t.t.clock_from == 1000 + MOVE + 1
    # The platform's sit-in count reads "timeout": true with the seat (docs/ENGINE.md).
    assert ev[0].data["seat"] == 1 and ev[0].data["timeout"] is True
    assert t.replay() == t.state


def test_r28_a_draw_timeout_ends_the_turn_without_the_step():
    t = table(top=["AH", "2H"])
    ev = t.advance(MOVE + 1)
    assert "timeout" in types(ev) and "call_ready" not in types(ev)
    assert t.t.seat == 2 and t.t.phase == "draw"
    t.refuse(1, "call", "not_your_turn")


def test_r28_call_and_pass_refusals():
    t = table(top=["AH"])
    t.refuse(1, "pass", "wrong_phase")  # its turn, but not its last step yet
    t.refuse(1, "call", "no_window")
    live = Table(3, HANDS, top=["AH"], memorise_ms=0)
    e = live.refuse(1, "pass", "wrong_phase")
    assert "turn-based" in e.reason
    with pytest.raises(IllegalAction) as info:
        Action.from_wire({"type": "pass", "call": True})
    assert info.value.code == "bad_action"
    assert Action.from_wire({"type": "pass"}) == Action.pass_()


# -- opening looks ------------------------------------------------------------------------
def test_r28_look_any_time_until_the_seats_first_action():
    t = table(top=["AH", "2H", "3H", "4H"])
    # Seat 0 plays last in the first go-round: it may look after others' turns.
    t.do(1, "draw", "discard", "pass", at=100)
    t.do(2, "draw", "discard", "pass", at=200)
    assert legal_actions(t.state, 0, 300)[0] == Action.look()  # its turn offers the look first
    ev = t.do(0, "look", at=300)
    assert ev[0].data == {"seat": 0, "at": 300, "left": "AC", "right": "3C"}
    assert event_view(ev[0], 0)["data"]["left"] == "AC"
    assert event_view(ev[0], 1)["data"]["left"] is None
    assert event_view(ev[0], None)["data"]["right"] is None
    t.refuse(0, "look", "already_looked")
    # Seat 1 never looked and has acted: gone for good.
    t.refuse(1, "look", "look_expired")
    t.do(0, "draw", "discard", "pass")
    t.refuse(1, "look", "look_expired")


def test_r28_the_first_action_ends_the_look_even_unlooked():
    t = table(top=["AH"])
    t.do(1, "draw", at=10)
    t.refuse(1, "look", "look_expired")
    v = view(t.state, 1, 10)
    assert "look" not in v["you"]["can"] and v["looked"] == [False, False, False]


# -- random games and the machine ---------------------------------------------------------
class TBKnowledge(Knowledge):
    """The live tracker; R28's two new events move no card."""

    def event(self, e: Event) -> dict[int | None, set[str]]:
        if e.type in ("call_ready", "pass"):
            return {}
        return super().event(e)


class CallStep:
    """R28 checked from the event stream alone: ``call_ready`` comes exactly when the last card
    of a non-final turn has been played (after a King's extra draws), nothing of any turn
    happens until its answer, the answer (``pass`` or ``call``) ends the turn and the next
    turn starts at that instant; a turn ended by a draw timeout, and a final turn, never ask."""

    PLAYS = {"swap", "discard", "jack", "queen", "king_discarded"}

    def __init__(self) -> None:
        self.asked: tuple[int, int] | None = None
        self.answered: tuple[int, int, bool] | None = None
        self.extra = 0
        self.last_play: tuple[int, int] | None = None
        self.final = False
        self.drawn_timeout = False
        self.calls = self.passes = self.timeouts = self.asks = 0

    def event(self, e: Event) -> None:
        d, typ = e.data, e.type
        if typ == "window_closed":
            raise AssertionError("a turn-based game has no crisp window")
        if typ == "round_dealt":
            assert d["memorise_until"] == d["at"]
            self.asked = None
            return
        if self.asked is not None and typ not in ("look", "pass", "turn_ended", "call"):
            raise AssertionError(f"{typ} while {self.asked} is asked 'Call crisp?'")
        if typ == "draw_ready":
            self.extra = d["extra_draws_left"]
            self.final = d["final"]
            self.drawn_timeout = False
            if d["draw_no"] == 1:
                self.answered = None
        elif typ in self.PLAYS:
            self.last_play = (d["seat"], d.get("turn", -1))
        elif typ == "timeout":
            self.drawn_timeout = True
        elif typ == "call_ready":
            self.asks += 1
            assert not self.final and not self.drawn_timeout and self.extra == 0
            assert self.last_play is not None and self.last_play[0] == d["seat"]
            self.asked = (d["seat"], d["turn"])
        elif typ == "pass":
            assert self.asked == (d["seat"], d["turn"])
            self.passes += 1
            self.timeouts += d["timeout"]
            self.answered = (d["seat"], d["turn"], False)
            self.asked = None
        elif typ == "turn_ended":
            if d["final"] or self.drawn_timeout:
                assert self.asked is None and self.answered is None
            else:
                assert self.asked == (d["seat"], d["turn"]) or self.answered == (
                    d["seat"],
                    d["turn"],
                    False,
                ), (self.asked, self.answered, d)
                assert d["next_start_at"] in (d["at"], None)
            assert d["window_closes_at"] is None
        elif typ == "call":
            assert self.asked == (d["seat"], d["turn"]), (self.asked, d)
            self.calls += 1
            self.asked = None


class TBChecked(Checked):
    """``Checked`` with the R28 tracker, the call-step checker and ``pass`` in the universe."""

    def __init__(self, seats, cfg, seed, start, decks) -> None:
        assert cfg.turn_based
        self.seats, self.cfg = seats, cfg
        self.seed = "SEED\x1f" + seed
        self.decks, self.start = decks, start
        self.state, ev = new_game(seats=seats, settings=cfg, seed=self.seed, now=start, decks=decks)
        self.now = start
        self.log = []
        self.know = TBKnowledge(seats)
        self.calls = CallStep()
        self.meaning = {}
        self.seen_keys = set()
        self.universe = [*universe(seats), Action.pass_()]
        self.kinds = set()
        self.steps = 0
        self._events(ev)

    def _events(self, events: list[Event]) -> None:
        for e in events:
            self.calls.event(e)
        super()._events(events)

    def exactly_one_thing_awaited(self) -> None:
        st_, r = self.state, self.state.round
        t = r.turn
        ds = pending_deadlines(st_)
        aw = awaiting(st_, st_.clock)
        if st_.status == "finished":
            assert t is None and ds == [] and aw["kind"] == "nothing"
            return
        if r.reveal is not None:
            assert t is None and [d.kind for d in ds] == ["next_round"]
            return
        assert t is not None and t.phase in ("draw", "play", "call")  # never "start": no wait
        assert r.windows == []
        kind = {"call": "call_timeout"}.get(t.phase, "draw_timeout")
        assert [d.kind for d in ds] == [kind]
        assert ds[0].at == t.clock_from + self.cfg.move_ms + 1
        assert aw == {
            "kind": {"call": "call_or_pass"}.get(t.phase, t.phase),
            "seats": [t.seat],
            "deadline": ds[0].at,
        }


def tb_settings(rng: random.Random) -> Settings:
    return Settings(
        target_score=rng.choice([10, 20, 30]),
        pile_draw=rng.random() < 0.5,
        between_rounds_ms=rng.choice([0, 8000]),
        pace="turn_based",
        turn_seconds=rng.choice([1, 2, 86400]),
    )


@pytest.mark.parametrize("seats", range(2, 9))
def test_r28_random_turn_based_games_always_end(seats):
    """Random turn-based play to the end, every step checked: cards, redaction of every view
    and event form (the look card only to its seat), the call step, replay."""
    rng = random.Random(f"tb-{seats}")
    kinds: set[str] = set()
    calls = passes = timeouts = asks = 0
    for game in range(5):
        g = TBChecked(seats, tb_settings(rng), f"g{game}", rng.randrange(2**40), None)
        call_rate = rng.choice([0.05, 0.3, 0.9])
        for _ in range(4000):
            if g.state.status != "playing":
                break
            random_step(g, rng, call_rate)
        assert g.state.status == "finished", "a turn-based game must end"
        g.check_replay()
        kinds |= g.kinds
        c = g.calls
        calls, passes, timeouts, asks = (
            calls + c.calls,
            passes + c.passes,
            timeouts + c.timeouts,
            asks + c.asks,
        )
        assert c.asks == c.calls + c.passes + (g.state.round.turn is not None)
    assert calls and passes and timeouts
    assert "window_closed" not in kinds
    assert kinds >= {"look", "draw", "call_ready", "pass", "call", "timeout", "reveal"}


class TurnBasedMachine(CrispMachine):
    """The live machine's rules (actions in bursts, timers on time, late, early or stale,
    the sweep, illegal attempts) on turn-based games."""

    @initialize(
        seats=st.integers(2, 8),
        turn_seconds=st.sampled_from([1, 2, 30, 86400]),
        pile_draw=st.booleans(),
        target_score=st.sampled_from([1, 20, 50]),
        seed=st.text(alphabet="abcxyz-019", min_size=1, max_size=6),
        start=st.integers(0, 2**41),
        call_level=st.integers(0, 9),
        warmup=st.integers(0, 150),
        rng_seed=st.integers(0, 2**32),
    )
    def start_game(
        self,
        seats,
        turn_seconds,
        pile_draw,
        target_score,
        seed,
        start,
        call_level,
        warmup,
        rng_seed,
    ):
        cfg = Settings(
            target_score=target_score,
            pile_draw=pile_draw,
            pace="turn_based",
            turn_seconds=turn_seconds,
        )
        self.g = TBChecked(seats, cfg, seed, start, None)
        self.call_level = call_level
        rng = random.Random(rng_seed)
        for _ in range(warmup):
            if self.g.state.status != "playing":
                break
            random_step(self.g, rng, call_level / 100)
        self.actions = 0
        self.rules = 0


TurnBasedMachine.TestCase.settings = settings(
    max_examples=40,
    stateful_step_count=30,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
TestTurnBasedMachine = TurnBasedMachine.TestCase


def test_r28_live_games_are_unchanged_by_the_new_fields():
    """The defaults are live: a live game's first events are the memorise period's."""
    st_, ev = new_game(seats=2, settings=Settings(), seed="x", now=0)
    assert ev[0].data["memorise_until"] == 5000 and st_.round.turn.phase == "start"
    assert awaiting(st_, 0)["kind"] == "start"
