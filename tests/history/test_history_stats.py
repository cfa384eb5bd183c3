"""Statistics come from the stored events and agree with the stored results."""

from __future__ import annotations

import random

import pytest

from games import services
from games.models import Event, Game
from history import selectors as history_selectors
from history.models import GameRecord, PlayerStats

from .conftest import play

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("seed", range(4))
def test_crisp_counters_agree_with_the_results(finished_game, seed):
    g = finished_game(seed=seed, n=2 + seed)
    record = GameRecord.objects.get(game=g)
    reveals = list(Event.objects.filter(game=g, type="reveal").order_by("seq"))
    scores = [s.score for s in g.seats.order_by("number")]
    for seat, c in enumerate(record.counters):
        assert c["rounds"] == len(reveals) == g.rounds.filter(result__isnull=False).count()
        assert c["round_points"] == scores[seat]  # the rounds add up to the final score
        assert c["best_round"] == min(r.data["round_scores"][seat] for r in reveals)
        calls = [r for r in reveals if r.data["caller"] == seat]
        assert c["calls"] == len(calls)
        assert c["calls_won"] == sum(1 for r in calls if r.data["caller_strictly_lowest"])


def test_a_players_figures_across_games(finished_game, users):
    games = [finished_game(seed=s, players=users[:2]) for s in range(3)]
    stats = history_selectors.player_stats(user=users[0])[0]
    wins = sum(1 for g in games if 0 in g.winners)
    assert (stats["games"], stats["wins"]) == (3, wins)
    assert stats["win_rate"] == round(wins / 3, 4)
    row = PlayerStats.objects.get(user=users[0])
    details = {d["key"]: d["value"] for d in stats["details"]}
    assert details["rounds"] == row.counters["rounds"]
    assert details["average_round"] == round(
        row.counters["round_points"] / row.counters["rounds"], 2
    )
    per_game_best = [GameRecord.objects.get(game=g).counters[0]["best_round"] for g in games]
    assert details["best_round"] == min(per_game_best)
    if row.counters["calls"]:
        assert details["call_success"] == round(
            row.counters["calls_won"] / row.counters["calls"], 4
        )
    else:
        assert details["call_success"] is None


# -- Cribbage and Triple Crown: stacked first hands give known figures, the rest is random ------
def stacked_game(players, fake_clock, kind: str, deck: list[str], seed: str) -> Game:
    """A started game of ``kind`` whose first hand is dealt from ``deck`` (top first)."""
    game = services.game_create(host=players[0], kind=kind)
    for p in players[1:]:
        services.game_join(game=game, user=p, invite_code=game.invite_code)
    services.game_start(game=game, user=players[0], seed=seed, decks=[deck])
    game.refresh_from_db()
    return game


def act(game: Game, seat: int, action: dict) -> Game:
    user = game.seats.get(number=seat).user
    services.game_act(game=game, user=user, action=action, expected_version=game.version)
    game.refresh_from_db()
    return game


def engine_events(game: Game) -> list[Event]:
    return list(Event.objects.filter(game=game, origin=Event.Origin.ENGINE).order_by("seq"))


TWENTY_NINE = ["5C", "5D", "5H", "JS"]


def cribbage_deck() -> list[str]:
    """The pone gets 5C 5D 5H JS (and KC QD to lay away), the starter is 5S: a 29 hand."""
    from games.engines.cribbage import FULL_DECK

    pone = [*TWENTY_NINE, "KC", "QD"]
    dealer = ["AD", "2D", "3D", "4D", "6D", "7D"]
    head = [c for pair in zip(pone, dealer, strict=True) for c in pair] + ["5S"]
    return head + [c for c in FULL_DECK if c not in head]


