"""Scoring, worked by hand from §9 and T10, T15-T19 (rules/triple-crown.md).

The pure function first (every case of the rulings), then the same cases as real hands played
through the engine with stacked deals, so the scorer and the rules are checked together.
"""

from __future__ import annotations

import pytest
from triple_crown_support import start

from games.engines.triple_crown import Action, GameState, apply, score_hand
from games.engines.triple_crown.scoring import roles_for

CROWN = ["high", "low", "team", "team"]
DS0 = ["double", "opponent", "opponent", "opponent"]


def codes(reasons: tuple[dict, ...]) -> list[str]:
    return [r["code"] for r in reasons]


# -- the pure scorer: Crown hands (§9, T17) -------------------------------------------------
def test_t17_high_crown_at_4_tricks_fails_and_team_scores_5_minus_h() -> None:
    # H 4, L 0: High fails (needs 5), Low made it; each Team: 0 + (5 - 4) = 1.
    s = score_hand(CROWN, [4, 0, 5, 4])
    assert s.points == (0, 3, 1, 1)
    assert s.reasons[0] == ({"code": "high_failed", "tricks": 4, "needed": 5, "points": 0},)
    assert s.reasons[2] == (
        {"code": "team_high_failed", "high_tricks": 4, "needed": 5, "points": 1},
    )


def test_t17_high_crown_at_5_tricks_makes_it_exactly() -> None:
    # H 5, L 0: both crowns succeed; the Team Crowns score nothing.
    s = score_hand(CROWN, [5, 0, 4, 4])
    assert s.points == (2, 3, 0, 0)
    assert codes(s.reasons[0]) == ["high_made"]
    assert s.reasons[3] == ({"code": "team_no_failure", "points": 0},)


def test_t17_high_crown_at_9_tricks_earns_nothing_more_than_at_5() -> None:
    s = score_hand(CROWN, [9, 0, 2, 2])
    assert s.points == (2, 3, 0, 0)
    assert s.reasons[0][0]["tricks"] == 9


def test_t17_low_crown_at_0_tricks_scores_3() -> None:
    s = score_hand(["team", "team", "low", "high"], [3, 3, 0, 7])
    assert s.points == (0, 0, 3, 2)
    assert s.reasons[2] == ({"code": "low_made", "tricks": 0, "points": 3},)


def test_t17_low_crown_at_1_trick_fails_and_each_team_scores_l() -> None:
    # T17's example H 5, L 1 -> 2 / 0 / 1.
    s = score_hand(CROWN, [5, 1, 4, 3])
    assert s.points == (2, 0, 1, 1)
    assert s.reasons[1] == ({"code": "low_failed", "tricks": 1, "points": 0},)
    assert s.reasons[2] == ({"code": "team_low_failed", "low_tricks": 1, "points": 1},)


def test_t17_both_crowns_failing_team_scores_both_parts() -> None:
    # T17's example H 3, L 2 -> 0 / 0 / 4, and H 0, L 4 -> 0 / 0 / 9.
    s = score_hand(CROWN, [3, 2, 4, 4])
    assert s.points == (0, 0, 4, 4)
    assert codes(s.reasons[2]) == ["team_low_failed", "team_high_failed"]
    assert [r["points"] for r in s.reasons[3]] == [2, 2]
    assert score_hand(CROWN, [0, 4, 5, 4]).points == (0, 0, 9, 9)


def test_t17_examples_high_7_low_0() -> None:
    assert score_hand(CROWN, [7, 0, 3, 3]).points == (2, 3, 0, 0)


def test_t17_team_crowns_own_tricks_do_not_count() -> None:
    # The same H and L with the Team Crowns' 8 tricks split differently score the same.
    assert score_hand(CROWN, [3, 2, 8, 0]).points == score_hand(CROWN, [3, 2, 4, 4]).points


def test_t19_each_team_crown_gets_the_full_amount() -> None:
    s = score_hand(CROWN, [2, 3, 4, 4])
    assert s.points[2] == s.points[3] == 3 + 3


