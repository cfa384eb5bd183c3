"""rules/crisp.md sections 7-9 and rulings R10-R14, R18-R20: the crisp call, its window, the final
turns, the reveal, scoring and the end of the game.

Timeline used throughout (default timers): dealt at 0, memorise until 5000; seat 1 plays first
(3 seats, dealer 0) and ends its turn at 5000, so its window runs 5000..8000 inclusive and seat 2
may start at 7000.
"""

from __future__ import annotations

import random

import pytest
from engine_support import Table, of_type, types

from games.engines.crisp import GameState, advance, apply, fire, legal_actions, pending_deadlines

HANDS = {0: ["AC", "2C", "3C"], 1: ["4S", "5S", "6S"], 2: ["7D", "8D", "9D"]}


def after_first_turn(**kw) -> Table:
    t = Table(3, HANDS, top=["TH", "TD", "TC", "TS", "9H", "9C"], **kw)
    t.do(1, "draw", "discard", at=5000)
    return t


# Section 7 --------------------------------------------------------------------------------------
def test_s7_call_at_end_of_turn_then_one_final_turn_each_then_reveal():
    t = after_first_turn()
    ev = t.do(1, "call")
    call = of_type(ev, "call")[0]
    assert call.data == {
        "seat": 1, "at": 5000, "turn": 1, "finals_done": [], "final_turns_left": 2,
    }  # fmt: skip
    assert t.t.seat == 2 and t.t.final
    assert t.deadlines() == {"may_start": 7000}  # the window is gone, the start delay is not
    t.do(2, "draw", "discard")
    assert t.t.seat == 0 and t.t.final
    ev = t.do(0, "draw", "discard")
    # R11: the last final turn opens no window; the round ends at once; the caller plays no more.
    assert types(ev)[-2:] == ["turn_ended", "reveal"]
    assert of_type(ev, "turn_ended")[0].data["window_closes_at"] is None
    assert t.r.turn is None and t.r.reveal["at"] == t.now


def test_s7_no_call_outside_own_window():
    t = Table(3, HANDS)
    t.refuse(1, "call", "no_window")  # no turn played yet
    t.do(1, "draw")
    t.refuse(1, "call", "no_window")  # during the turn
    t.do(1, "discard")
    t.refuse(2, "call", "no_window")


def test_r10_window_is_three_seconds_inclusive():
    t = after_first_turn()
    assert t.deadlines()["window_closed"] == 8001  # first instant it is closed
    t.refuse(1, "call", "window_closed", at=8001)
    t.do(1, "call", at=8000)  # R18: exactly t + 3 s counts
    assert t.r.caller == 1


def test_r10_window_closes_by_deadline():
    t = after_first_turn()
    ev = t.advance(8001)
    assert "window_closed" in types(ev) and t.r.windows == []
    t.refuse(1, "call", "window_closed")


def test_r10_next_player_starts_after_two_seconds_inclusive():
    t = after_first_turn()
    t.refuse(2, "draw", "too_early", at=6999)
    assert t.deadlines()["may_start"] == 7000
    ev = t.do(2, "draw", at=7000)
    assert types(ev) == ["draw_ready", "draw"] and ev[0].data["at"] == 7000


def test_r19_a_call_does_not_shorten_the_start_delay():
    t = after_first_turn()
    t.do(1, "call", at=5500)
    t.refuse(2, "draw", "too_early", at=6999)
    t.do(2, "draw", at=7000)


def test_r19_final_turns_keep_the_start_delay_but_allow_no_call():
    t = after_first_turn()
    t.do(1, "call")
    t.do(2, "draw", "discard", at=7000)
    t.refuse(2, "call", "final_turns")
    t.refuse(0, "draw", "too_early", at=8999)
    t.do(0, "draw", at=9000)


def test_r12_call_in_overlap_makes_the_running_turn_the_first_final_turn():
    t = after_first_turn()
    t.do(2, "draw", at=7000)  # R16: seat 2 has started
    ev = t.do(1, "call", at=7500)
    assert of_type(ev, "call")[0].data["final_turns_left"] == 2
    assert t.t.seat == 2 and t.t.final
    t.do(2, "discard", at=7600)
    t.refuse(2, "call", "final_turns")
    assert t.t.seat == 0 and t.t.final
    t.do(0, "draw", "discard")
    assert t.r.reveal is not None


def test_r20_a_whole_turn_inside_the_overlap_is_the_first_final_turn():
    t = after_first_turn()
    t.do(2, "draw", "discard", at=7000)  # begun and ended inside 1's overlap: 2's window opens
    assert [w.seat for w in t.r.windows] == [1, 2]
    t.do(1, "call", at=7900)
    assert t.r.finals_done == [2] and t.r.windows == []
    t.refuse(2, "call", "final_turns")
    assert t.t.seat == 0 and t.t.final and t.t.start_at == 9000
    t.do(0, "draw", "discard")
    assert t.r.reveal is not None


