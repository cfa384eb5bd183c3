"""rules/crisp.md sections 1-3 and rulings R1, R2, R3, R14 (targets), R16, R17, R27: the table, the
deal, the opening look, card values."""

from __future__ import annotations

import pytest
from engine_support import Table, of_type, seed_for_dealer, stack_deck, types

from games.engines.crisp import (
    FULL_DECK,
    IllegalAction,
    Settings,
    apply,
    card_value,
    event_view,
    hand_total,
    is_card,
    new_game,
    pending_deadlines,
)
from games.engines.crisp.rules import deck_for, first_dealer_for


# Section 1 --------------------------------------------------------------------------------------
@pytest.mark.parametrize("seats", range(2, 9))
def test_s1_two_to_eight_seats_one_52_card_deck(seats):
    st, _ = new_game(seats=seats, settings=Settings(), seed="x", now=0)
    r = st.round
    cards = r.deck + r.pile + [c for h in r.hands for c in h]
    assert sorted(cards) == sorted(FULL_DECK) and len(FULL_DECK) == 52
    assert st.seats == seats and st.scores == [0] * seats


@pytest.mark.parametrize("seats", [0, 1, 9, "3", None])
def test_s1_other_seat_counts_refused(seats):
    with pytest.raises(IllegalAction) as e:
        new_game(seats=seats, settings=Settings(), seed="x", now=0)
    assert e.value.code == "bad_settings"


def test_s1_explicit_decks_must_be_the_52_cards():
    deck = list(FULL_DECK)
    for bad in (deck[:-1], [*deck[:-1], deck[0]], [*deck[:-1], "XX"]):
        with pytest.raises(IllegalAction) as e:
            new_game(seats=2, settings=Settings(), seed="x", now=0, decks=[bad])
        assert e.value.code == "bad_settings"


# Section 2, R1, R27 ----------------------------------------------------------------------------
def test_r1_deal_from_dealers_left_left_centre_right():
    # 4 seats, dealer 2: seat 3 gets the 1st, 5th, 9th cards (left, centre, right).
    deck = list(FULL_DECK)
    st, ev = new_game(seats=4, settings=Settings(), seed=seed_for_dealer(4, 2), now=0, decks=[deck])
    r = st.round
    assert r.dealer == 2
    assert r.hands[3] == [deck[0], deck[4], deck[8]]
    assert r.hands[0] == [deck[1], deck[5], deck[9]]
    assert r.hands[1] == [deck[2], deck[6], deck[10]]
    assert r.hands[2] == [deck[3], deck[7], deck[11]]  # the dealer is dealt last
    assert r.deck == deck[12:]  # the rest is the deck, top first
    assert r.pile == []
    assert ev[0].type == "round_dealt" and ev[0].data["first_seat"] == 3


def test_r27_first_player_is_dealers_left_and_play_goes_up_the_seat_numbers():
    t = Table(4, dealer=3)
    assert t.t.seat == 0  # "the dealer's left" wraps to seat 0
    for expected in (0, 1, 2, 3, 0):
        assert t.t.seat == expected
        t.do(expected, "draw", "discard")


def test_stack_deck_helper_deals_what_it_says():
    hands = {0: ["AS", "2S", "3S"], 2: ["KD", "QD", "JD"]}
    t = Table(3, hands, top=["9H", "8H"], dealer=1)
    assert t.hand(0) == ["AS", "2S", "3S"] and t.hand(2) == ["KD", "QD", "JD"]
    assert t.deck_left[:2] == ["9H", "8H"]


# R2: the first dealer from the seed, then clockwise -------------------------------------------
def test_r2_first_dealer_is_drawn_from_the_seed_and_covers_every_seat():
    assert first_dealer_for("abc", 5) == first_dealer_for("abc", 5)
    dealers = {first_dealer_for(f"s{i}", 5) for i in range(200)}
    assert dealers == set(range(5))


def test_r2_seeded_decks_are_deterministic_and_differ_by_round():
    assert deck_for("abc", 1) == deck_for("abc", 1)
    assert deck_for("abc", 1) != deck_for("abc", 2)
    assert sorted(deck_for("abc", 7)) == sorted(FULL_DECK)


def test_r2_dealer_rotates_clockwise_every_round():
    t = Table(3, dealer=2, target_score=1000, between_rounds_ms=1000)
    dealers = []
    for _ in range(4):
        dealers.append(t.r.dealer)
        first = t.t.seat
        t.do(first, "draw", "discard")
        t.do(first, "call")
        while t.r.reveal is None:
            t.do(t.t.seat, "draw", "discard")
        # Between rounds nobody is awaited: the table waits on time until the next deal.
        assert t.view(None)["awaiting"] == {
            "kind": "next_round", "seats": [], "deadline": t.r.next_round_at
        }  # fmt: skip
        t.advance(t.r.next_round_at)
    assert dealers == [2, 0, 1, 2]