def test_te7_points_are_the_sum_of_the_reasons() -> None:
    for tricks in ([0, 13, 0, 0], [13, 0, 0, 0], [4, 1, 4, 4], [6, 0, 7, 0]):
        s = score_hand(CROWN, tricks)
        assert list(s.points) == [sum(r["points"] for r in rs) for rs in s.reasons]


# -- the pure scorer: Double Stakes (§9, T10, T18) ----------------------------------------------
@pytest.mark.parametrize("memo", ["high", "low"])
def test_t10_t18_double_stakes_succeeds_low_way_with_0_tricks_whatever_the_memo(memo: str) -> None:
    s = score_hand(DS0, [0, 5, 4, 4], memo)
    assert s.points == (5, 0, 0, 0)
    assert s.reasons[0] == (
        {"code": "double_made", "tricks": 0, "achieved": "low", "memo": memo, "points": 5},
    )
    assert s.reasons[1] == ({"code": "double_made_against", "tricks": 0, "points": 0},)


@pytest.mark.parametrize("memo", ["high", "low"])
@pytest.mark.parametrize("t", [5, 9, 13])
def test_t10_t18_double_stakes_succeeds_high_way_with_5_or_more(memo: str, t: int) -> None:
    rest = 13 - t
    s = score_hand(["opponent", "double", "opponent", "opponent"], [rest, t, 0, 0], memo)
    assert s.points == (0, 5, 0, 0)
    assert s.reasons[1][0]["achieved"] == "high"


@pytest.mark.parametrize(("t", "points"), [(1, 2), (2, 4), (3, 6), (4, 8)])
def test_t18_failure_with_memo_low_gives_each_opponent_2t(t: int, points: int) -> None:
    s = score_hand(DS0, [t, 13 - t, 0, 0], "low")
    assert s.points == (0, points, points, points)
    assert s.reasons[0] == ({"code": "double_failed", "tricks": t, "memo": "low", "points": 0},)
    assert s.reasons[2] == ({"code": "opponents_low_memo", "tricks": t, "points": points},)


@pytest.mark.parametrize(("t", "points"), [(1, 8), (2, 6), (3, 4), (4, 2)])
def test_t18_failure_with_memo_high_gives_each_opponent_5_minus_t_times_2(
    t: int, points: int
) -> None:
    s = score_hand(DS0, [t, 13 - t, 0, 0], "high")
    assert s.points == (0, points, points, points)
    assert s.reasons[3] == (
        {"code": "opponents_high_memo", "tricks": t, "needed": 5, "points": points},
    )


def test_t16_no_score_is_ever_negative() -> None:
    for t in range(14):
        for memo in ("high", "low"):
            assert min(score_hand(DS0, [t, 13 - t, 0, 0], memo).points) >= 0
        assert min(score_hand(CROWN, [t, 0, 13 - t, 0]).points) >= 0


def test_t5_roles_from_the_deal_and_scorer_rejects_impossible_role_sets() -> None:
    assert roles_for([["AS"], ["2D"], [], []]) == CROWN
    with pytest.raises(ValueError):
        score_hand(["high", "high", "team", "team"], [5, 5, 3, 0])
    with pytest.raises(ValueError):
        score_hand(DS0, [5, 5, 3, 0])  # no memo
    with pytest.raises(ValueError):
        score_hand(CROWN, [5, 5, 3])


# -- the same cases through the engine --------------------------------------------------------
SPADES = ["AS", "KS", "QS", "JS", "TS", "9S", "8S", "7S", "6S", "5S", "4S", "3S", "2S"]
HEARTS = [c[0] + "H" for c in SPADES]
DIAMONDS = [c[0] + "D" for c in SPADES]
CLUBS = [c[0] + "C" for c in SPADES]


def play(state: GameState, tricks: list[list[str]], now: int = 0) -> tuple[GameState, list]:
    """Play ``tricks`` (each: the cards in play order from the leader); every card is played
    by the seat holding it, which must be the seat on turn."""
    events: list = []
    for trick in tricks:
        for card in trick:
            seat = next(s for s in range(4) if card in state.round.hands[s])
            assert state.round.turn == seat, (card, seat, state.round.turn)
            state, ev = apply(state, seat, Action.play(card), now)
            events += ev
    return state, events


