"""The hand through the engine: lay-away, starter, his heels, the play (go, last card, 31,
resets, leads), the show in order, and the end of the game at 121 (rules/cribbage.md §3,
C5-C12, C20-C22, C28; engine decisions CE*)."""

from __future__ import annotations

import pytest
from cribbage_support import (
    T0,
    cards,
    game,
    lay,
    lowest_first,
    of_type,
    play,
    run_plays,
    scoring,
    stacked,
    types,
    with_scores,
)

from games.engines.cribbage import Action, IllegalAction, apply, legal_actions

# Hand A -- dealer seat 0, pone seat 1.  Kept: pone KC QC TC 5H, dealer KD QD 5D 9S.
HAND_A = stacked(pone=cards("KC QC TC 5H 2C 3C"), dealer=cards("KD QD 5D 9S 2D 3D"), starter="7S")
# Hand B -- dealer 0.  Kept: pone 5H 8D 9S JC, dealer 9H TS QS KS; starter 8S.
HAND_B = stacked(pone=cards("5C 5H 8D 9S JC JH"), dealer=cards("4S 9H TS JS QS KS"), starter="8S")
PLAYS_B = [(1, "5H"), (0, "9H"), (1, "8D"), (1, "9S"), (0, "TS"), (1, "JC"), (0, "QS"), (0, "KS")]


def laid(deck, *, dealer_discards, pone_discards, scores=None):
    st, _ = game([deck], dealer=0)
    if scores is not None:
        st = with_scores(st, scores)
    st, ev1 = lay(st, 0, *dealer_discards)
    st, ev2 = lay(st, 1, *pone_discards)
    return st, ev1 + ev2


def hand_a(scores=None):
    return laid(HAND_A, dealer_discards=("2D", "3D"), pone_discards=("2C", "3C"), scores=scores)


def hand_b(scores=None):
    return laid(HAND_B, dealer_discards=("4S", "JS"), pone_discards=("5C", "JH"), scores=scores)


# ---- deal and lay-away -------------------------------------------------------------------
def test_c4_six_each_alternately_pone_first_and_c2_hand_order() -> None:
    st, ev = game([HAND_A], dealer=0)
    assert st.round.hands[1] == cards("2C 3C 5H TC QC KC")  # the pone: deck[0], [2], ...
    assert st.round.hands[0] == cards("2D 3D 5D 9S QD KD")
    dealt = of_type(ev, "round_dealt")[0]
    assert (dealt["dealer"], dealt["pone"], dealt["round"], dealt["at"]) == (0, 1, 1, T0)
    assert dealt["deck"] == HAND_A


def test_c5_lay_away_in_either_order_gives_the_same_table() -> None:
    st, _ = game([HAND_A], dealer=0)
    a, _ = apply(st, 0, Action.lay_away("2D", "3D"), T0)
    a, _ = apply(a, 1, Action.lay_away("3C", "2C"), T0)
    b, _ = apply(st, 1, Action.lay_away("2C", "3C"), T0)
    b, _ = apply(b, 0, Action.lay_away("3D", "2D"), T0)
    assert a.to_json() == b.to_json()
    assert a.round.discards == [cards("2D 3D"), cards("2C 3C")]


def test_c5_a_lay_away_is_final_and_only_of_own_cards() -> None:
    st, _ = game([HAND_A], dealer=0)
    with pytest.raises(IllegalAction) as e:
        lay(st, 0, "2C", "3D")  # 2C is the pone's
    assert e.value.code == "not_in_hand" and "2C" not in e.value.reason
    st2, _ = lay(st, 0, "2D", "3D")
    with pytest.raises(IllegalAction) as e:
        lay(st2, 0, "5D", "9S")
    assert e.value.code == "already_laid_away"
    assert legal_actions(st2, 0, T0) == [] and len(legal_actions(st2, 1, T0)) == 15
    with pytest.raises(IllegalAction) as e:
        play(st2, 1, "KC")
    assert e.value.code == "wrong_phase"


def test_c6_ce3_starter_is_cut_once_both_have_laid_away_and_the_pone_leads() -> None:
    st, ev = hand_a()
    assert types(ev) == ["laid_away", "laid_away", "starter_cut", "turn"]
    assert of_type(ev, "starter_cut")[0]["card"] == "7S" == st.round.starter
    assert st.round.turn == 1 and of_type(ev, "turn")[0]["seat"] == 1
    with pytest.raises(IllegalAction) as e:
        lay(st, 1, "KC", "QC")
    assert e.value.code == "wrong_phase"