# Section 2 / R3 / R16 / R17: the opening look ---------------------------------------------------
def test_r3_opening_look_shows_left_and_right_once_to_that_seat_only():
    t = Table(3, {1: ["4H", "KC", "9D"]})
    ev = t.do(1, "look")
    assert types(ev) == ["look"]
    assert event_view(ev[0], 1)["data"] | {} == {
        "seat": 1, "at": 0, "left": "4H", "right": "9D",
    }  # fmt: skip
    for other in (0, 2, None):
        d = event_view(ev[0], other)["data"]
        assert d["left"] is None and d["right"] is None and d["seat"] == 1
    assert "KC" not in str(event_view(ev[0], 1))  # never the centre
    t.refuse(1, "look", "already_looked")


def test_r3_look_during_memorise_and_until_own_first_turn_begins():
    t = Table(3, dealer=0)  # order 1, 2, 0
    t.do(0, "look", at=1)  # inside the memorise period
    t.do(1, "draw", "discard")  # seat 1's first turn begins at 5000
    t.refuse(1, "look", "look_expired")
    t.do(2, "look")  # seat 2 was not connected: still allowed (R3)
    t.do(2, "draw", "discard")
    t.refuse(2, "look", "already_looked")


def test_r16_look_allowed_on_own_turn_until_the_draw():
    t = Table(2, dealer=1)
    t.advance(5000)
    assert t.t.phase == "draw" and t.t.seat == 0
    t.do(0, "look")
    t.do(0, "draw")
    t.refuse(1 - 1, "look", "already_looked")


def test_r16_a_timeout_begins_the_turn_too():
    t = Table(2, dealer=1, draw_seconds=30)
    t.advance(5000 + 30_000 + 1)
    assert of_type(t.events, "timeout")
    t.refuse(0, "look", "look_expired")


def test_r17_opening_look_shows_what_lies_there_now():
    # Seat 1 draws a Queen and swaps its left with seat 2's left before seat 2 looks.
    t = Table(3, {1: ["5S", "6S", "7S"], 2: ["8D", "9D", "TD"]}, top=["QC"], dealer=0)
    t.do(1, "draw", "queen:left>2:left")
    ev = t.do(2, "look")
    assert (ev[0].data["left"], ev[0].data["right"]) == ("5S", "TD")


def test_memorise_period_then_first_turn():
    t = Table(3, dealer=0, memorise_ms=5000)
    assert t.deadlines() == {"memorise_over": 5000}
    t.refuse(1, "draw", "too_early", at=4999)
    ev = t.do(1, "draw", at=5000)  # R18: the boundary is inclusive
    assert types(ev) == ["draw_ready", "draw"]
    assert ev[0].data["at"] == 5000


def test_wrong_seat_and_bad_seat():
    t = Table(3, dealer=0)
    t.advance(5000)
    e = t.refuse(2, "draw", "not_your_turn")
    assert "seat 1" in e.reason
    t.refuse(3, "draw", "bad_seat")
    t.refuse(-1, "look", "bad_seat")


# Section 3 ------------------------------------------------------------------------------------
def test_s3_card_values_and_wire_codes():
    assert [card_value(r + "S") for r in "A23456789TJQK"] == [1, 2, 3, 4, 5, 6, 7, 8, 9] + [10] * 4
    assert hand_total(["AS", "AH", "2C"]) == 4
    assert all(is_card(c) for c in FULL_DECK) and not is_card("10H")
    assert {c[1] for c in FULL_DECK} == set("SHDC")


def test_s3_dealt_court_cards_count_ten_at_the_reveal():
    t = Table(2, {0: ["KS", "QS", "JS"], 1: ["TS", "AS", "2S"]}, dealer=1)
    t.do(0, "draw", "discard", "call")
    t.do(1, "draw", "discard")
    assert t.r.reveal["totals"] == [30, 13]


def test_new_game_argument_checks():
    with pytest.raises(IllegalAction):
        new_game(seats=2, settings=Settings(), seed="", now=0)
    with pytest.raises(IllegalAction):
        new_game(seats=2, settings={"target_score": 5}, seed="x", now=0)  # type: ignore[arg-type]
    with pytest.raises(IllegalAction):
        Settings(start_delay_ms=4000, window_ms=3000)
    with pytest.raises(IllegalAction):
        Settings(draw_seconds=0)
    with pytest.raises(IllegalAction):
        apply(new_game(seats=2, settings=Settings(), seed="x", now=0)[0], 0, "look", 0)  # type: ignore[arg-type]


def test_round_one_deadline_keys_name_the_round():
    st, _ = new_game(seats=2, settings=Settings(), seed="x", now=100)
    assert [(d.key, d.kind, d.at) for d in pending_deadlines(st)] == [
        ("r1:memorise", "memorise_over", 5100)
    ]


def test_stack_deck_rejects_duplicates():
    with pytest.raises(AssertionError):
        stack_deck(2, 0, {0: ["AS", "AS", "2S"]})