@pytest.mark.parametrize("seed", range(3))
def test_cribbage_figures_from_a_stacked_29(users, fake_clock, seed):
    from games.engines.cribbage import score_hand

    g = stacked_game(users[:2], fake_clock, "cribbage", cribbage_deck(), f"crib-{seed}")
    pone = 1 - g.state["round"]["dealer"]
    assert sorted(g.state["round"]["hands"][pone]) == sorted([*TWENTY_NINE, "KC", "QD"])
    g = act(g, pone, {"type": "lay_away", "cards": ["KC", "QD"]})
    g = play(g, fake_clock, random.Random(seed))
    assert g.status == Game.Status.FINISHED
    record = GameRecord.objects.get(game=g)
    assert record.counters[pone]["best_hand"] == 29  # the highest hand there is
    # Everything else recomputed from the events by another road: the scorer on the shown cards
    # and the pegging events' credits, hand by hand.
    events = engine_events(g)
    for seat in (0, 1):
        shows = [e.data for e in events if e.type == "show" and e.data["seat"] == seat]
        own = [
            score_hand(s["cards"], s["starter"], is_crib=False).total
            for s in shows
            if s["what"] != "crib"
        ]
        cribs = [
            score_hand(s["cards"], s["starter"], is_crib=True).total
            for s in shows
            if s["what"] == "crib"
        ]
        finished_plays = {e.data["round"] for e in events if e.type == "show"}
        pegged = sum(
            e.data["scored"]
            for e in events
            if e.type in ("play", "last_card")
            and e.data["seat"] == seat
            and e.data["round"] in finished_plays
        )
        c = record.counters[seat]
        assert (c["hands"], c["hand_points"], c["best_hand"]) == (len(own), sum(own), max(own))
        assert (c["cribs"], c["crib_points"]) == (len(cribs), sum(cribs))
        assert (c["plays"], c["pegged"]) == (len(finished_plays), pegged)
    first = next(e.data for e in events if e.type == "show" and e.data["seat"] == pone)
    assert first["points"] == 29 and first["cards"] == TWENTY_NINE
    user = g.seats.get(number=pone).user
    figures = next(s for s in history_selectors.player_stats(user=user) if s["kind"] == "cribbage")
    details = {d["key"]: d["value"] for d in figures["details"]}
    c = record.counters[pone]
    assert details == {
        "hands": c["hands"],
        "average_hand": round(c["hand_points"] / c["hands"], 2),
        "best_hand": 29,
        "average_crib": round(c["crib_points"] / c["cribs"], 2) if c["cribs"] else None,
        "average_pegging": round(c["pegged"] / c["plays"], 2),
    }


def triple_crown_deck() -> list[str]:
    """The first seat after the dealer gets A♠, 2♦ and eleven more spades: Double Stakes."""
    from games.engines.triple_crown import FULL_DECK

    ds = ["AS", "KS", "QS", "JS", "TS", "9S", "8S", "7S", "6S", "5S", "4S", "3S", "2D"]
    rest = [c for c in FULL_DECK if c not in ds]
    return [ds[i // 4] if i % 4 == 0 else rest[i - i // 4 - 1] for i in range(52)]


def tally_roles(events: list[Event], seat: int) -> dict[str, list[bool]]:
    """Per role, the hands' successes from the tricks alone (§9, T10, X1), not the reasons."""
    out: dict[str, list[bool]] = {"high": [], "low": [], "team": [], "double": []}
    for e in events:
        if e.type != "hand_over":
            continue
        d = e.data
        role, t = d["roles"][seat], d["tricks"][seat]
        if role == "high":
            out["high"].append(t >= 5)
        elif role == "low":
            out["low"].append(t == 0)
        elif role == "team":
            high, low = d["roles"].index("high"), d["roles"].index("low")
            out["team"].append(d["tricks"][high] < 5 or d["tricks"][low] > 0)
        elif role == "double":
            out["double"].append(t == 0 or t >= 5 or d["early_end"] == "sure_tricks")
    return out


@pytest.mark.parametrize("seed", range(3))
def test_triple_crown_figures_from_a_stacked_double_stakes(users, fake_clock, seed):
    g = stacked_game(users[:4], fake_clock, "triple_crown", triple_crown_deck(), f"tc-{seed}")
    ds = g.state["round"]["ds_seat"]
    assert ds == (g.state["round"]["dealer"] + 1) % 4
    g = act(g, ds, {"type": "declare", "trumps": "S", "memo": "high"})
    g = play(g, fake_clock, random.Random(seed))
    assert g.status == Game.Status.FINISHED
    record = GameRecord.objects.get(game=g)
    events = engine_events(g)
    first = next(e.data for e in events if e.type == "hand_over")
    assert first["reasons"][ds][0]["code"] == "double_made"  # twelve top trumps cannot fail
    hands = sum(1 for e in events if e.type == "hand_over")
    scores = [s.score for s in g.seats.order_by("number")]
    for seat in range(4):
        c, tally = record.counters[seat], tally_roles(events, seat)
        assert c["hands"] == hands and c["points"] == scores[seat]
        for role, results in tally.items():
            assert (c[role], c[f"{role}_made"]) == (len(results), sum(results)), role
    assert record.counters[ds]["double_made"] >= 1
    user = g.seats.get(number=ds).user
    figures = next(
        s for s in history_selectors.player_stats(user=user) if s["kind"] == "triple_crown"
    )
    details = {d["key"]: d["value"] for d in figures["details"]}
    c = record.counters[ds]
    assert details["double_won"] == c["double_made"] >= 1
    assert details["double_lost"] == c["double"] - c["double_made"]
    assert details["double_success"] == round(c["double_made"] / c["double"], 4)
    for role in ("high", "low", "team"):
        want = round(c[f"{role}_made"] / c[role], 4) if c[role] else None
        assert details[f"{role}_success"] == want
    # Ratings rank four players by their totals (ties share a place), not winners-vs-rest.
    places = [p["placement"] for p in record.players]
    assert places == [sum(1 for o in scores if o > s) for s in scores]
