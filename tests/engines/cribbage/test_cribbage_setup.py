"""Settings, the lobby menu, new_game, the cut for the first deal, wire forms and the state's
JSON round trip (rules/cribbage.md C1, C3, C4, C25; CE1-CE4)."""

from __future__ import annotations

import json

import pytest
from cribbage_support import T0, cards, game, stacked

from games.engines import engine_for
from games.engines.base import PACE_PROPERTIES
from games.engines.cribbage import (
    FULL_DECK,
    SETTINGS_SCHEMA,
    Action,
    GameState,
    IllegalAction,
    Settings,
    cut_for_deal,
    host_settings,
    new_game,
    rank,
    view,
    winners_on_scores,
)


def test_c1_c25_registry_finds_the_engine() -> None:
    eng = engine_for("cribbage")
    assert (eng.KIND, eng.NAME, eng.MIN_SEATS, eng.MAX_SEATS) == ("cribbage", "Cribbage", 2, 2)
    assert eng.ROUND_END_EVENT == "hand_over"


def test_c25_the_lobby_menu_is_the_time_per_move_only() -> None:
    assert SETTINGS_SCHEMA["type"] == "object" and SETTINGS_SCHEMA["additionalProperties"] is False
    # The platform's pace (issue 26) is every game's, beside C25's own menu.
    (name,) = [n for n in SETTINGS_SCHEMA["properties"] if n not in PACE_PROPERTIES]
    prop = SETTINGS_SCHEMA["properties"][name]
    assert name == "move_seconds" and prop["enum"] == [None, 30, 60] and prop["default"] is None
    assert {"title", "description", "default"} <= set(prop)
    json.dumps(SETTINGS_SCHEMA)
    assert host_settings({}) == Settings(move_seconds=None, target_score=121)
    assert host_settings({"move_seconds": 60}).move_seconds == 60
    for bad in (
        {"move_seconds": 45},
        {"move_seconds": True},
        {"move_seconds": "30"},
        {"target_score": 61},
        {"x": 1},
    ):
        with pytest.raises(IllegalAction) as e:
            host_settings(bad)
        assert e.value.code == "bad_settings"


def test_ce1_settings_validate_and_round_trip_never_type_error() -> None:
    s = Settings(move_seconds=1, target_score=31)
    assert Settings.from_json(s.to_json()) == s
    for bad in (
        None,
        [],
        {"move_seconds": 0},
        {"move_seconds": 1.5},
        {"target_score": 0},
        {"target_score": True},
        {"colour": "red"},
        {"move_seconds": None, "x": 1},
    ):
        with pytest.raises(IllegalAction) as e:
            Settings.from_json(bad)
        assert e.value.code == "bad_settings"


def test_c1_two_seats_only_and_new_game_validates() -> None:
    for kwargs in (
        {"seats": 3},
        {"seats": 1},
        {"seats": True},
        {"seed": ""},
        {"now": 1.5},
        {"settings": {}},
        {"decks": [FULL_DECK[:51]]},
        {"decks": [["XX"] * 52]},
        {"decks": [[*FULL_DECK[:51], "AC"]]},
        {"decks": 5},
    ):
        args = {"seats": 2, "settings": Settings(), "seed": "s", "now": T0, **kwargs}
        with pytest.raises(IllegalAction) as e:
            new_game(**args)
        assert e.value.code == "bad_settings"


def test_c3_the_higher_card_deals_and_all_cuts_are_public() -> None:
    seen = set()
    for i in range(200):
        cuts, dealer = cut_for_deal(f"cut-{i}")
        a, b = cuts[-1]
        assert rank(a) != rank(b)
        assert dealer == (0 if rank(a) > rank(b) else 1)  # the original: the HIGHER card deals
        assert all(rank(x) == rank(y) for x, y in cuts[:-1])  # earlier attempts tied
        seen.add(dealer)
    assert seen == {0, 1}
    st, ev = new_game(seats=2, settings=Settings(), seed="cut-7", now=T0)
    cut_ev = ev[0]
    assert cut_ev.type == "cut_for_deal" and cut_ev.data["cuts"] == cut_for_deal("cut-7")[0]
    assert ev[1].data["dealer"] == cut_ev.data["dealer"] == st.first_dealer
    for seat in (0, 1, None):
        assert view(st, seat, T0)["cut_for_deal"] == {
            "cuts": cut_ev.data["cuts"],
            "dealer": st.first_dealer,
        }


def test_c3_equal_ranks_cut_again() -> None:
    seed = next(s for s in (f"tie-{i}" for i in range(5000)) if len(cut_for_deal(s)[0]) > 1)
    cuts, dealer = cut_for_deal(seed)
    assert rank(cuts[0][0]) == rank(cuts[0][1]) and rank(cuts[-1][0]) != rank(cuts[-1][1])
    st, _ = new_game(seats=2, settings=Settings(), seed=seed, now=T0)
    assert st.cuts == cuts and st.first_dealer == dealer


def test_ce2_seeded_games_are_deterministic_and_decks_stack_hands() -> None:
    a, ev_a = new_game(seats=2, settings=Settings(), seed="same", now=T0)
    b, ev_b = new_game(seats=2, settings=Settings(), seed="same", now=T0)
    assert a.to_json() == b.to_json() and [e.to_json() for e in ev_a] == [e.to_json() for e in ev_b]
    c, _ = new_game(seats=2, settings=Settings(), seed="other", now=T0)
    assert c.round.deck != a.round.deck
    assert sorted(a.round.deck) == sorted(FULL_DECK)
    deck = stacked(pone=cards("AC 2C 3C 4C 5C 6C"), dealer=cards("AD 2D 3D 4D 5D 6D"), starter="KS")
    st, _ = game([deck], dealer=1)
    assert st.round.dealer == 1 and st.round.hands == [
        cards("AC 2C 3C 4C 5C 6C"),
        cards("AD 2D 3D 4D 5D 6D"),
    ]


def test_ce4_state_round_trips_exactly_through_json() -> None:
    st, _ = game(dealer=0, settings=Settings(move_seconds=30))
    d = st.to_json()
    assert GameState.from_json(json.loads(json.dumps(d))).to_json() == d
    assert (st.status, st.round_number, st.scores, st.winners, st.seats) == (
        "playing",
        1,
        [0, 0],
        [],
        2,
    )


def test_ce5_wire_actions_round_trip_and_malformed_ones_are_refused() -> None:
    for a in (Action.lay_away("KS", "2H"), Action.play("TD")):
        assert Action.from_wire(a.to_wire()) == a
    assert Action.from_wire({"type": "lay_away", "cards": ["KS", "2H"]}).cards == ("2H", "KS")
    for bad in (
        None,
        [],
        {"type": "go"},
        {"type": "play"},
        {"type": "play", "card": "10D"},
        {"type": "play", "card": "TD", "x": 1},
        {"type": "lay_away", "cards": ["KS"]},
        {"type": "lay_away", "cards": "KS 2H"},
        {"type": "lay_away", "cards": ["KS", "KS"]},
        {"type": "lay_away", "cards": ["KS", 3]},
    ):
        with pytest.raises(IllegalAction) as e:
            Action.from_wire(bad)
        assert e.value.code == "bad_action"


def test_s2_ce15_winners_on_scores_highest_wins() -> None:
    assert winners_on_scores([100, 99]) == [0]
    assert winners_on_scores([0, 3]) == [1]
    assert winners_on_scores([50, 50]) == [0, 1]