def test_r20_two_seats_round_ends_at_the_call():
    t = Table(2, {0: ["AC", "2C", "3C"], 1: ["4S", "5S", "6S"]}, dealer=1)
    t.do(0, "draw", "discard", at=5000)
    t.do(1, "draw", "discard", at=7000)
    ev = t.do(0, "call", at=8000)
    assert types(ev) == ["call", "reveal"]
    assert t.r.reveal["at"] == 8000 and t.r.finals_done == [1]


def test_r12_first_call_wins_second_refused():
    t = after_first_turn()
    t.do(2, "draw", "discard", at=7000)
    t.do(2, "call", at=7300)  # seat 2's own window: valid, and first
    e = t.refuse(1, "call", "already_called", at=7500)
    assert "seat 2" in e.reason
    t.refuse(2, "call", "already_called")
    # Final turns: 0 then 1 (the earlier player gets one too); then the reveal.
    t.do(0, "draw", "discard")
    assert t.t.seat == 1 and t.t.final
    t.do(1, "draw", "discard")
    assert t.r.reveal["caller_strictly_lowest"] is False or t.r.caller == 2


def test_r11_final_turn_order_clockwise_from_the_callers_left():
    t = Table(5, dealer=0, top=["AH"] * 0)
    order = []
    t.do(1, "draw", "discard", at=5000)
    t.do(1, "call")
    while t.r.reveal is None:
        order.append(t.t.seat)
        t.do(t.t.seat, "draw", "discard")
    assert order == [2, 3, 4, 0]


def test_s7_timed_out_final_turn_still_counts_and_last_one_ends_round():
    t = after_first_turn(draw_seconds=30)
    t.do(1, "call")
    t.advance(7000 + 30_000 + 1)  # seat 2 times out: its final turn is over
    assert t.t.seat == 0 and t.t.phase == "draw"  # no start delay after a timeout (R10)
    ev = t.advance(37_001 + 30_000 + 1)
    assert types(ev)[-2:] == ["turn_ended", "reveal"]


# Section 8 / R13 ----------------------------------------------------------------------------------
def _round(hands: dict[int, list[str]], caller: int = 1, seats: int = 3, **kw) -> Table:
    t = Table(seats, hands, top=["TH", "TD", "TC", "TS", "9H", "9S"], **kw)
    first = t.t.seat
    while True:
        seat = t.t.seat
        t.do(seat, "draw", "discard")
        if seat == caller:
            t.do(seat, "call")
            break
        t.advance(t.now + 3001)
    while t.r.reveal is None:
        t.do(t.t.seat, "draw", "discard")
    assert first == 1
    return t


def test_s8_caller_strictly_lowest_subtracts_five():
    t = _round({0: ["9C", "8C", "7C"], 1: ["AS", "2S", "3S"], 2: ["4D", "5D", "6D"]})
    assert t.r.reveal["totals"] == [24, 6, 15]
    assert t.state.scores == [24, 1, 15] and t.r.reveal["caller_strictly_lowest"]


def test_s8_caller_tied_adds_five():
    t = _round({0: ["AC", "2C", "3C"], 1: ["AS", "2S", "3S"], 2: ["4D", "5D", "6D"]})
    assert t.state.scores == [6, 11, 15] and not t.r.reveal["caller_strictly_lowest"]


def test_s8_caller_higher_adds_five():
    t = _round({0: ["AC", "2C", "3C"], 1: ["KS", "2S", "3S"], 2: ["4D", "5D", "6D"]})
    assert t.state.scores == [6, 20, 15]


def test_r13_round_score_may_be_negative():
    t = _round({0: ["9C", "8C", "7C"], 1: ["AS", "AH", "2S"], 2: ["4D", "5D", "6D"]})
    assert t.r.reveal["round_scores"] == [24, -1, 15] and t.state.scores[1] == -1


def test_s8_reveal_event_is_public_and_complete():
    t = _round({0: ["9C", "8C", "7C"], 1: ["AS", "2S", "3S"], 2: ["4D", "5D", "6D"]})
    rv = of_type(t.events, "reveal")[0]
    for s in (0, 1, 2, None):
        d = t.seen(s, [rv])[0]["data"]
        assert d["hands"] == [["9C", "8C", "7C"], ["AS", "2S", "3S"], ["4D", "5D", "6D"]]
    assert t.view(2)["hands"][1] == ["AS", "2S", "3S"]  # face up in views after the reveal
    assert t.view(None)["reveal"]["round_scores"] == [24, 1, 15]


