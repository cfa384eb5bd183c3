"""Redaction (R4, R5, R8, R21), the wire forms, JSON, replay, purity and isolation."""

from __future__ import annotations

import ast
import doctest
import importlib
import json
import pkgutil
import re
from pathlib import Path

import pytest
from engine_support import Table, cards_in, of_type

import games.engines.crisp
from games.engines.crisp import (
    Action,
    Event,
    GameState,
    IllegalAction,
    Settings,
    apply,
    event_view,
    new_game,
    view,
)

HANDS = {0: ["AC", "2C", "3C"], 1: ["4S", "5S", "6S"], 2: ["7D", "8D", "9D"]}
ENGINE_DIR = Path(games.engines.crisp.__file__).parent


# R4: once means once ------------------------------------------------------------------------------
def test_r4_looked_cards_never_appear_again_even_to_their_owner():
    t = Table(3, HANDS, top=["JH", "QC", "AH"], pile_draw=True)
    t.do(1, "look")
    t.do(1, "draw", "jack")
    t.do(2, "draw", "queen:right>1:left")  # seat 1 receives 9D into its left: looks once
    mine = {"4S", "5S", "6S", "9D"}
    first_seen = {}
    for i, e in enumerate(t.events):
        for c in cards_in(event_view(e, 1)) & mine:
            first_seen.setdefault(c, i)
            assert first_seen[c] == i, f"{c} shown twice to its owner"
    assert set(first_seen) == mine
    for s in (0, 1, 2, None):
        assert not cards_in(t.view(s)) & (mine | {"AC", "2C", "3C", "7D", "8D"})


def test_r4_hand_cards_face_down_for_everyone_until_the_reveal():
    t = Table(2, {0: ["AC", "2C", "3C"], 1: ["4S", "5S", "6S"]}, dealer=1)
    t.do(0, "look", "draw", "swap:left", "call")
    for s in (0, 1, None):
        assert t.view(s)["hands"] == [[None] * 3, [None] * 3]
    t.do(1, "draw", "discard")
    for s in (0, 1, None):
        assert t.view(s)["hands"][1] == ["4S", "5S", "6S"]


def test_r5_r21_held_card_visibility_in_views():
    t = Table(3, HANDS, top=["AH", "2H"], pile_draw=True)
    t.do(1, "draw")
    assert [t.view(s)["held"]["card"] for s in (0, 1, 2, None)] == [None, "AH", None, None]
    t.do(1, "discard")
    t.do(2, "draw:pile")
    assert [t.view(s)["held"]["card"] for s in (0, 1, 2, None)] == ["AH"] * 4


def test_r21_the_deck_is_never_shown_not_even_after_a_turnover():
    t = Table(2, {0: ["AC", "2C", "3C"], 1: ["4S", "5S", "6S"]}, dealer=1, draw_seconds=1)
    while t.r.turnovers == 0:
        t.advance(t.now + 1001)
    deck = set(t.deck_left)
    for s in (0, 1, None):
        v = t.view(s)
        assert v["deck_size"] == len(deck) and not cards_in(v) & deck
        assert "deck" not in v


def test_seed_and_deck_order_are_in_no_view_and_no_redacted_event():
    t = Table(3, HANDS, top=["KH", "AH", "2H"])
    t.do(1, "look", "draw", "king", "draw", "discard", "draw", "swap:left")
    for s in (0, 1, 2, None):
        raw = json.dumps([t.view(s), *t.seen(s)])
        assert t.seed not in raw and '"deck": [' not in raw
        dealt = [e for e in t.seen(s) if e["type"] == "round_dealt"]
        assert dealt and all(e["data"]["deck"] is None for e in dealt)
    assert "deck" in t.events[0].data  # the full event keeps it, for admins and replays


