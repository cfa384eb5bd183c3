"""The two pure scoring functions (rules/cribbage.md C11, C13-C19), on hand-worked cases.

Every expected value below was counted by hand, item by item, the way players count."""

from __future__ import annotations

import doctest
import importlib

import pytest
from cribbage_support import cards

from games.engines.cribbage import score_hand, score_pegging


def kinds(hs) -> dict[str, int]:
    return {
        "fifteens": sum(i.points for i in hs.fifteens),
        "pairs": sum(i.points for i in hs.pairs),
        "runs": sum(i.points for i in hs.runs),
        "flush": hs.flush.points if hs.flush else 0,
        "nobs": hs.nobs.points if hs.nobs else 0,
    }


# ---- the show ----------------------------------------------------------------------------
def test_c19_the_29_hand() -> None:
    hs = score_hand(cards("5C 5D 5H JS"), "5S", is_crib=False)
    assert hs.total == 29
    assert kinds(hs) == {"fifteens": 16, "pairs": 12, "runs": 0, "flush": 0, "nobs": 1}
    # eight fifteens: J with each of the four fives, and each of the four sets of three fives
    assert len(hs.fifteens) == 8
    assert sorted(len(f.cards) for f in hs.fifteens) == [2, 2, 2, 2, 3, 3, 3, 3]
    assert hs.nobs is not None and hs.nobs.cards == ("JS",)


def test_c6_c18_the_28_hand_a_jack_starter_is_never_nobs() -> None:
    hs = score_hand(cards("5C 5D 5H 5S"), "JC", is_crib=False)
    assert hs.total == 28
    assert kinds(hs) == {"fifteens": 16, "pairs": 12, "runs": 0, "flush": 0, "nobs": 0}


def test_c19_the_ruling_check_as_hand_and_as_crib() -> None:
    hand = score_hand(cards("4H 5H 6H JH"), "5S", is_crib=False)
    assert hand.total == 20
    assert kinds(hand) == {"fifteens": 8, "pairs": 2, "runs": 6, "flush": 4, "nobs": 0}
    crib = score_hand(cards("4H 5H 6H JH"), "5S", is_crib=True)
    assert crib.total == 16 and crib.flush is None


def test_c16_double_run() -> None:
    # 3-4-4-5 twice (6), the pair of fours (2), 5+K (2) = 10
    hs = score_hand(cards("3C 4D 4H 5S"), "KC", is_crib=False)
    assert kinds(hs) == {"fifteens": 2, "pairs": 2, "runs": 6, "flush": 0, "nobs": 0}
    assert hs.total == 10
    assert sorted(r.cards for r in hs.runs) == [("3C", "4D", "5S"), ("3C", "4H", "5S")]


def test_c16_triple_run() -> None:
    # 3-3-3-4-5: three runs of three (9), pair royal (6), 3+3+4+5 three ways (6) = 21
    hs = score_hand(cards("3C 3D 3H 4S"), "5C", is_crib=False)
    assert kinds(hs) == {"fifteens": 6, "pairs": 6, "runs": 9, "flush": 0, "nobs": 0}
    assert hs.total == 21


def test_c16_double_double_run() -> None:
    # 3-3-4-4-5: four runs (12), two pairs (4), 3+3+4+5 with either four (4) = 20
    hs = score_hand(cards("3C 3D 4H 4S"), "5C", is_crib=False)
    assert kinds(hs) == {"fifteens": 4, "pairs": 4, "runs": 12, "flush": 0, "nobs": 0}
    assert hs.total == 20


def test_c16_double_run_of_four() -> None:
    # 3-4-5-6-6: two runs of four (8), the sixes (2), 4+5+6 twice and 3+6+6 (6) = 16
    hs = score_hand(cards("3C 4D 5H 6S"), "6C", is_crib=False)
    assert kinds(hs) == {"fifteens": 6, "pairs": 2, "runs": 8, "flush": 0, "nobs": 0}
    assert hs.total == 16


def test_c16_run_of_five_scores_five_not_its_shorter_runs() -> None:
    # 3-4-5-6-7: run of five (5), 4+5+6 and 3+5+7 (4) = 9
    hs = score_hand(cards("3C 4D 5H 6S"), "7C", is_crib=False)
    assert [len(r.cards) for r in hs.runs] == [5]
    assert hs.total == 9


def test_c16_c2_queen_king_ace_is_no_run() -> None:
    hs = score_hand(cards("QC KD AH 7S"), "2C", is_crib=False)
    assert hs.runs == ()


def test_c17_four_card_flush_in_the_hand_but_not_in_the_crib() -> None:
    # all even values: no fifteen is possible; no pair, no run
    hand = score_hand(cards("2H 4H 6H 8H"), "KC", is_crib=False)
    assert hand.total == 4 and hand.flush is not None and hand.flush.points == 4
    assert hand.flush.cards == ("2H", "4H", "6H", "8H")
    crib = score_hand(cards("2H 4H 6H 8H"), "KC", is_crib=True)
    assert crib.total == 0 and crib.flush is None


def test_c17_five_card_flush_in_hand_and_crib() -> None:
    for is_crib in (False, True):
        hs = score_hand(cards("2H 4H 6H 8H"), "KH", is_crib=is_crib)
        assert hs.total == 5 and hs.flush is not None and len(hs.flush.cards) == 5


def test_c17_three_hand_cards_and_the_starter_are_no_flush() -> None:
    assert score_hand(cards("2H 4H 6H 8C"), "KH", is_crib=False).flush is None


