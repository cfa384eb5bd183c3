"""rules/crisp.md sections 4-6 and 10 (setting 3), rulings R5-R9, R21, R22, R24-R26: a turn, the
special cards from the deck and from the pile, King chains, turning the pile over."""

from __future__ import annotations

import pytest
from engine_support import Table, of_type, types

from games.engines.crisp import event_view

# Three seats, dealer 0: seat 1 plays first, then 2, then 0.  Memorise until 5000.
HANDS = {0: ["AC", "2C", "3C"], 1: ["4S", "5S", "6S"], 2: ["7D", "8D", "9D"]}


# Section 4 / R5 ---------------------------------------------------------------------------------
def test_s4_swap_replaces_a_card_and_discards_it_face_up():
    t = Table(3, HANDS, top=["AH"])
    ev = t.do(1, "draw", "swap:centre")
    assert t.hand(1) == ["4S", "AH", "6S"] and t.pile == ["5S"]
    swap = of_type(ev, "swap")[0]
    assert swap.data["card_out"] == "5S" and swap.data["place"] == "centre"
    for s in (0, 1, 2, None):
        d = event_view(swap, s)["data"]
        assert d["card_out"] == "5S" and d["card_in"] is None  # R4/R5: hidden again once in


def test_s4_discard_puts_the_drawn_card_on_the_pile():
    t = Table(3, HANDS, top=["AH"])
    t.do(1, "draw", "discard")
    assert t.pile == ["AH"] and t.hand(1) == HANDS[1]


def test_r5_drawn_card_seen_by_the_drawer_only_until_played():
    t = Table(3, HANDS, top=["AH"])
    ev = t.do(1, "draw")
    assert event_view(ev[-1], 1)["data"]["card"] == "AH"
    for s in (0, 2, None):
        assert event_view(ev[-1], s)["data"]["card"] is None
    assert t.view(1)["held"] == {"seat": 1, "source": "deck", "card": "AH"}
    assert t.view(0)["held"] == {"seat": 1, "source": "deck", "card": None}
    assert t.view(None)["held"]["card"] is None


def test_s4_must_draw_before_playing_and_play_before_drawing_again():
    t = Table(3, HANDS, top=["AH"])
    t.advance(5000)
    t.refuse(1, "discard", "wrong_phase")
    t.refuse(1, "swap:left", "wrong_phase")
    t.do(1, "draw")
    t.refuse(1, "draw", "wrong_phase")
    t.refuse(2, "discard", "not_your_turn")


# Section 5: specials from the deck ---------------------------------------------------------------
def test_s5_jqk_from_the_deck_cannot_be_swapped_in():
    for card in ("JH", "QH", "KH"):
        t = Table(3, HANDS, top=[card])
        t.do(1, "draw")
        for p in ("left", "centre", "right"):
            code = "must_play_king" if card == "KH" else "special_not_swappable"
            t.refuse(1, f"swap:{p}", code)


def test_s5_jack_looks_at_own_centre_once_then_is_discarded():
    t = Table(3, HANDS, top=["JH"])
    ev = t.do(1, "draw", "jack")
    jack = of_type(ev, "jack")[0]
    assert event_view(jack, 1)["data"]["centre"] == "5S"  # R26: in that event
    for s in (0, 2, None):
        assert event_view(jack, s)["data"]["centre"] is None
        assert event_view(jack, s)["data"]["card"] == "JH"
    assert t.pile == ["JH"] and t.hand(1) == HANDS[1]
    assert "5S" not in str(t.view(1))  # R4: never again


def test_s5_jack_and_queen_may_be_discarded_unused():
    for card in ("JH", "QH"):
        t = Table(3, HANDS, top=[card])
        ev = t.do(1, "draw", "discard")
        assert t.pile == [card] and types(ev)[-2:] == ["discard", "turn_ended"]


def test_s5_king_must_be_played_not_discarded():
    t = Table(3, HANDS, top=["KH"])
    t.do(1, "draw")
    t.refuse(1, "discard", "must_play_king")
    t.refuse(1, "jack", "must_play_king")