def test_r8_queen_event_shows_places_to_all_values_to_none_but_the_receivers():
    t = Table(3, HANDS, top=["QH"])
    q = of_type(t.do(1, "draw", "queen:right>0:centre"), "queen")[0]
    assert event_view(q, None)["data"] == {
        **q.data, "given": None, "received": None,
    }  # fmt: skip
    assert event_view(q, 1)["data"]["received"] == "2C"  # into seat 1's right: a look
    assert event_view(q, 0)["data"]["given"] is None  # into seat 0's centre: none


def test_redacted_events_keep_every_key():
    t = Table(3, HANDS, top=["AH", "JH"])
    t.do(1, "look", "draw", "swap:left")
    for e in t.events:
        for s in (0, 1, 2, None):
            form = event_view(e, s)
            assert set(form["data"]) == set(e.data) and form["type"] == e.type


def test_event_view_refuses_unknown_event_types():
    with pytest.raises(ValueError):
        event_view(Event("mystery", {"card": "AS"}), 0)


def test_view_awaiting_phases_and_deadline_timestamps():
    t = Table(3, HANDS, top=["AH"], draw_seconds=30)
    # The shared turn model: the seat awaited, and the instant the wait ends by itself.
    assert t.view(None)["awaiting"] == {"kind": "start", "seats": [1], "deadline": 5000}
    assert t.view(None)["deadlines"] == [
        {"key": "r1:memorise", "kind": "memorise_over", "at": 5000}
    ]
    t.advance(5000)
    # The draw's last on-time ms is 35000 (draw_deadline); its timeout takes effect at 35001.
    assert t.view(2)["awaiting"] == {"kind": "draw", "seats": [1], "deadline": 35001}
    assert t.view(2)["turn"]["draw_deadline"] == 35000
    t.do(1, "draw")
    assert t.view(2)["awaiting"]["kind"] == "play"
    t.do(1, "discard")
    v = t.view(0)
    assert v["windows"] == [{"seat": 1, "opened_at": 5000, "closes_at": 8000}]
    assert t.view(1)["you"]["can"] == ["call"]
    assert t.view(2)["you"]["can"] == ["look"]  # not its turn yet (starts at 7000)
    assert view(t.state, 2, 7000)["you"]["can"] == ["look", "draw_deck"]


# Wire forms -------------------------------------------------------------------------------------
def test_action_wire_round_trip():
    for a in [
        Action.look(), Action.draw("deck"), Action.draw("pile"), Action.swap("centre"),
        Action.discard(), Action.jack(), Action.queen("left", 3, "right"), Action.king(),
        Action.call(),
    ]:  # fmt: skip
        assert Action.from_wire(json.loads(json.dumps(a.to_wire()))) == a


@pytest.mark.parametrize(
    "wire",
    [
        None, [], "draw", {}, {"type": "fly"}, {"type": "draw"}, {"type": "draw", "source": "hat"},
        {"type": "swap"}, {"type": "swap", "place": "middle"},
        {"type": "queen", "place": "left", "target_seat": "2", "target_place": "left"},
        {"type": "queen", "place": "left", "target_seat": True, "target_place": "left"},
        {"type": "queen", "place": "left", "target_seat": 1},
        {"type": "look", "extra": 1}, {"type": "discard", "card": "AS"},
    ],
)  # fmt: skip
def test_malformed_wire_actions_are_bad_action(wire):
    with pytest.raises(IllegalAction) as e:
        Action.from_wire(wire)
    assert e.value.code == "bad_action"
    assert e.value.to_json() == {"code": "bad_action", "reason": e.value.reason}


def test_event_json_round_trip():
    e = Event("draw", {"seat": 1, "card": "AH", "source": "deck", "at": 3})
    assert Event.from_json(json.loads(json.dumps(e.to_json()))) == e