def test_c6_his_heels_two_to_the_dealer_at_once_before_the_play() -> None:
    deck = stacked(pone=cards("KC QC TC 5H 2C 3C"), dealer=cards("KD QD 5D 9S 2D 3D"), starter="JH")
    st, ev = laid(deck, dealer_discards=("2D", "3D"), pone_discards=("2C", "3C"))
    assert types(ev) == ["laid_away", "laid_away", "starter_cut", "his_heels", "turn"]
    heels = of_type(ev, "his_heels")[0]
    assert (heels["seat"], heels["points"], heels["scored"], heels["card"]) == (0, 2, 2, "JH")
    assert st.scores == [2, 0] and st.round.his_heels


def test_c6_c22_his_heels_can_win_the_game_before_the_play() -> None:
    deck = stacked(pone=cards("KC QC TC 5H 2C 3C"), dealer=cards("KD QD 5D 9S 2D 3D"), starter="JH")
    st, ev = laid(deck, dealer_discards=("2D", "3D"), pone_discards=("2C", "3C"), scores=[120, 100])
    assert types(ev)[-4:] == ["starter_cut", "his_heels", "hand_over", "game_over"]
    assert st.status == "finished" and st.winners == [0] and st.scores == [121, 100]
    assert of_type(ev, "his_heels")[0]["scored"] == 1  # C22: recorded as exactly 121
    over = of_type(ev, "hand_over")[0]
    assert over["complete"] is False and over["shows"] == []
    assert over["hands"] == [cards("5D 9S QD KD"), cards("5H TC QC KC")]  # C30g: now public


# ---- the play ----------------------------------------------------------------------------
def test_c7_ce14_the_pone_must_play_and_may_play_only_on_turn() -> None:
    st, _ = hand_a()
    assert [a.card for a in legal_actions(st, 1, T0)] == cards("5H TC QC KC")
    assert legal_actions(st, 0, T0) == []
    with pytest.raises(IllegalAction) as e:
        play(st, 0, "KD")
    assert e.value.code == "not_your_turn"
    with pytest.raises(IllegalAction) as e:
        play(st, 1, "KD")  # the dealer's card: refused like any card not held
    assert e.value.code == "not_in_hand" and "KD" not in e.value.reason


def test_s35_a_card_that_passes_31_is_refused_c7_and_not_offered() -> None:
    st, _ = hand_b()
    st, _ = run_plays(st, PLAYS_B[:3])  # 5 + 9 + 8 = 22; the dealer has only tens: go
    assert st.round.turn == 1 and st.round.go == [True, False]
    assert [a.card for a in legal_actions(st, 1, T0)] == ["9S"]  # JC would make 32
    with pytest.raises(IllegalAction) as e:
        play(st, 1, "JC")
    assert e.value.code == "over_thirty_one"


def test_c8_c9_c10_ce7_go_last_card_reset_and_a_pair_broken_by_the_reset() -> None:
    st, _ = hand_a()
    moves = [(1, "KC"), (0, "KD"), (1, "QC")]
    st, ev = run_plays(st, moves)
    # KD pairs KC (2 to the dealer); after QC (30) the dealer cannot play: go (C8), and the
    # pone cannot either: the count ends, 1 to the pone for last card (C9).
    assert types(ev) == [
        "play",
        "turn",
        "play",
        "turn",
        "play",
        "go",
        "last_card",
        "count_over",
        "turn",
    ]
    assert scoring(ev) == [("play", 0, 2), ("last_card", 1, 1)]
    assert of_type(ev, "go")[0] == {"round": 1, "seat": 0, "at": T0, "count": 30}
    over = of_type(ev, "count_over")[0]
    assert (over["count"], over["last_seat"], over["next_lead"]) == (30, 1, 0)  # C10
    assert st.round.count == 0 and st.round.sequence == [] and st.round.turn == 0
    # The dealer leads QD: no pair with the pone's QC, which was before the reset (C11e).
    st, ev = play(st, 0, "QD")
    assert of_type(ev, "play")[0]["points"] == 0 and of_type(ev, "play")[0]["sequence"] == ["QD"]
    st, ev = run_plays(st, [(1, "TC"), (0, "5D"), (1, "5H")])
    assert scoring(ev) == [("play", 1, 2), ("last_card", 1, 1)]  # 5H pairs; the dealer's 9S goes
    assert of_type(ev, "go")[0]["seat"] == 0
    st, ev = play(st, 0, "9S")  # the dealer leads the last card alone
    assert types(ev)[:3] == ["play", "last_card", "count_over"]
    assert of_type(ev, "count_over")[0]["next_lead"] is None
    assert st.history[0][0] >= 3 and st.round_number == 2


