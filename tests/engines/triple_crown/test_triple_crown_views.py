"""Redaction (T6, T20, T27): what each receiver sees in views and events, checked field by
field, plus non-interference -- changing what a receiver may not know changes nothing it sees.
"""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_triple_crown_scoring import CLUBS, DIAMONDS, DS_FAIL_HANDS, HEARTS, SPADES, play
from triple_crown_support import seed_for_dealer, stack, start

import games.engines.triple_crown as tc
from games.engines.triple_crown import (
    FULL_DECK,
    Action,
    Event,
    Settings,
    apply,
    event_view,
    new_game,
    view,
)

VIEW_KEYS = {
    "seat",
    "seats",
    "status",
    "winners",
    "scores",
    "round",
    "settings",
    "dealer",
    "kind",
    "double_stakes",
    "trumps",
    "phase",
    "leader",
    "turn",
    "move_deadline",
    "hands",
    "hand_sizes",
    "trick",
    "tricks",
    "taken",
    "history",
    "reveal",
    "last_hand",
    "deadlines",
    "now",
    "awaiting",
}


def test_t27a_b_view_keys_own_hand_and_own_role_only() -> None:
    st, _ = start([SPADES, HEARTS, DIAMONDS, CLUBS], dealer=3)
    for seat, role in enumerate(["high", "team", "low", "team"]):
        v = view(st, seat, 0)
        assert set(v) == VIEW_KEYS | {"you"}
        assert v["hands"][seat] == st.round.hands[seat]
        assert [h for s, h in enumerate(v["hands"]) if s != seat] == [None] * 3
        assert v["you"]["role"] == role and v["you"]["memo"] is None
        assert v["hand_sizes"] == [13] * 4
    spec = view(st, None, 0)
    assert set(spec) == VIEW_KEYS and spec["hands"] == [None] * 4
    assert "AS" not in str(spec) and "high" not in str(spec)


def test_t27b_te11_the_seat_on_turn_sees_its_legal_cards_others_nothing() -> None:
    st, _ = start([SPADES, HEARTS, DIAMONDS, CLUBS], dealer=3)
    assert view(st, 0, 0)["you"] == {
        "can": ["play"],
        "legal": SPADES,
        "role": "high",
        "memo": None,
    }
    assert view(st, 1, 0)["you"]["can"] == [] and view(st, 1, 0)["you"]["legal"] == []


def test_t27c_te10_memo_only_to_the_double_stakes_seat_trumps_to_everyone() -> None:
    st, _ = start(DS_FAIL_HANDS, dealer=3)
    st, ev = apply(st, 0, Action.declare("C", "low"), 0)
    (e,) = ev
    assert event_view(e, 0)["data"]["memo"] == "low"
    for r in (1, 2, 3, None):
        d = event_view(e, r)["data"]
        assert d["memo"] is None and d["trumps"] == "C" and set(d) == set(e.data)
        assert (view(st, r, 0).get("you") or {}).get("memo") is None
        assert view(st, r, 0)["trumps"] == "C"
    assert view(st, 0, 0)["you"]["memo"] == "low" and view(st, 0, 0)["you"]["role"] == "double"
    assert view(st, 2, 0)["you"]["role"] == "opponent"


def test_t27a_round_dealt_shows_each_seat_its_own_cards_and_nobody_the_deck() -> None:
    deck = list(FULL_DECK)
    st, (e,) = new_game(seats=4, settings=Settings(), seed=seed_for_dealer(0), now=0, decks=[deck])
    for r in (0, 1, 2, 3, None):
        d = event_view(e, r)["data"]
        assert d["deck"] is None
        assert [h is not None for h in d["hands"]] == [s == r for s in range(4)]
        if r is not None:
            assert d["hands"][r] == st.round.hands[r]
    assert e.data["deck"] == deck  # the full event keeps it for storage


