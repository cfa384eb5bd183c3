"""Time per move (C25-C29) through deadlines: pending_deadlines, fire, advance, and the
timeout moves.  ``at`` is the first instant a deadline has taken effect: the boundary + 1 ms,
because a move at exactly the deadline is on time (C27, CE11)."""

from __future__ import annotations

import pytest
from cribbage_support import T0, cards, game, lay, of_type, play, stacked, types

from games.engines.cribbage import (
    Action,
    IllegalAction,
    Settings,
    advance,
    apply,
    fire,
    legal_actions,
    pending_deadlines,
    view,
)

S30 = Settings(move_seconds=30)
# C29's example hand for the pone (seat 1): 2H 5C 9D JC KC KS.
DECK = stacked(pone=cards("2H 5C 9D JC KC KS"), dealer=cards("AS 2C 7C 7D 3H 4H"), starter="8C")


def test_c25_no_limit_means_no_deadlines() -> None:
    st, _ = game([DECK], dealer=0)
    assert pending_deadlines(st) == []
    later, ev = advance(st, T0 + 10**9)
    assert later is st and ev == []


def test_c27_ce11_both_lay_away_clocks_start_at_the_deal() -> None:
    st, ev = game([DECK], dealer=0, settings=S30)
    ds = pending_deadlines(st)
    assert [(d.key, d.kind, d.at) for d in ds] == [
        ("r1:lay:0", "lay_away_timeout", T0 + 30_001),
        ("r1:lay:1", "lay_away_timeout", T0 + 30_001),
    ]
    assert of_type(ev, "round_dealt")[0]["deadline"] == T0 + 30_000
    assert view(st, 0, T0)["lay_away_deadline"] == T0 + 30_000
    st, _ = lay(st, 0, "AS", "2C", T0 + 1000)
    assert [d.key for d in pending_deadlines(st)] == ["r1:lay:1"]


def test_c27_a_move_at_exactly_the_deadline_is_on_time() -> None:
    st, _ = game([DECK], dealer=0, settings=S30)
    st, ev = apply(st, 1, Action.lay_away("2H", "5C"), T0 + 30_000)
    assert of_type(ev, "laid_away") == [
        {"round": 1, "seat": 1, "at": T0 + 30_000, "cards": ["2H", "5C"], "timeout": False}
    ]


def test_c29_ce19_lay_away_timeout_lays_away_the_two_highest_cards() -> None:
    st, _ = game([DECK], dealer=0, settings=S30)
    st, _ = lay(st, 0, "3H", "4H", T0 + 10)
    early, ev = fire(st, "r1:lay:1", T0 + 30_000)
    assert early is st and ev == []  # not yet due: nothing
    st, ev = fire(st, "r1:lay:1", T0 + 30_001)
    assert of_type(ev, "laid_away") == [
        {"round": 1, "seat": 1, "at": T0 + 30_001, "cards": ["KC", "KS"], "timeout": True}
    ]
    assert types(ev) == ["laid_away", "starter_cut", "turn"]
    # C27: the pone's play clock starts at that instant
    assert [(d.kind, d.at) for d in pending_deadlines(st)] == [("play_timeout", T0 + 60_002)]
    assert of_type(ev, "turn")[0]["deadline"] == T0 + 60_001


def test_c29_play_timeout_plays_the_lowest_playable_card_in_hand_order() -> None:
    st, _ = game([DECK], dealer=0, settings=S30)
    st, _ = lay(st, 0, "3H", "4H", T0)
    st, _ = lay(st, 1, "KC", "KS", T0)  # the pone keeps 2H 5C 9D JC
    st, _ = play(st, 1, "9D", T0 + 1)
    # the dealer holds AS 2C 7C 7D: AS is lowest (A before 2, whatever the suits)
    (d,) = pending_deadlines(st)
    assert (d.kind, d.at) == ("play_timeout", T0 + 1 + 30_001)
    st, ev = advance(st, d.at)
    assert of_type(ev, "play")[0]["card"] == "AS" and of_type(ev, "play")[0]["timeout"]
    st, _ = play(st, 1, "JC", T0 + 40_000)  # 20
    st, ev = advance(st, T0 + 40_000 + 30_001)
    assert of_type(ev, "play")[0]["card"] == "2C"  # 22
    st, _ = play(st, 1, "2H", T0 + 80_000)  # 24: 7C and 7D both fit
    st, ev = advance(st, T0 + 80_000 + 30_001)
    assert of_type(ev, "play")[0]["card"] == "7C"  # C29: clubs before diamonds


def test_c29_a_stale_timer_changes_nothing() -> None:
    st, _ = game([DECK], dealer=0, settings=S30)
    st2, _ = lay(st, 1, "2H", "5C", T0 + 5)
    same, ev = fire(st2, "r1:lay:1", T0 + 30_001)
    assert same is st2 and ev == []
    same, ev = fire(st2, "no-such-key", T0 + 10**9)
    assert same is st2 and ev == []


def test_ce13_a_late_sweep_gives_the_punctual_result() -> None:
    """Timeouts take effect at their own instants: one very late ``advance`` plays the whole
    game out by timeouts exactly as firing each deadline on time does."""
    st, _ = game(settings=S30)
    late, late_ev = advance(st, T0 + 10**10)
    step, step_ev = st, []
    while pending_deadlines(step):
        d = pending_deadlines(step)[0]
        step, ev = fire(step, d.key, d.at)
        step_ev += ev
    assert late.status == "finished" and late.to_json() == step.to_json()
    assert [e.to_json() for e in late_ev] == [e.to_json() for e in step_ev]
    assert pending_deadlines(late) == [] and max(late.scores) == 121


def test_ce13_apply_runs_due_deadlines_first_and_time_never_runs_backwards() -> None:
    st0, _ = game([DECK], dealer=0, settings=S30)
    before = st0.to_json()
    # 1 ms late: both lay-away timeouts took effect first (the play has begun), so the move
    # is refused and the input state is unchanged
    with pytest.raises(IllegalAction) as e:
        apply(st0, 0, Action.lay_away("3H", "4H"), T0 + 30_001)
    assert e.value.code == "wrong_phase"
    assert st0.to_json() == before
    assert legal_actions(st0, 0, T0 + 30_001) == [] and legal_actions(st0, 0, T0 + 30_000)
    moved, _ = lay(st0, 1, "2H", "5C", T0 + 100)
    back, ev = apply(moved, 0, Action.lay_away("3H", "4H"), T0)  # an earlier 'now'
    assert of_type(ev, "laid_away")[0]["at"] == T0 + 100 and back.clock == T0 + 100


def test_ce12_timeouts_due_together_apply_seat_0_first_then_the_starter() -> None:
    st, _ = game([DECK], dealer=0, settings=S30)
    st, ev = advance(st, T0 + 30_001)
    assert types(ev) == ["laid_away", "laid_away", "starter_cut", "turn"]
    assert [e["seat"] for e in of_type(ev, "laid_away")] == [0, 1]
    assert of_type(ev, "laid_away")[0]["cards"] == ["7C", "7D"]  # the dealer's two highest
    assert all(e.data["at"] == T0 + 30_001 for e in ev)