def test_s5_wrong_special_action_refused():
    t = Table(3, HANDS, top=["5H"])
    t.do(1, "draw")
    t.refuse(1, "jack", "wrong_card")
    t.refuse(1, "queen:left>2:left", "wrong_card")
    t.refuse(1, "king", "wrong_card")
    t2 = Table(3, HANDS, top=["JH"])
    t2.do(1, "draw")
    t2.refuse(1, "queen:left>2:left", "wrong_card")


def test_s5_queen_blind_swap_and_looks_left_right():
    t = Table(3, HANDS, top=["QH"])
    ev = t.do(1, "draw", "queen:left>2:right")
    assert t.hand(1) == ["9D", "5S", "6S"] and t.hand(2) == ["7D", "8D", "4S"]
    q = of_type(ev, "queen")[0]
    # R8: everyone sees which places were swapped, not the values.
    for s in (0, None):
        d = event_view(q, s)["data"]
        assert (d["place"], d["target_seat"], d["target_place"]) == ("left", 2, "right")
        assert d["given"] is None and d["received"] is None
    assert event_view(q, 1)["data"]["received"] == "9D"  # landed in my left: I look once
    assert event_view(q, 1)["data"]["given"] is None  # never shown what I gave (unseen)
    assert event_view(q, 2)["data"]["given"] == "4S"  # landed in their right: they look
    assert event_view(q, 2)["data"]["received"] is None
    assert t.pile == ["QH"]


def test_s5_queen_unseen_centre_to_opponents_left():
    """The opponent sees a card its previous owner never saw."""
    t = Table(3, HANDS, top=["QH"])
    ev = t.do(1, "draw", "queen:centre>0:left")
    q = of_type(ev, "queen")[0]
    assert t.hand(0)[0] == "5S" and t.hand(1)[1] == "AC"
    assert event_view(q, 0)["data"]["given"] == "5S"  # the opponent sees it
    assert event_view(q, 1)["data"]["received"] is None  # into my centre: no look
    assert event_view(q, 1)["data"]["given"] is None  # the giver never saw it, nor now
    assert "5S" not in str(t.view(1)) and "5S" not in str(t.seen(1))


def test_s5_queen_into_centre_gives_no_look_to_anyone():
    t = Table(3, HANDS, top=["QH"])
    q = of_type(t.do(1, "draw", "queen:centre>2:centre"), "queen")[0]
    for s in (0, 1, 2, None):
        d = event_view(q, s)["data"]
        assert d["given"] is None and d["received"] is None


def test_r9_queen_needs_another_players_card():
    t = Table(3, HANDS, top=["QH"])
    t.do(1, "draw")
    t.refuse(1, "queen:left>1:right", "queen_needs_other_player")
    t.refuse(1, "queen:left>3:right", "bad_target")
    t.refuse(1, "queen:left>-1:right", "bad_target")


def test_s7_queen_may_target_the_caller_in_final_turns():
    t = Table(3, HANDS, top=["2H", "QH"])
    t.do(1, "draw", "discard", "call")
    t.do(2, "draw", "queen:left>1:left")
    assert t.hand(1)[0] == "7D" and t.r.caller == 1


# King chains (section 5; section 5 order over R6 -- see rules/crisp.md X1) ------------------
def test_s5_king_gives_two_extra_draws_each_a_normal_draw():
    t = Table(3, HANDS, top=["KH", "AH", "JD"])
    ev = t.do(1, "draw", "king")
    assert t.t.phase == "draw" and t.t.draw_no == 2 and t.t.extra_draws == 1
    assert of_type(ev, "king")[0].data["extra_draws"] == 2
    t.do(1, "draw", "swap:left")  # extra 1: a plain card, swapped in
    t.do(1, "draw", "jack")  # extra 2: a Jack, used
    assert t.t.seat == 2 and t.pile == ["4S", "JD", "KH"]


