"""Set-up, the deal, the Double Stakes declaration, tricks, hands and the game end, move by move
(rules/triple-crown.md §2-§10, T1-T26, TE1-TE13)."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest
from test_triple_crown_scoring import CLUBS, DIAMONDS, DS_FAIL_HANDS, HEARTS, SPADES, play
from triple_crown_support import hands_from, seed_for_dealer, stack, start

import games.engines.triple_crown as tc
from games.engines.triple_crown import (
    FULL_DECK,
    Action,
    GameState,
    IllegalAction,
    Settings,
    advance,
    apply,
    fire,
    host_settings,
    legal_actions,
    new_game,
    pending_deadlines,
    view,
    winners_on_scores,
)


def code_of(fn: Callable[..., object], *args: object) -> str:
    with pytest.raises(IllegalAction) as ei:
        fn(*args)
    return ei.value.code


# -- §2, T22: four players, one setting ------------------------------------------------------
@pytest.mark.parametrize("seats", [2, 3, 5, True])
def test_s2_exactly_four_players(seats: int) -> None:
    assert (
        code_of(lambda: new_game(seats=seats, settings=Settings(), seed="x", now=0))
        == "bad_settings"
    )


def test_t22_interface_constants_and_the_lobby_menu() -> None:
    assert (tc.KIND, tc.NAME, tc.MIN_SEATS, tc.MAX_SEATS) == (
        "triple_crown",
        "Triple Crown",
        4,
        4,
    )
    assert tc.ROUND_END_EVENT == "hand_over"
    schema = tc.SETTINGS_SCHEMA
    assert schema["type"] == "object" and schema["additionalProperties"] is False
    prop = schema["properties"]["move_seconds"]
    assert prop["enum"] == [None, 30, 60] and prop["default"] is None
    assert {"title", "description"} <= set(prop)
    assert host_settings({}) == Settings()
    assert host_settings({"move_seconds": 30}).move_seconds == 30
    for bad in ({"move_seconds": 45}, {"move_seconds": True}, {"target_score": 5}, {"x": 1}):
        assert code_of(host_settings, bad) == "bad_settings"


@pytest.mark.parametrize(
    "bad",
    [
        {"move_seconds": 0},
        {"move_seconds": "30"},
        {"target_score": 0},
        {"target_score": None},
        {"surprise": 1},
        [],
        None,
    ],
)
def test_t22_settings_from_json_validates_with_bad_settings_never_typeerror(bad: object) -> None:
    assert code_of(Settings.from_json, bad) == "bad_settings"


def test_t22_settings_round_trip() -> None:
    s = Settings(move_seconds=60, target_score=4)
    assert Settings.from_json(json.loads(json.dumps(s.to_json()))) == s


def test_te1_bad_decks_are_refused() -> None:
    deck = list(FULL_DECK)
    for bad in ([deck[:51]], [[*deck[:51], deck[0]]], [["XX", *deck[1:]]], [5]):
        assert (
            code_of(lambda b=bad: new_game(seats=4, settings=Settings(), seed="x", now=0, decks=b))
            == "bad_settings"
        )


# -- T1-T3: seats, first dealer, the deal ----------------------------------------------------
def test_t2_first_dealer_from_the_seed_and_all_four_occur() -> None:
    seen = set()
    for i in range(40):
        st, _ = new_game(seats=4, settings=Settings(), seed=f"s{i}", now=0)
        st2, _ = new_game(seats=4, settings=Settings(), seed=f"s{i}", now=0)
        assert st.to_json() == st2.to_json()  # deterministic
        seen.add(st.round.dealer)
    assert seen == {0, 1, 2, 3}


def test_t3_deal_one_card_at_a_time_clockwise_from_the_dealers_left() -> None:
    deck = list(FULL_DECK)
    st, ev = new_game(seats=4, settings=Settings(), seed=seed_for_dealer(1), now=7, decks=[deck])
    for seat in range(4):
        # deck position i goes to seat (1 + 1 + i) % 4
        mine = {deck[i] for i in range(52) if (2 + i) % 4 == seat}
        assert set(st.round.hands[seat]) == mine
    assert ev[0].type == "round_dealt"
    assert ev[0].data["deck"] == deck and ev[0].data["at"] == 7 and ev[0].data["dealer"] == 1
    assert ev[0].data["leader"] == 2 and st.round.turn == 2  # T11


def test_te3_hands_are_sorted_so_no_deck_order_survives() -> None:
    st, _ = new_game(seats=4, settings=Settings(), seed="sort", now=0)
    for h in st.round.hands:
        suits = "SHDC"
        key = [(suits.index(c[1]), -"23456789TJQKA".index(c[0])) for c in h]
        assert key == sorted(key)


def test_te1_seeded_decks_beyond_the_explicit_ones() -> None:
    hands = [SPADES, HEARTS, DIAMONDS, CLUBS]
    st, _ = start(hands, dealer=3)
    st, _ = play(st, [[SPADES[i], HEARTS[i], DIAMONDS[i], CLUBS[i]] for i in range(13)])
    assert st.round_number == 2 and st.round.dealer == 0  # §10: the deal passes clockwise
    assert sorted(c for h in st.round.hands for c in h) == sorted(FULL_DECK)


# -- T5, T8: roles and the announcement -----------------------------------------------------
def test_t5_crown_hand_roles_are_secret_state() -> None:
    st, ev = start([SPADES, HEARTS, DIAMONDS, CLUBS], dealer=3)
    assert st.round.roles == ["high", "team", "low", "team"]
    assert ev[0].data["double_stakes"] is None and st.round.phase == "play"


def test_t8_double_stakes_is_announced_at_the_deal_and_awaits_the_declaration() -> None:
    st, ev = start(DS_FAIL_HANDS, dealer=3)
    assert ev[0].data["double_stakes"] == 0
    assert st.round.phase == "declare" and st.round.turn == 0
    v = view(st, 2, 0)
    assert v["kind"] == "double_stakes" and v["double_stakes"] == 0 and v["trumps"] is None


def test_t9_te4_declaration_legal_actions_and_refusals() -> None:
    hands = hands_from({2: ["AS", "2D"]})
    st, _ = start(hands, dealer=0)  # seat 1 leads; seat 2 is DS
    acts = legal_actions(st, 2, 0)
    assert len(acts) == 10 and {a.type for a in acts} == {"declare"}
    assert {(a.trumps, a.memo) for a in acts} == {
        (t, m) for t in ("S", "H", "D", "C", "NT") for m in ("high", "low")
    }
    for s in (0, 1, 3):
        assert legal_actions(st, s, 0) == []
        assert code_of(apply, st, s, Action.declare("S", "high"), 0) == "not_your_turn"
    leader_card = st.round.hands[1][0]
    assert code_of(apply, st, 1, Action.play(leader_card), 0) == "awaiting_declaration"
    st2, ev = apply(st, 2, Action.declare("H", "low"), 5)
    assert [e.type for e in ev] == ["declared"]
    assert ev[0].data == {
        "seat": 2,
        "at": 5,
        "trumps": "H",
        "memo": "low",
        "timeout": False,
        "next_seat": 1,
        "deadline": None,
    }
    assert st2.round.turn == 1 and st2.round.trumps == "H" and st2.round.memo == "low"
    assert code_of(apply, st2, 2, Action.declare("S", "high"), 6) == "no_declaration"  # final
    assert st.round.phase == "declare"  # the input state is untouched


def test_t9_no_declaration_in_a_crown_hand() -> None:
    st, _ = start([SPADES, HEARTS, DIAMONDS, CLUBS], dealer=3)
    assert code_of(apply, st, 0, Action.declare("S", "high"), 0) == "no_declaration"


# -- T11-T13: leads, following, winning ------------------------------------------------------
def test_t12_te5_te11_must_follow_suit_when_able_and_legal_actions_offer_only_that() -> None:
    hands = hands_from({0: ["AS", "5H", "KC"], 1: ["2D", "7H", "3C"]})
    st, _ = start(hands, dealer=3)
    st, _ = apply(st, 0, Action.play("5H"), 0)
    hearts = [c for c in st.round.hands[1] if c[1] == "H"]
    assert [a.card for a in legal_actions(st, 1, 0)] == hearts
    assert code_of(apply, st, 1, Action.play("3C"), 0) == "must_follow"
    assert code_of(apply, st, 1, Action.play("AS"), 0) == "not_in_hand"
    assert code_of(apply, st, 2, Action.play(st.round.hands[2][0]), 0) == "not_your_turn"


def test_t12_void_may_play_any_card() -> None:
    st, _ = start([SPADES, HEARTS, DIAMONDS, CLUBS], dealer=3)
    st, _ = apply(st, 0, Action.play("7S"), 0)
    assert [a.card for a in legal_actions(st, 1, 0)] == HEARTS  # any card: all of them


def test_t13_highest_of_the_suit_led_wins_at_no_trump_off_suit_aces_lose() -> None:
    st, _ = start([SPADES, HEARTS, DIAMONDS, CLUBS], dealer=3)
    st, ev = play(st, [["2S", "AH", "AD", "AC"]])
    won = next(e for e in ev if e.type == "trick_won").data
    assert won["winner"] == 0 and won["taken"] == [1, 0, 0, 0] and won["next_seat"] == 0


def test_t13_trumps_win_in_a_double_stakes_hand() -> None:
    st, _ = start(DS_FAIL_HANDS, dealer=3)
    st, _ = apply(st, 0, Action.declare("H", "high"), 0)
    # seat 1 holds only hearts: its 2♥ trumps seat 0's A♠ lead
    st, ev = play(st, [["AS", "2H", "TC", "TS"]])
    assert next(e for e in ev if e.type == "trick_won").data["winner"] == 1
    assert st.round.leader == 1 and st.round.turn == 1  # T11: the winner leads


def test_t11_any_card_may_be_led_including_trumps_and_the_crown_cards() -> None:
    st, _ = start(DS_FAIL_HANDS, dealer=3)
    st, _ = apply(st, 0, Action.declare("S", "high"), 0)
    assert {a.card for a in legal_actions(st, 0, 0)} == set(DS_FAIL_HANDS[0])


def test_t14_events_of_a_trick_and_played_cards_public() -> None:
    st, _ = start([SPADES, HEARTS, DIAMONDS, CLUBS], dealer=3)
    st, ev = apply(st, 0, Action.play("KS"), 3)
    assert [e.type for e in ev] == ["card_played"]
    assert ev[0].data == {
        "seat": 0,
        "at": 3,
        "trick": 1,
        "card": "KS",
        "timeout": False,
        "next_seat": 1,
        "deadline": None,
    }
    assert view(st, None, 3)["trick"] == [{"seat": 0, "card": "KS"}]


# -- T21: the game end -----------------------------------------------------------------------
def test_t21_te12_game_ends_when_someone_reaches_the_target_highest_wins_ties_share() -> None:
    # Target 2 (test-only): seat 0 (High, 13 tricks) scores 2, seat 2 (Low, 0 tricks) 3.
    st, _ = start([SPADES, HEARTS, DIAMONDS, CLUBS], dealer=3, settings=Settings(target_score=2))
    st, ev = play(st, [[SPADES[i], HEARTS[i], DIAMONDS[i], CLUBS[i]] for i in range(13)])
    assert [e.type for e in ev][-3:] == ["trick_won", "hand_over", "game_over"]
    assert st.status == "finished" and st.winners == [2] and st.scores == [2, 0, 3, 0]
    assert ev[-1].data == {"at": 0, "winners": [2], "scores": [2, 0, 3, 0]}
    assert pending_deadlines(st) == [] and legal_actions(st, 0, 0) == []
    assert code_of(apply, st, 0, Action.play("AS"), 0) == "game_finished"
    v = view(st, None, 0)
    assert v["reveal"]["roles"] == ["high", "team", "low", "team"] and v["phase"] == "over"
    assert winners_on_scores([15, 15, 3, 0]) == [0, 1]


def test_t21_game_continues_below_the_target() -> None:
    st, _ = start([SPADES, HEARTS, DIAMONDS, CLUBS], dealer=3, settings=Settings(target_score=4))
    st, ev = play(st, [[SPADES[i], HEARTS[i], DIAMONDS[i], CLUBS[i]] for i in range(13)])
    assert st.status == "playing" and [e.type for e in ev][-2:] == ["hand_over", "round_dealt"]
    assert st.history == [[2, 0, 3, 0]] and st.last_hand["points"] == [2, 0, 3, 0]


# -- Wire, JSON, bad input -------------------------------------------------------------------
@pytest.mark.parametrize(
    "bad",
    [
        None,
        [],
        {},
        {"type": "lead"},
        {"type": "play"},
        {"type": "play", "card": "10H"},
        {"type": "play", "card": "AS", "extra": 1},
        {"type": "declare", "trumps": "S"},
        {"type": "declare", "trumps": "N", "memo": "high"},
        {"type": "declare", "trumps": "S", "memo": "middle"},
    ],
)
def test_te13_wire_malformed_actions_are_bad_action(bad: object) -> None:
    assert code_of(Action.from_wire, bad) == "bad_action"


def test_te13_wire_round_trip() -> None:
    for a in (Action.play("TD"), Action.declare("NT", "low"), Action.declare("C", "high")):
        assert Action.from_wire(json.loads(json.dumps(a.to_wire()))) == a


def test_te5_bad_seats_and_non_actions() -> None:
    st, _ = start([SPADES, HEARTS, DIAMONDS, CLUBS], dealer=3)
    assert code_of(apply, st, 4, Action.play("AS"), 0) == "bad_seat"
    assert code_of(apply, st, -1, Action.play("AS"), 0) == "bad_seat"
    assert code_of(apply, st, 0, {"type": "play", "card": "AS"}, 0) == "bad_action"
    assert legal_actions(st, 7, 0) == []


def test_te13_state_json_round_trip_exact_mid_hand() -> None:
    st, _ = start(DS_FAIL_HANDS, dealer=3, settings=Settings(move_seconds=30))
    st, _ = apply(st, 0, Action.declare("NT", "high"), 10)
    st, _ = play(st, [["AS", "AH", "TC", "TS"], ["KS"]], now=20)
    blob = json.dumps(st.to_json())
    again = GameState.from_json(json.loads(blob))
    assert again.to_json() == st.to_json()
    assert (again.status, again.round_number, again.scores, again.winners, again.seats) == (
        "playing",
        1,
        [0, 0, 0, 0],
        [],
        4,
    )
    with pytest.raises(ValueError):
        GameState.from_json({**st.to_json(), "version": 99})


# -- T23, T24: the clock ---------------------------------------------------------------------
def test_t23_no_deadlines_without_a_limit() -> None:
    st, _ = start([SPADES, HEARTS, DIAMONDS, CLUBS], dealer=3)
    assert pending_deadlines(st) == [] and view(st, 0, 0)["move_deadline"] is None
    assert advance(st, 10**9) == (st, [])


def test_t23_a_play_at_exactly_the_deadline_is_on_time() -> None:
    st, ev = start([SPADES, HEARTS, DIAMONDS, CLUBS], dealer=3, settings=Settings(30), now=1000)
    assert ev[0].data["deadline"] == 31_000
    (d,) = pending_deadlines(st)
    assert (d.key, d.kind, d.at) == ("r1:k1:p0", "play_timeout", 31_001)
    st2, ev = apply(st, 0, Action.play("KS"), 31_000)
    assert [e.data["timeout"] for e in ev] == [False]
    (d2,) = pending_deadlines(st2)
    assert (d2.key, d2.at) == ("r1:k1:p1", 61_001)  # T23: seat 1's clock starts now


def test_t24_play_timeout_plays_the_lowest_legal_card_then_the_late_action_is_refused() -> None:
    st, _ = start([SPADES, HEARTS, DIAMONDS, CLUBS], dealer=3, settings=Settings(30), now=1000)
    assert code_of(apply, st, 0, Action.play("KS"), 31_001) == "not_your_turn"
    st2, ev = advance(st, 31_001)
    assert [(e.type, e.data["card"], e.data["timeout"]) for e in ev] == [
        ("card_played", "2S", True)
    ]
    assert st2.round.turn == 1 and st2.round.clock_from == 31_001


def test_t24_lowest_legal_card_ties_go_clubs_diamonds_hearts_spades() -> None:
    # Seat 1 is void in diamonds and holds 2♣, 2♥ and 2♠: the timeout plays the 2♣.
    hands = hands_from(
        {
            0: ["AS", "AD", "KD", "QD", "JD", "TD", "9D", "8D", "7D", "6D", "5D", "4D", "3D"],
            1: ["2C", "2H", "2S", "KS", "KH", "KC", "QS", "QH", "QC", "JS", "JH", "JC", "TS"],
        }
    )
    st, _ = start(hands, dealer=3, settings=Settings(30))
    st, _ = apply(st, 0, Action.play("AD"), 0)
    st, ev = advance(st, 30_001)
    assert ev[0].data["seat"] == 1 and ev[0].data["card"] == "2C"


def test_t24_declaration_timeout_is_no_trump_memo_low() -> None:
    st, _ = start(DS_FAIL_HANDS, dealer=3, settings=Settings(60), now=0)
    (d,) = pending_deadlines(st)
    assert (d.key, d.kind, d.at) == ("r1:declare", "declare_timeout", 60_001)
    _st2, ev = apply(st, 0, Action.declare("S", "high"), 60_000)  # on time
    assert ev[0].data["trumps"] == "S"
    st3, ev = fire(st, "r1:declare", 60_001)
    assert [(e.type, e.data["trumps"], e.data["memo"], e.data["timeout"]) for e in ev] == [
        ("declared", "NT", "low", True)
    ]
    assert st3.round.turn == 0 and st3.round.clock_from == 60_001


def test_te2_fire_stale_or_early_returns_the_same_object_and_late_fire_equals_punctual() -> None:
    st, _ = start([SPADES, HEARTS, DIAMONDS, CLUBS], dealer=3, settings=Settings(30))
    assert fire(st, "r1:k1:p0", 30_000) == (st, [])  # early
    assert fire(st, "r9:nope", 10**9) == (st, [])  # stale
    punctual, _ = fire(st, "r1:k1:p0", 30_001)
    late, _ = fire(st, "r1:k1:p0", 45_000)
    assert punctual.to_json() == late.to_json()
    # a very late sweep applies every due timeout, each at its own instant: 4 cards, 30 s apart
    _swept, ev = advance(st, 4 * 30_001)
    assert [e.data["at"] for e in ev if e.type == "card_played"] == [
        30_001,
        60_002,
        90_003,
        120_004,
    ]


def test_te2_time_never_runs_backwards() -> None:
    st, _ = start([SPADES, HEARTS, DIAMONDS, CLUBS], dealer=3, now=5000)
    st2, ev = apply(st, 0, Action.play("AS"), 10)
    assert ev[0].data["at"] == 5000 and st2.clock == 5000


def test_t26_te9_no_wait_between_hands_the_next_deal_is_at_the_same_instant() -> None:
    st, _ = start(
        [SPADES, HEARTS, DIAMONDS, CLUBS],
        dealer=3,
        settings=Settings(30),
        more_decks=[stack([SPADES, HEARTS, DIAMONDS, CLUBS], 0)],
    )
    tricks = [[SPADES[i], HEARTS[i], DIAMONDS[i], CLUBS[i]] for i in range(13)]
    st, ev = play(st, tricks, now=500)
    dealt = next(e for e in ev if e.type == "round_dealt").data
    assert dealt["at"] == 500 and dealt["round"] == 2 and dealt["dealer"] == 0
    assert dealt["deadline"] == 30_500 and st.round.turn == 1


@pytest.mark.parametrize("seed", ["g1", "g2", "g3"])
def test_s10_t2_t16_t21_a_whole_seeded_game_dealer_rotates_scores_add_up_to_15(seed: str) -> None:
    import random

    rng = random.Random(seed)
    st, ev = new_game(seats=4, settings=Settings(), seed=seed, now=0)
    events = list(ev)
    while st.status == "playing":
        s = st.round.turn
        st, ev = apply(st, s, rng.choice(legal_actions(st, s, 0)), 0)
        events += ev
    dealers = [e.data["dealer"] for e in events if e.type == "round_dealt"]
    assert dealers == [(dealers[0] + i) % 4 for i in range(len(dealers))]  # §10, T2
    overs = [e.data for e in events if e.type == "hand_over"]
    assert len(overs) == len(dealers) == len(st.history)
    running = [0, 0, 0, 0]
    for d in overs:  # T16: a hand's points arrive together, at its end
        running = [a + b for a, b in zip(running, d["points"], strict=True)]
        assert d["scores"] == running
    assert st.scores == running and max(running) >= 15  # T21
    for o in overs[:-1]:
        assert max(o["scores"]) < 15  # the game went on only below the target
    assert st.winners == [s for s in range(4) if running[s] == max(running)]
    assert events[-1].type == "game_over" and events[-1].data["winners"] == st.winners