def hand_over(events: list) -> dict:
    (e,) = [e for e in events if e.type == "hand_over"]
    return e.data


def test_t14_t17_crown_hand_played_out_high_takes_13_low_takes_0() -> None:
    # Seat 0 holds every spade (High Crown, leads: dealer 3), seat 2 every diamond (Low).
    st, _ = start([SPADES, HEARTS, DIAMONDS, CLUBS], dealer=3)
    tricks = [[SPADES[i], HEARTS[i], DIAMONDS[i], CLUBS[i]] for i in range(13)]
    st, ev = play(st, tricks)
    d = hand_over(ev)
    assert d["kind"] == "crown" and d["roles"] == ["high", "team", "low", "team"]
    assert d["tricks"] == [13, 0, 0, 0] and d["tricks_played"] == 13 and d["early_end"] is None
    assert d["points"] == [2, 0, 3, 0] and st.scores == [2, 0, 3, 0]
    assert st.round_number == 2  # T26: the next hand is dealt at once


# A Double Stakes hand (seat 0: A♠ and 2♦) whose every trick is scripted:
DS_FAIL_HANDS = [
    ["AS", "KS", "QS", "JS", "2D", "9C", "8C", "7C", "6C", "5C", "4C", "3C", "2C"],
    HEARTS,
    [*DIAMONDS[:12], "TC"],
    ["TS", "9S", "8S", "7S", "6S", "5S", "4S", "3S", "2S", "AC", "KC", "QC", "JC"],
]
DS_FAIL_TRICKS = [
    ["AS", "AH", "TC", "TS"],
    ["KS", "KH", "3D", "9S"],
    ["QS", "QH", "4D", "8S"],
    ["JS", "JH", "5D", "7S"],
    ["2D", "TH", "6D", "6S"],  # seat 2's 6♦ beats the 2♦: seat 2 leads from here on
    *[
        [d, s, c, h]
        for d, s, c, h in zip(
            ["7D", "8D", "9D", "TD", "JD", "QD", "KD", "AD"],
            ["5S", "4S", "3S", "2S", "AC", "KC", "QC", "JC"],
            ["9C", "8C", "7C", "6C", "5C", "4C", "3C", "2C"],
            ["9H", "8H", "7H", "6H", "5H", "4H", "3H", "2H"],
            strict=True,
        )
    ],
]


@pytest.mark.parametrize(("memo", "each"), [("low", 8), ("high", 2)])
def test_t18_double_stakes_fails_at_4_tricks_each_opponent_scores_by_the_memo(
    memo: str, each: int
) -> None:
    st, ev = start(DS_FAIL_HANDS, dealer=3)
    assert ev[0].data["double_stakes"] == 0
    st, ev = apply(st, 0, Action.declare("NT", memo), 0)
    st, ev = play(st, DS_FAIL_TRICKS)
    d = hand_over(ev)
    assert d["roles"] == DS0 and d["memo"] == memo and d["trumps"] == "NT"
    assert d["tricks"] == [4, 0, 9, 0] and d["tricks_played"] == 13
    assert d["points"] == [0, each, each, each]
    assert d["reasons"][0][0]["code"] == "double_failed"