def test_s8_running_totals_across_rounds_and_next_deal():
    t = _round({0: ["9C", "8C", "7C"], 1: ["AS", "2S", "3S"], 2: ["4D", "5D", "6D"]})
    rv_at = t.r.reveal["at"]
    assert [(d.kind, d.at) for d in pending_deadlines(t.state)] == [("next_round", rv_at + 8000)]
    t.refuse(0, "look", "round_over")
    assert t.fire("r1:next", rv_at + 7999) == []  # early: nothing
    ev = t.fire("r1:next", rv_at + 8000)
    assert types(ev) == ["round_dealt"] and t.state.round_number == 2
    assert t.r.dealer == 1 and t.t.seat == 2 and t.state.history == [[24, 1, 15]]
    assert t.state.scores == [24, 1, 15]


# Section 9 / R14 ---------------------------------------------------------------------------------
def test_s9_game_ends_at_target_lowest_wins():
    t = _round(
        {0: ["9C", "8C", "7C"], 1: ["AS", "2S", "3S"], 2: ["4D", "5D", "6D"]}, target_score=20
    )
    assert t.state.status == "finished" and t.state.winners == [1]
    assert types(t.events)[-1] == "game_over"
    assert pending_deadlines(t.state) == []
    t.refuse(1, "look", "game_finished")
    assert t.view(0)["awaiting"] == {"kind": "nothing", "seats": [], "deadline": None}


def test_s9_shared_winners():
    t = _round(
        {0: ["AC", "AH", "2C"], 1: ["3S", "4S", "5S"], 2: ["AD", "AS", "2D"]}, target_score=15
    )
    assert t.state.scores == [4, 17, 4]
    assert t.state.status == "finished" and t.state.winners == [0, 2]
    assert of_type(t.events, "game_over")[0].data["winners"] == [0, 2]


def test_r14_any_positive_target_and_not_reached_continues():
    t = _round(
        {0: ["9C", "8C", "7C"], 1: ["AS", "2S", "3S"], 2: ["4D", "5D", "6D"]}, target_score=25
    )
    assert t.state.status == "playing"  # 24 < 25
    t = _round(
        {0: ["9C", "8C", "7C"], 1: ["AS", "2S", "3S"], 2: ["4D", "5D", "6D"]}, target_score=24
    )
    assert t.state.status == "finished"  # "reaches ... or more"


# R18: boundaries are inclusive; a late timer gives the same state as a punctual one --------------
def test_r18_late_sweep_equals_punctual_one():
    t = after_first_turn(draw_seconds=30)
    punctual = t.state
    steps = []
    while punctual.clock < 200_000:  # nobody calls: timeouts go round the table (R24)
        d = pending_deadlines(punctual)[0]
        punctual, _ = fire(punctual, d.key, d.at)
        steps.append(d.kind)
    late, _ = advance(t.state, punctual.clock + 0)
    assert late == punctual
    assert GameState.from_json(late.to_json()) == punctual
    assert "window_closed" in steps and "draw_timeout" in steps


def test_r18_fire_late_by_an_hour_is_the_same_state_as_on_time():
    t = after_first_turn()
    on_time, ev1 = fire(t.state, "r1:t1:window", 8001)
    late, ev2 = fire(t.state, "r1:t1:window", 8001 + 3_600_000)
    assert on_time == late and [e.to_json() for e in ev1] == [e.to_json() for e in ev2]
    # The may_start at 7000 came first, at its own instant.
    assert types(ev1) == ["draw_ready", "window_closed"] and ev1[0].data["at"] == 7000


def test_stale_and_unknown_keys_change_nothing():
    t = after_first_turn()
    old = "r1:memorise"
    assert fire(t.state, old, 10**9) == (t.state, [])
    assert fire(t.state, "nonsense", 10**9) == (t.state, [])
    assert advance(t.state, 6000) == (t.state, [])


@pytest.mark.parametrize("seats", [2, 3, 8])
def test_deadline_keys_are_unique_over_a_game(seats):
    """A key, once seen, always means the same deadline (same kind, same instant)."""
    rng = random.Random(seats)
    st = Table(seats, draw_seconds=1, between_rounds_ms=10, target_score=40).state
    meaning: dict[str, tuple[str, int]] = {}
    for _ in range(3000):
        if st.status != "playing":
            break
        ds = pending_deadlines(st)
        for d in ds:
            assert meaning.setdefault(d.key, (d.kind, d.at)) == (d.kind, d.at)
        now = ds[0].at if rng.random() < 0.3 else st.clock
        acts = [(s, a) for s in range(seats) for a in legal_actions(st, s, now)]
        if acts and rng.random() < 0.7:
            st, _ = apply(st, *rng.choice(acts), now)
        else:
            st, _ = fire(st, ds[0].key, ds[0].at)
    assert st.status == "finished"
    assert {k.split(":")[0] for k in meaning} >= {"r1", "r2"}