def test_c9_thirty_one_scores_two_and_no_last_card_c10_next_lead_and_playing_on_alone() -> None:
    st, _ = hand_b()
    st, ev = run_plays(st, PLAYS_B[:4])
    play31 = of_type(ev, "play")[-1]
    assert play31["count"] == 31 and play31["items"][0]["kind"] == "thirty_one"
    assert "last_card" not in types(ev)
    assert of_type(ev, "count_over")[-1]["next_lead"] == 0  # the opponent of the 31's player
    st, ev = run_plays(st, PLAYS_B[4:7])  # TS JC QS: a run of three for the dealer at 30
    assert of_type(ev, "play")[-1]["items"] == [
        {"kind": "run", "points": 3, "cards": ["TS", "JC", "QS"]}
    ]
    # the pone is out of cards: go for them (C8), last card to the dealer, and since the
    # pone has no card to lead, the dealer leads again (C10)
    assert types(ev)[-4:] == ["go", "last_card", "count_over", "turn"]
    assert of_type(ev, "count_over")[-1] == {
        "round": 1,
        "at": T0,
        "count": 30,
        "last_seat": 0,
        "next_lead": 0,
    }
    st, ev = play(st, 0, "KS")
    assert scoring(ev)[:1] == [("last_card", 0, 1)]
    assert st.round_number == 2


def test_c20_the_show_pone_then_dealer_then_crib_and_c28_next_deal_at_once() -> None:
    st, _ = hand_b()
    st, ev = run_plays(st, PLAYS_B, now=T0 + 5)
    shows = of_type(ev, "show")
    assert [(s["what"], s["seat"], s["points"]) for s in shows] == [
        ("pone", 1, 4),
        ("dealer", 0, 3),
        ("crib", 0, 7),
    ]
    assert shows[2]["cards"] == cards("4S 5C JH JS") and shows[2]["breakdown"]["nobs"] == {
        "kind": "nobs",
        "points": 1,
        "cards": ["JS"],
    }
    assert types(ev)[-2:] == ["hand_over", "round_dealt"]
    over = of_type(ev, "hand_over")[0]
    assert over["complete"] and over["points"] == [5 + 3 + 7, 2 + 4]
    assert over["pegged"] == [5, 2] and over["scores"] == st.scores == [15, 6]
    dealt = of_type(ev, "round_dealt")[0]
    assert (dealt["round"], dealt["dealer"], dealt["at"]) == (2, 1, T0 + 5)  # §3.9: alternates
    assert st.round.phase == "lay_away" and st.last_hand == over


# ---- the end of the game (C22) -------------------------------------------------------------
def test_c22_the_game_ends_at_121_in_the_middle_of_the_play() -> None:
    st, _ = hand_a(scores=[120, 119])
    st, ev = run_plays(st, [(1, "KC"), (0, "KD")])  # the dealer's pair: 2 points, 1 kept
    assert types(ev)[-3:] == ["play", "hand_over", "game_over"]
    pair = of_type(ev, "play")[-1]
    assert (pair["points"], pair["scored"], pair["scores"]) == (2, 1, [121, 119])
    assert st.status == "finished" and st.winners == [0] and st.scores == [121, 119]
    final = of_type(ev, "game_over")[0]
    assert final["winners"] == [0] and final["scores"] == [121, 119]
    assert final["result"] == "win"
    with pytest.raises(IllegalAction) as e:
        play(st, 1, "QC")
    assert e.value.code == "game_finished"
    assert legal_actions(st, 1, T0) == []