# JSON and replay --------------------------------------------------------------------------------
def test_state_json_round_trip_mid_king_chain_with_windows():
    t = Table(3, HANDS, top=["AH", "KH", "KD", "2H"], pile_draw=True, draw_seconds=45)
    t.do(1, "look", "draw", "discard")
    t.do(2, "draw", at=7000)
    t.do(2, "king", "draw", "king", "draw")
    raw = json.dumps(t.state.to_json())
    back = GameState.from_json(json.loads(raw))
    assert back == t.state and json.dumps(back.to_json()) == raw
    assert back.round.turn.kings == [["KH", 0], ["KD", 1]]


def test_state_json_rejects_unknown_versions():
    st = Table(2).state.to_json()
    with pytest.raises(ValueError):
        GameState.from_json({**st, "version": 99})


def test_replay_from_the_deck_order_reproduces_the_state():
    t = Table(3, HANDS, top=["QH", "KH", "AH", "2H", "JH"], draw_seconds=30, pile_draw=True)
    t.do(1, "look", "draw", "queen:left>2:left", "call")
    t.do(2, "draw", "king", at=7000)
    t.do(2, "draw", "discard", "draw", "discard")
    t.advance(200_000)
    assert t.replay() == t.state


def test_settings_json_round_trip():
    s = Settings(target_score=150, draw_seconds=45, pile_draw=True)
    assert Settings.from_json(json.loads(json.dumps(s.to_json()))) == s


# Purity -----------------------------------------------------------------------------------------
def test_apply_never_mutates_its_input():
    t = Table(3, HANDS, top=["KH", "QH", "AH"], draw_seconds=30, pile_draw=True)
    for seat, a, now in [
        (1, "look", 0), (1, "draw", 5000), (1, "king", 5000), (1, "draw", 5000),
        (1, "queen:left>2:left", 5000), (1, "draw", 5000), (1, "discard", 5000), (1, "call", 5000),
    ]:  # fmt: skip
        before = t.state.to_json()
        snapshot = t.state
        t.do(seat, a, at=now)
        assert snapshot.to_json() == before
    before = t.state.to_json()
    with pytest.raises(IllegalAction):
        apply(t.state, 0, Action.king(), 10**9)
    assert t.state.to_json() == before


def test_doctests_of_the_engine():
    for info in pkgutil.iter_modules([str(ENGINE_DIR)]):
        mod = importlib.import_module(f"games.engines.crisp.{info.name}")
        result = doctest.testmod(mod, optionflags=doctest.ELLIPSIS)
        assert result.failed == 0, info.name


def test_illegal_action_reasons_name_no_hidden_card():
    t = Table(3, HANDS, top=["KH"])
    t.do(1, "draw")
    for seat, a in [(1, "discard"), (1, "swap:left"), (2, "draw"), (0, "call"), (1, "jack")]:
        with pytest.raises(IllegalAction) as e:
            apply(t.state, seat, Action.from_wire(_wire(a)), t.now)
        assert not cards_in(e.value.reason)


def _wire(short: str) -> dict:
    from engine_support import act

    return act(short).to_wire()


def test_new_game_events_and_view_at_the_deal_are_json_safe():
    st, ev = new_game(seats=8, settings=Settings(), seed="json", now=123)
    for s in (None, *range(8)):
        json.dumps(view(st, s, 123))
        json.dumps([event_view(e, s) for e in ev])


def test_every_section_and_ruling_has_a_scenario_test():
    """rules/crisp.md numbers every section (s1-s10), ruling (r1-r27) and X1; each has a test whose
    name carries the number."""
    names = []
    for path in Path(__file__).parent.glob("test_engine_*.py"):
        names += [
            n.name
            for n in ast.walk(ast.parse(path.read_text()))
            if isinstance(n, ast.FunctionDef) and n.name.startswith("test_")
        ]
    tags = [f"s{i}" for i in range(1, 11)] + [f"r{i}" for i in range(1, 28)] + ["x1"]
    missing = [t for t in tags if not any(re.search(rf"(^test_|_){t}(_|$)", n) for n in names)]
    assert missing == []