def test_t27d_t20_te8_played_cards_and_tricks_public_reveal_public() -> None:
    st, _ = start([SPADES, HEARTS, DIAMONDS, CLUBS], dealer=3, settings=Settings(target_score=1))
    st, ev = play(st, [[SPADES[i], HEARTS[i], DIAMONDS[i], CLUBS[i]] for i in range(13)])
    for e in ev:
        if e.type != "round_dealt":
            assert event_view(e, None) == e.to_json() == event_view(e, 2)
    v = view(st, None, 0)
    assert v["reveal"]["roles"] == ["high", "team", "low", "team"]
    assert v["hands"] == [[], [], [], []] and v["tricks"][0]["cards"][0] == {
        "seat": 0,
        "card": "AS",
    }


def test_t20_reveal_after_an_early_end_shows_every_unplayed_card_to_everyone() -> None:
    hands = [
        [*SPADES[:12], "2D"],
        ["2S", *HEARTS[:12]],
        [*DIAMONDS[:12], "2H"],
        CLUBS,
    ]
    st, _ = start(hands, dealer=3, settings=Settings(target_score=5))
    st, _ = apply(st, 0, Action.declare("S", "high"), 0)
    st, _ = play(st, [["AS", "2S", "AD", "AC"], ["KS", "AH", "KD", "KC"]])
    assert st.status == "finished"
    for r in (0, 1, None):
        v = view(st, r, 0)
        assert v["hands"][3] == CLUBS[2:] and v["reveal"]["memo"] == "high"


def test_t27h_event_view_refuses_an_event_type_it_has_no_rule_for() -> None:
    with pytest.raises(ValueError):
        event_view(Event("surprise", {"at": 0}), None)


@st.composite
def swapped_deals(draw: st.DrawFn) -> tuple[list[list[str]], list[list[str]], int, int]:
    """Two deals identical for receiver ``r`` and in public facts, differing elsewhere: the
    hands of two other seats are exchanged (so, often, their roles)."""
    deck = draw(st.permutations(FULL_DECK))
    hands = [sorted(deck[s * 13 : s * 13 + 13]) for s in range(4)]
    r = draw(st.integers(0, 3))
    ds = next((s for s in range(4) if {"AS", "2D"} <= set(hands[s])), None)
    others = [s for s in range(4) if s not in (r, ds)]
    a, b = draw(st.permutations(others))[:2]
    other = [h[:] for h in hands]
    other[a], other[b] = hands[b], hands[a]
    return hands, other, r, draw(st.integers(0, 3))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(deal=swapped_deals())
def test_t27_non_interference_what_r_may_not_know_changes_nothing_r_sees(
    deal: tuple[list[list[str]], list[list[str]], int, int],
) -> None:
    hands, other, r, dealer = deal
    s1, e1 = start(hands, dealer=dealer)
    s2, e2 = start(other, dealer=dealer)
    for receiver in (r, None):
        assert view(s1, receiver, 0) == view(s2, receiver, 0)
        assert [event_view(e, receiver) for e in e1] == [event_view(e, receiver) for e in e2]
    # the same refusals for every card r might try
    for card in FULL_DECK:
        codes = []
        for s in (s1, s2):
            try:
                apply(s, r, Action.play(card), 0)
                codes.append(None)
            except tc.IllegalAction as exc:
                codes.append((exc.code, exc.reason))
        assert codes[0] == codes[1]


def test_te7_doctests_of_every_module() -> None:
    pkg = importlib.import_module("games.engines.triple_crown")
    names = [m.name for m in pkgutil.iter_modules(pkg.__path__)]
    assert {"rules", "scoring", "views", "cards", "host", "state", "actions"} <= set(names)
    for name in names:
        mod = importlib.import_module(f"games.engines.triple_crown.{name}")
        result = doctest.testmod(mod, optionflags=doctest.ELLIPSIS)
        assert result.failed == 0, name


def test_te1_stack_helper_matches_the_deal() -> None:
    hands = [SPADES, HEARTS, DIAMONDS, CLUBS]
    for dealer in range(4):
        st, _ = new_game(
            seats=4,
            settings=Settings(),
            seed=seed_for_dealer(dealer),
            now=0,
            decks=[stack(hands, dealer)],
        )
        assert [sorted(h) for h in st.round.hands] == [sorted(h) for h in hands]