def test_c22_hand_over_counts_the_points_of_the_play_that_ends_the_game() -> None:
    """The hand cut short by 121 in the play files what each seat pegged *including* the play
    that ended it (issue 21, item 9: it said 0 for that play); the state's ``last_hand`` and its
    ``pegged`` agree with the event."""
    st, _ = hand_a(scores=[120, 119])
    st, ev = run_plays(st, [(1, "KC"), (0, "KD")])  # the dealer's pair scores 1 of its 2
    over = of_type(ev, "hand_over")[0]
    assert over["pegged"] == [1, 0] and over["points"] == [1, 0]
    assert st.last_hand["pegged"] == [1, 0] and st.round.pegged == [1, 0]


def test_c22_hand_over_counts_a_last_card_point_that_ends_the_game() -> None:
    """The same for the last-card point (C10): the pone at 120 plays its last card alone."""
    st, _ = hand_b(scores=[0, 120])
    # 9S, 9H (the dealer's pair: 2), JC to 28; the dealer's tens go, the pone's 5H/8D pass 31
    st, ev = run_plays(st, [(1, "9S"), (0, "9H"), (1, "JC")])
    assert types(ev)[-3:] == ["last_card", "hand_over", "game_over"]
    over = of_type(ev, "hand_over")[0]
    assert over["pegged"] == [2, 1] and st.scores == [2, 121]
    assert over["pegged"] == st.round.pegged == st.last_hand["pegged"]


def test_c20_c22_the_first_to_121_wins_though_the_other_would_get_there_later() -> None:
    # the pone (119) would reach 121 by the last card after QC, but the dealer's pair
    # comes first in the play
    st, _ = hand_a(scores=[119, 120])
    st, _ = run_plays(st, [(1, "KC"), (0, "KD")])
    assert st.winners == [0] and st.scores == [121, 120]


def test_c22_ce9_the_pone_at_115_counts_a_hand_and_wins_the_dealer_counts_nothing() -> None:
    # hand B: the pone pegs 2 and holds 4; the dealer pegs 5 (115 -> 120), then would count
    # 3 and a crib of 7, but the pone's hand is shown first (C20)
    st, _ = hand_b(scores=[115, 115])
    st, ev = run_plays(st, PLAYS_B)
    assert [s["what"] for s in of_type(ev, "show")] == ["pone"]
    assert types(ev)[-3:] == ["show", "hand_over", "game_over"]
    assert st.scores == [120, 121] and st.winners == [1]
    over = of_type(ev, "hand_over")[0]
    assert over["complete"] is False and over["crib"] == cards("4S 5C JH JS")  # C30g


def test_c22_the_crib_wins_and_keeps_its_full_breakdown() -> None:
    st, _ = hand_b(scores=[110, 0])  # 110 + 5 pegged + 3 hand = 118; the crib's 7 wins
    st, ev = run_plays(st, PLAYS_B)
    crib = of_type(ev, "show")[-1]
    assert (crib["what"], crib["points"], crib["scored"]) == ("crib", 7, 3)
    assert crib["breakdown"]["total"] == 7
    assert types(ev)[-3:] == ["show", "hand_over", "game_over"]
    assert of_type(ev, "hand_over")[0]["complete"] is True
    assert st.scores == [121, 6] and st.round_number == 1
    assert of_type(ev, "game_over")[0]["result"] == "double_skunk"  # C24: loser at 60 or less


def test_c24_ce18_skunk_labels() -> None:
    from games.engines.cribbage.rules import result_label

    assert [result_label(n) for n in (0, 60, 61, 90, 91, 120)] == [
        "double_skunk",
        "double_skunk",
        "skunk",
        "skunk",
        "win",
        "win",
    ]


def test_ce16_back_peg_is_where_the_front_peg_stood_before_its_last_move() -> None:
    st, _ = hand_a()
    st, _ = run_plays(st, [(1, "KC"), (0, "KD")])
    assert st.scores == [2, 0] and st.back_pegs == [0, 0]
    st, _ = run_plays(st, [(1, "QC")])  # + last card to the pone
    assert st.scores == [2, 1] and st.back_pegs == [0, 0]
    st, _ = lowest_first(st)
    assert st.back_pegs[0] <= st.scores[0]


def test_ce6_go_is_announced_once_per_count_and_never_after_the_final_card() -> None:
    st, _ = hand_b()
    st, ev = run_plays(st, PLAYS_B)
    assert [(g["seat"], g["count"]) for g in of_type(ev, "go")] == [(0, 22), (1, 30)]
    last_play = max(i for i, e in enumerate(ev) if e.type == "play")
    assert "go" not in types(ev[last_play:])