def test_x1_king_lies_beside_the_player_during_its_draws_then_goes_to_the_pile():
    t = Table(3, HANDS, top=["KH", "AH", "2H"])
    t.do(1, "draw", "king")
    assert "KH" not in t.pile and t.t.kings == [["KH", 0]]
    assert t.view(0)["turn"]["kings_in_play"] == ["KH"]  # played face up: public
    t.do(1, "draw", "discard")
    assert t.pile == ["AH"]
    ev = t.do(1, "draw", "discard")
    assert types(ev)[:3] == ["draw", "discard", "king_discarded"]
    assert t.pile == ["AH", "2H", "KH"]


def test_s5_king_drawing_a_king_four_extra_draws():
    t = Table(3, HANDS, top=["KH", "KD", "AH", "2H", "3H"])
    t.do(1, "draw", "king")
    t.do(1, "draw", "king")  # the first extra draw is a King: two more
    for _ in range(2):
        t.do(1, "draw", "discard")
    assert t.t.seat == 1 and t.t.draw_no == 5 and t.t.extra_draws == 0
    t.do(1, "draw", "discard")
    assert t.t.seat == 2
    draws = [e.data["card"] for e in t.events if e.type == "draw" and e.data["seat"] == 1]
    # The normal draw, then four extra draws: KH's two (KD and 3H) and KD's two (AH, 2H).
    assert draws == ["KH", "KD", "AH", "2H", "3H"]
    # The inner King goes on the pile when its own two draws are done, the outer one last.
    assert t.pile == ["AH", "2H", "KD", "3H", "KH"]


def test_x1_inner_king_is_on_the_pile_for_the_outer_kings_last_draw():
    t = Table(3, HANDS, top=["KH", "KD", "AH", "2H"], pile_draw=True)
    t.do(1, "draw", "king", "draw", "king")
    t.do(1, "draw", "discard", "draw", "discard")  # KD's two draws: KD goes on the pile
    assert t.pile[-1] == "KD"
    t.do(1, "draw:pile")  # the outer King's last draw takes it back: a plain 10
    t.refuse(1, "king", "no_effect_from_pile")
    t.refuse(1, "discard", "must_swap")
    t.do(1, "swap:right")
    assert t.hand(1)[2] == "KD" and t.pile[-1] == "KH"


def test_r25_contradicted_own_king_cannot_be_taken_back_during_its_draws():
    t = Table(3, HANDS, top=["KH", "AH", "2H"], pile_draw=True)
    t.do(1, "draw", "king")
    t.refuse(1, "draw:pile", "pile_empty")  # the King is not on the pile (rules/crisp.md X1)


# Section 6 / R7 / R22 / R24 ---------------------------------------------------------------------
def _exhaust(t: Table, keep: int = 0) -> None:
    """Play discard-only turns until ``keep`` cards are left in the deck (no calls); a King
    drawn is played and its draws discarded."""
    while len(t.deck_left) > keep:
        _plain_turn(t)


def _plain_turn(t: Table) -> None:
    seat = t.t.seat
    t.do(seat, "draw")
    while t.t is not None and t.t.seat == seat and t.t.phase != "start":
        if t.t.phase == "draw":
            t.do(seat, "draw")
        t.do(seat, "king" if t.t.held[0] == "K" and t.t.held_from == "deck" else "discard")


def _specials_first(t: Table, last: tuple[str, ...] = ()) -> list[str]:
    """The table's deck reordered: specials first (their chains end long before the deck
    does), then plain cards, then ``last``."""
    cards = [c for c in t.deck_left if c not in last]
    return [c for c in cards if c[0] in "JQK"] + [c for c in cards if c[0] not in "JQK"] + [*last]