def test_c18_nobs_alone() -> None:
    # J A 3 7 + 9: no fifteen, pair or run; the jack of hearts with a heart starter: 1
    hs = score_hand(cards("JH AC 3D 7S"), "9H", is_crib=False)
    assert hs.total == 1 and hs.nobs is not None and hs.nobs.cards == ("JH",)
    assert score_hand(cards("JH AC 3D 7S"), "9C", is_crib=False).total == 0


def test_c14_a_nineteen_hand_scores_nothing() -> None:
    hs = score_hand(cards("2C 4D 6H 8S"), "KC", is_crib=False)
    assert hs.total == 0 and hs.items == ()
    assert hs.spoken() == "nineteen (nothing)"


def test_c21_ce17_spoken_count_and_json_breakdown() -> None:
    hs = score_hand(cards("5C 5D 9H KS"), "AC", is_crib=False)
    # 5+K, 5+K, 5+9+A, 5+9+A (8), the fives (2) = 10
    assert hs.total == 10
    assert hs.spoken() == "fifteen two, fifteen four, fifteen six, fifteen eight, and a pair is ten"
    j = hs.to_json()
    assert j["total"] == 10 and j["starter"] == "AC" and j["cards"] == cards("5C 5D 9H KS")
    assert j["pairs"] == [{"kind": "pair", "points": 2, "cards": ["5C", "5D"]}]


def test_c13_bad_input_is_refused() -> None:
    with pytest.raises(ValueError):
        score_hand(cards("5C 5D 5H"), "5S", is_crib=False)
    with pytest.raises(ValueError):
        score_hand(cards("5C 5D 5H 5S"), "5S", is_crib=False)
    with pytest.raises(ValueError):
        score_hand(cards("5C 5D 5H XX"), "5S", is_crib=False)


# ---- the play ----------------------------------------------------------------------------
def peg(s: str) -> list[tuple[str, int]]:
    return [(i.kind, i.points) for i in score_pegging(cards(s)).items]


def test_c11a_fifteen() -> None:
    assert peg("7C 8D") == [("fifteen", 2)]
    assert score_pegging(cards("7C 8D")).count == 15


def test_c11b_thirty_one() -> None:
    assert peg("TC JD AH KS") == [("thirty_one", 2)]


def test_c11c_pair_pair_royal_double_pair_royal() -> None:
    assert peg("4C 4D") == [("pair", 2)]
    assert peg("4C 4D 4H") == [("pair_royal", 6)]
    assert peg("7C 7D 7H 7S") == [("double_pair_royal", 12)]
    assert score_pegging(cards("7C 7D 7H 7S")).count == 28


def test_c11_examples_of_the_ruling() -> None:
    assert score_pegging(cards("4C 6D 5H")).points == 5  # fifteen + run of three
    assert score_pegging(cards("5C 5D")).points == 2
    assert peg("5C 5D 5H") == [("fifteen", 2), ("pair_royal", 6)]  # 8
    assert [score_pegging(cards("7C 7D 7H 7S")[:n]).points for n in (2, 3, 4)] == [2, 6, 12]


def test_c11c_only_an_unbroken_tail_pairs() -> None:
    assert peg("4C 4D 9H 4S") == []


def test_c11d_runs_played_out_of_order() -> None:
    assert peg("5C 3D 4H 6S") == [("run", 4)]  # 3-4-6 alone is no run, but 5-3-4-6 is
    assert peg("2C 4D 3H") == [("run", 3)]
    assert peg("4C 2D 5H 3S AC") == [("fifteen", 2), ("run", 5)]
    assert peg("3C 4D 4H 5S") == []  # the second four breaks it
    assert peg("QC KD AH") == []  # no wrapping


def test_c11d_a_run_then_a_card_that_extends_it_again() -> None:
    assert peg("2C 3D 4H") == [("run", 3)]
    assert peg("2C 3D 4H AS") == [("run", 4)]


def test_c11_the_last_card_point_is_not_a_card_combination() -> None:
    assert peg("TC TD") == [("pair", 2)]  # count 20: nothing about last card here
    with pytest.raises(ValueError):
        score_pegging(cards("TC TD TH KS"))  # 40: a count never passes 31
    with pytest.raises(ValueError):
        score_pegging([])


@pytest.mark.parametrize(
    "module",
    [
        "cards",
        "scoring",
        "actions",
        "state",
        "host",
        "deadlines",
        "rules",
        "views",
        "replay",
        "stats",
        "notation",
    ],
)
def test_c11_c13_doctests_of_the_engine(module: str) -> None:
    mod = importlib.import_module(f"games.engines.cribbage.{module}")
    result = doctest.testmod(mod, optionflags=doctest.ELLIPSIS)
    assert result.failed == 0


def test_c11_c13_docs_engine_md_cribbage_section_examples_run() -> None:
    """The examples in docs/ENGINE.md's "Cribbage's engine" section are doctests."""
    from pathlib import Path

    text = (Path(__file__).parents[3] / "docs" / "ENGINE.md").read_text()
    section = text[text.index("# Cribbage's engine") :]
    parser = doctest.DocTestParser()
    test = parser.get_doctest(section, {}, "ENGINE.md#cribbage", "docs/ENGINE.md", 0)
    assert test.examples, "the section lost its examples"
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    runner.run(test)
    assert runner.failures == 0
