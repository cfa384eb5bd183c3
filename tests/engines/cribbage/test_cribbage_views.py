"""Who sees what (C30): the state's views and the events' views, case by case.  The
Hypothesis machine (test_cribbage_machine.py) checks the same contract over random games."""

from __future__ import annotations

import json

from cribbage_support import T0, cards, game, lay, lowest_first, run_plays, stacked, with_scores

from games.engines.cribbage import Event, event_view, legal_actions, view

DECK = stacked(pone=cards("KC QC TC 5H 2C 3C"), dealer=cards("KD QD 5D 9S 2D 3D"), starter="7S")
STOCK = DECK[13:]

VIEW_KEYS = {
    "seat", "seats", "status", "winners", "scores", "round", "settings", "deadlines", "now",
    "target_score", "cut_for_deal", "dealer", "pone", "crib_owner", "phase", "hands",
    "hand_sizes", "laid_away", "lay_away_deadline", "crib_size", "crib", "starter", "his_heels",
    "played", "count", "sequence", "go", "turn", "pegged", "hand_points", "pegs", "shows",
    "last_hand", "history", "result", "awaiting",
}  # fmt: skip


def dumps(x: dict) -> str:
    """The JSON text of a view without its cut for deal (public cards of another shuffle, C3,
    which may repeat any code of this hand's deck)."""
    return json.dumps({k: v for k, v in x.items() if k != "cut_for_deal"}, sort_keys=True)


def test_c30b_the_deal_each_seat_sees_its_own_six_cards_only() -> None:
    st, ev = game([DECK], dealer=0)
    v0, v1, vs = view(st, 0, T0), view(st, 1, T0), view(st, None, T0)
    assert set(v0) == VIEW_KEYS | {"you"} and set(vs) == VIEW_KEYS
    assert v0["hands"] == [cards("2D 3D 5D 9S QD KD"), None]
    assert v1["hands"] == [None, cards("2C 3C 5H TC QC KC")]
    assert vs["hands"] == [None, None] and vs["hand_sizes"] == [6, 6]
    assert v0["you"] == {
        "can": ["lay_away"],
        "hand": cards("2D 3D 5D 9S QD KD"),
        "discards": None,
        "playable": [],
    }
    dealt = next(e for e in ev if e.type == "round_dealt")
    for seat in (0, 1, None):
        d = event_view(dealt, seat)["data"]
        assert set(d) == set(dealt.data) and d["deck"] is None  # C30d: never, to anyone
        assert d["hands"] == [dealt.data["hands"][s] if s == seat else None for s in (0, 1)]


def test_c30c_a_seat_keeps_seeing_its_crib_cards_the_others_only_that_it_laid_away() -> None:
    st, _ = game([DECK], dealer=0)
    st, ev = lay(st, 1, "2C", "3C")
    assert view(st, 1, T0)["you"]["discards"] == ["2C", "3C"]
    for seat in (0, None):
        v = view(st, seat, T0)
        assert v["laid_away"] == [False, True] and v["crib_size"] == 2 and v["crib"] is None
        assert "2C" not in dumps(v) and "3C" not in dumps(v)
        assert event_view(ev[0], seat)["data"]["cards"] is None
    assert event_view(ev[0], 1)["data"]["cards"] == ["2C", "3C"]
    st, _ = lay(st, 0, "2D", "3D")
    assert view(st, 1, T0)["you"]["discards"] == ["2C", "3C"]  # for the rest of the hand
    assert "2C" not in dumps(view(st, 0, T0)) and view(st, 0, T0)["crib"] is None


def test_c30d_e_the_starter_and_played_cards_are_public_unplayed_cards_are_not() -> None:
    st, _ = game([DECK], dealer=0)
    st, _ = lay(st, 1, "2C", "3C")
    st, _ = lay(st, 0, "2D", "3D")
    st, _ = run_plays(st, [(1, "KC"), (0, "KD")])
    vs = view(st, None, T0)
    assert vs["starter"] == "7S" and vs["played"] == [["KD"], ["KC"]]
    assert vs["sequence"] == [{"seat": 1, "card": "KC"}, {"seat": 0, "card": "KD"}]
    assert vs["count"] == 20 and vs["turn"]["seat"] == 1 and vs["pegged"] == [2, 0]
    assert vs["hand_sizes"] == [3, 3] and vs["hands"] == [None, None]
    text = dumps(vs)
    for hidden in cards("QC TC 5H QD 5D 9S 2C 3C 2D 3D") + STOCK:
        assert hidden not in text
    v1 = view(st, 1, T0)
    assert v1["you"]["playable"] == cards("5H TC QC") and v1["you"]["can"] == ["play"]
    assert [a.card for a in legal_actions(st, 1, T0)] == v1["you"]["playable"]


def test_c30f_ce20_the_crib_is_public_at_its_count_and_the_hand_summary_after() -> None:
    st, _ = game([DECK], dealer=0)
    st, _ = lay(st, 1, "2C", "3C")
    st, _ = lay(st, 0, "2D", "3D")
    st, ev = lowest_first(st)
    crib_show = next(e for e in ev if e.type == "show" and e.data["what"] == "crib")
    for seat in (0, 1, None):
        assert event_view(crib_show, seat)["data"]["cards"] == cards("2C 2D 3C 3D")
        last = view(st, seat, T0)["last_hand"]
        assert last["crib"] == cards("2C 2D 3C 3D") and last["round"] == 1
        # the new hand's cards are private again
        assert view(st, seat, T0)["crib"] is None


def test_c30g_ce10_at_the_end_of_the_game_the_crib_and_unplayed_cards_are_public_never_the_stock():
    st, _ = game([DECK], dealer=0)
    st = with_scores(st, [120, 0])
    st, lay1 = lay(st, 1, "2C", "3C")
    st, _ = lay(st, 0, "2D", "3D")
    st, ev = run_plays(st, [(1, "KC"), (0, "KD")])  # the dealer's pair wins
    for seat in (0, 1, None):
        v = view(st, seat, T0)
        assert v["status"] == "finished" and v["winners"] == [0] and v["result"] == "double_skunk"
        assert v["hands"] == [cards("5D 9S QD"), cards("5H TC QC")]
        assert v["crib"] == cards("2C 2D 3C 3D")
        assert v["awaiting"] == {"kind": "nothing", "seats": [], "deadline": None}
        assert v["deadlines"] == []
        text = dumps(v) + "".join(json.dumps(event_view(e, seat)) for e in ev)
        for hidden in STOCK:
            assert hidden not in text
    # CE10: who laid away which crib card stays hidden, even now
    assert event_view(lay1[0], 0)["data"]["cards"] is None
    assert event_view(lay1[0], None)["data"]["cards"] is None


def test_c30i_unknown_event_types_are_refused_not_passed_through() -> None:
    import pytest

    with pytest.raises(ValueError):
        event_view(Event("secret", {"at": 0, "card": "AS"}), 0)


def test_ce14_a_view_for_a_seat_that_does_not_exist_is_refused() -> None:
    import pytest

    from games.engines.cribbage import IllegalAction

    st, ev = game([DECK], dealer=0)
    for bad in (2, -1, True, "0"):
        with pytest.raises(IllegalAction) as e:
            view(st, bad, T0)  # type: ignore[arg-type]
        assert e.value.code == "bad_seat"
        with pytest.raises(IllegalAction):
            event_view(ev[1], bad)  # type: ignore[arg-type]