def test_r7_pile_turned_over_unshuffled_first_discard_on_top():
    t = Table(3, HANDS)
    t = Table(3, HANDS, top=_specials_first(t))
    first_discards = t.deck_left[:2]  # a Jack and a Queen, discarded unused
    _exhaust(t)
    pile = t.pile
    assert pile[:2] == first_discards and t.deck_left == []
    seat = t.t.seat
    ev = t.do(seat, "draw")
    assert types(ev)[-2:] == ["pile_turned", "draw"]
    assert ev[-1].data["card"] == pile[0]  # R7: the first discarded is the new top
    assert t.deck_left == pile[1:] and t.pile == []
    assert t.r.turnovers == 1
    assert event_view(ev[-2], None)["data"] == {"at": t.now, "deck_size": len(pile) - 1 + 1}


def test_r22_turnover_is_lazy_and_pile_draw_allowed_with_empty_deck():
    t = Table(3, HANDS, pile_draw=True)
    _exhaust(t)
    assert t.deck_left == [] and t.pile  # nothing turned over yet
    seat = t.t.seat
    top = t.pile[-1]
    ev = t.do(seat, "draw:pile")
    assert "pile_turned" not in types(ev) and ev[-1].data["card"] == top
    t.do(seat, "swap:left")
    assert t.deck_left == []


def test_r24_round_goes_on_through_several_turnovers():
    t = Table(2, {0: ["AC", "2C", "3C"], 1: ["4S", "5S", "6S"]})
    for _ in range(200):
        _plain_turn(t)
    assert t.r.turnovers >= 3 and t.r.reveal is None


def test_pile_turned_over_mid_king_chain():
    t = Table(3, HANDS)
    t = Table(3, HANDS, top=_specials_first(t, last=("KS",)))
    assert t.deck_left[-1] == "KS"
    _exhaust_until_one(t)
    seat = t.t.seat
    pile_before = t.pile
    ev = t.do(seat, "draw", "king")  # the deck is now empty
    assert t.deck_left == [] and "KS" not in t.pile
    ev = t.do(seat, "draw")  # the extra draw meets an empty deck: turn the pile over
    assert types(ev)[:2] == ["pile_turned", "draw"]
    assert ev[1].data["card"] == pile_before[0]
    t.do(seat, "discard")
    t.do(seat, "draw", "discard")
    assert t.pile[-1] == "KS"  # the King lands on the new pile once its draws are done


def _exhaust_until_one(t: Table) -> None:
    while len(t.deck_left) > 1:
        _plain_turn(t)


# Section 10, setting 3: drawing from the pile -----------------------------------------------------
def test_s10_pile_draw_off_by_default():
    t = Table(3, HANDS, top=["AH"])
    t.do(1, "draw", "discard")
    t.refuse(2, "draw:pile", "pile_draw_off", at=t.now + 2000)


def test_s10_pile_empty_must_draw_from_deck():
    t = Table(3, HANDS, pile_draw=True)
    t.refuse(1, "draw:pile", "pile_empty", at=5000)


def test_s10_pile_card_must_be_swapped_in_and_is_public_while_held():
    t = Table(3, HANDS, top=["AH", "2H"], pile_draw=True)
    t.do(1, "draw", "discard")
    ev = t.do(2, "draw:pile")
    assert event_view(ev[-1], 0)["data"]["card"] == "AH"  # R21: public while held
    assert t.view(None)["held"] == {"seat": 2, "source": "pile", "card": "AH"}
    t.refuse(2, "discard", "must_swap")
    t.do(2, "swap:centre")
    assert t.hand(2)[1] == "AH" and t.pile == ["8D"]
    assert all(h == [None, None, None] for h in t.view(2)["hands"])  # hidden again (R21)


def test_s10_court_card_from_pile_is_a_plain_ten():
    t = Table(3, HANDS, top=["JH", "AD"], pile_draw=True)
    t.do(1, "draw", "discard")  # the Jack discarded unused
    t.do(2, "draw:pile")
    for special in ("jack", "king", "queen:left>0:left"):
        t.refuse(2, special, "no_effect_from_pile")
    t.do(2, "swap:left")
    assert t.hand(2)[0] == "JH"