def test_t15_double_stakes_hand_stops_at_the_fifth_trick() -> None:
    # Seat 0 (DS, on lead) runs A♥-T♥ at no-trump: the hand stops after trick 5 (T15).
    hands = [
        ["AS", "2D", "AH", "KH", "QH", "JH", "TH", "9H", "8H", "7H", "6H", "5H", "4H"],
        ["3H", *SPADES[1:]],
        ["2H", *DIAMONDS[:12]],
        CLUBS,
    ]
    st, _ = start(hands, dealer=3)
    st, _ = apply(st, 0, Action.declare("NT", "low"), 0)
    tricks = [
        ["AH", "3H", "2H", "AC"],
        ["KH", "KS", "AD", "KC"],
        ["QH", "QS", "KD", "QC"],
        ["JH", "JS", "QD", "JC"],
    ]
    st, ev = play(st, tricks)
    assert not [e for e in ev if e.type == "hand_over"] and st.round.taken[0] == 4
    st, ev = play(st, [["TH", "TS", "JD", "TC"]])
    d = hand_over(ev)
    assert d["early_end"] == "five_tricks" and d["tricks_played"] == 5
    assert d["tricks"] == [5, 0, 0, 0] and d["points"] == [5, 0, 0, 0]
    # T20: the cards nobody played are revealed
    assert d["unplayed"][0] == ["AS", "9H", "8H", "7H", "6H", "5H", "4H", "2D"]
    assert sum(len(h) for h in d["unplayed"]) == 32
    assert st.round_number == 2 and st.scores == [5, 0, 0, 0]


def test_x1_te6_spade_trumps_success_certain_once_the_spades_are_known_to_be_all_hers() -> None:
    # Seat 0 (DS) holds 12 spades + 2♦ with spades trumps.  After trick 2 all three opponents
    # have shown void in spades: every unplayed spade is publicly hers, each a sure trick, so
    # success is certain and the original's §8 ends the hand -- before the 5th trick (X1).
    hands = [
        [*SPADES[:12], "2D"],
        ["2S", *HEARTS[:12]],
        [*DIAMONDS[:12], "2H"],
        CLUBS,
    ]
    st, _ = start(hands, dealer=3)
    st, _ = apply(st, 0, Action.declare("S", "high"), 0)
    st, ev = play(st, [["AS", "2S", "AD", "AC"]])
    assert st.round.number == 1  # seat 1 has not shown void yet: nothing is certain
    st, ev = play(st, [["KS", "AH", "KD", "KC"]])
    d = hand_over(ev)
    assert d["early_end"] == "sure_tricks" and d["tricks_played"] == 2
    assert d["tricks"] == [2, 0, 0, 0] and d["points"] == [5, 0, 0, 0]


ZERO_HANDS = [
    HEARTS,
    [*SPADES[:12], "2D"],  # seat 1: DS, never on lead, never able to follow hearts
    ["2S", *DIAMONDS[:12]],
    CLUBS,
]


def test_t10_t18_double_stakes_succeeds_with_0_tricks_over_13() -> None:
    st, _ = start(ZERO_HANDS, dealer=3)
    st, _ = apply(st, 1, Action.declare("NT", "high"), 0)
    discards = ["AS", "2D", *SPADES[1:12]]
    tricks = [
        [HEARTS[i], discards[i], DIAMONDS[i] if i < 12 else "2S", CLUBS[i]] for i in range(13)
    ]
    st, ev = play(st, tricks)
    d = hand_over(ev)
    assert d["tricks"] == [13, 0, 0, 0] and d["tricks_played"] == 13 and d["early_end"] is None
    assert d["points"] == [0, 5, 0, 0]
    assert d["reasons"][1][0] == {
        "code": "double_made",
        "tricks": 0,
        "achieved": "low",
        "memo": "high",
        "points": 5,
    }


def test_x1_te6_zero_tricks_certain_when_her_last_cards_are_known_and_cannot_win() -> None:
    # Seat 1 keeps A♠ and 2♦ (publicly hers) to the end; once every other spade is gone and
    # those two are all she holds, no trick can fall to her: the hand ends after trick 11.
    st, _ = start(ZERO_HANDS, dealer=3)
    st, _ = apply(st, 1, Action.declare("NT", "low"), 0)
    seat2 = ["2S", *DIAMONDS[:12]]
    tricks = [[HEARTS[i], SPADES[1 + i], seat2[i], CLUBS[i]] for i in range(11)]
    st, ev = play(st, tricks[:10])
    assert st.round.number == 1
    st, ev = play(st, tricks[10:])
    d = hand_over(ev)
    assert d["early_end"] == "cannot_win" and d["tricks_played"] == 11
    assert d["unplayed"][1] == ["AS", "2D"] and d["points"] == [0, 5, 0, 0]