def test_s10_extra_draws_may_come_from_the_pile():
    t = Table(3, HANDS, top=["AH", "KC", "2D"], pile_draw=True)
    t.do(1, "draw", "discard")
    t.do(2, "draw", "king")
    t.do(2, "draw:pile", "swap:right")  # the Ace from the pile
    assert t.hand(2)[2] == "AH"
    t.do(2, "draw", "discard")
    assert t.t.seat == 0


def _specials_onto_pile(t: Table, card: str) -> None:
    """Seat 1 draws ``card`` and gets it onto the pile the way the rules allow."""
    if card[0] == "K":
        t.do(1, "draw", "king", "draw", "discard", "draw", "discard")
    else:
        t.do(1, "draw", "discard")  # a Jack or Queen discarded unused
    assert t.pile[-1] == card


@pytest.mark.parametrize("card", ["JH", "QH", "KH"])
def test_s10_each_special_from_the_pile_is_a_plain_ten(card):
    t = Table(3, HANDS, top=[card, "AD", "2D"], pile_draw=True)
    _specials_onto_pile(t, card)
    t.do(2, "draw:pile")
    assert t.view(0)["held"]["card"] == card  # public while held (R21)
    for special in ("jack", "king", "queen:left>0:left"):
        t.refuse(2, special, "no_effect_from_pile")
    t.refuse(2, "discard", "must_swap")
    t.do(2, "swap:left")
    assert t.hand(2)[0] == card and t.t.seat == 0
    t.do(0, "draw", "discard", "call")
    t.do(1, "draw", "discard")
    t.do(2, "draw", "discard")
    assert t.r.reveal["totals"][2] == 10 + 8 + 9  # counted 10 like any court card (section 3)


@pytest.mark.parametrize("card", ["JH", "QH", "KH"])
def test_s5_each_special_from_the_deck_has_its_effect(card):
    t = Table(3, HANDS, top=[card, "AD", "2D"])
    play = {"JH": "jack", "QH": "queen:left>2:left", "KH": "king"}[card]
    ev = t.do(1, "draw", play)
    assert of_type(ev, play.split(":")[0])
    if card == "KH":
        assert t.t.seat == 1 and t.t.phase == "draw"  # extra draws
    else:
        assert t.pile == [card] and t.t.seat == 2


def test_r6_jack_and_queen_reach_the_pile_in_the_instant_they_are_played():
    t = Table(3, HANDS, top=["JH", "QH"])
    ev = t.do(1, "draw", "jack")
    assert t.pile == ["JH"] and types(ev)[2:4] == ["jack", "turn_ended"]
    t.do(2, "draw", "queen:left>0:left")
    assert t.pile == ["JH", "QH"]


def test_r26_jack_and_queen_looks_are_part_of_the_play_event():
    t = Table(3, HANDS, top=["JH", "QH"])
    jack = of_type(t.do(1, "draw", "jack"), "jack")[0]
    queen = of_type(t.do(2, "draw", "queen:left>0:right"), "queen")[0]
    assert event_view(jack, 1)["data"]["centre"] == "5S"
    assert event_view(queen, 2)["data"]["received"] == "3C"
    assert event_view(queen, 0)["data"]["given"] == "7D"
    assert "look" not in types(t.events)  # no separate look action is needed


def test_s2_places_deck_and_pile_after_the_deal():
    t = Table(3, HANDS)
    assert [t.hand(s) for s in range(3)] == [HANDS[0], HANDS[1], HANDS[2]]
    assert len(t.deck_left) == 52 - 9 and t.pile == []
    assert t.t.seat == 1  # the dealer's left plays first


def test_s6_empty_deck_turns_the_pile_over_before_the_draw():
    t = Table(2, {0: ["AC", "2C", "3C"], 1: ["4S", "5S", "6S"]})
    t = Table(2, {0: ["AC", "2C", "3C"], 1: ["4S", "5S", "6S"]}, top=_specials_first(t))
    _exhaust(t)
    pile = t.pile
    ev = t.do(t.t.seat, "draw")
    assert types(ev)[-2:] == ["pile_turned", "draw"] and len(t.deck_left) == len(pile) - 1
