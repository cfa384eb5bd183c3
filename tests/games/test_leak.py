"""No REST response carries a card (or, in Triple Crown, a role) its receiver may not know.

One harness (``leak_kit.play_and_check``) plays random games of every registered kind through
the API and checks every response with the kind's knowledge tracker (``leak_<kind>.py``,
written from the rules over the unredacted record), with a guest player at the table and an
anonymous spectator reading beside the signed-in one (issue 24). ``leak_games()`` games per kind:
``CRISP_LEAK_GAMES``, or the Hypothesis profile's count. Below, each tracker is shown not to be
vacuous: the unredacted record fails it.
"""

from __future__ import annotations

import copy
import random

import pytest

from games import services
from games.engines import KINDS
from games.models import Event, Game

from . import leak_cribbage as cribbage
from . import leak_crisp as crisp
from . import leak_triple_crown as triple_crown
from .conftest import client_for
from .leak_kit import LeakTable, leak_games, play_and_check, with_guest

TABLES: dict[str, type[LeakTable]] = {
    "crisp": crisp.CrispTable,
    "cribbage": cribbage.CribbageTable,
    "triple_crown": triple_crown.TripleCrownTable,
}


def test_every_registered_kind_has_a_leak_table():
    """A new game is not registered without its tracker here."""
    assert set(TABLES) == set(KINDS)


@pytest.mark.parametrize("game", range(leak_games()))
@pytest.mark.parametrize("kind", sorted(KINDS))
def test_no_response_leaks(kind, game, users, make_user, fake_clock):
    """Every seat (a guest's among them), a signed-in spectator and an anonymous one."""
    seed = f"{kind}-{game}"
    players = with_guest(users, random.Random(seed))
    table = play_and_check(TABLES[kind], players, make_user(), fake_clock, seed=seed)
    table.coverage()
    assert any(p.username.startswith("guest") for p in table.players)
    assert table.stats["anonymous payloads"] > 0
    if kind == "cribbage":
        # The redaction checks cover the moments that matter: shows, hand ends, game end --
        # in these very games (no game of their own): every one reaches the shows and a hand's
        # end, and the first (played under every profile) the game's end.
        assert {"show", "hand_over", "go", "last_card"} <= table.types, table.types
        if game == 0:
            assert table.stats["finished"], dict(table.stats)


# --- the trackers are not vacuous ----------------------------------------------------------
def test_the_crisp_tracker_catches_a_leak(users, start_game):
    """The tracker itself is not vacuous: the unredacted log would fail it."""
    g = start_game(users[:2])
    services.game_act(game=g, user=users[0], action={"type": "look"}, expected_version=3)
    know = crisp.Knowledge(g)
    raw = [{"seq": e.seq, "data": e.data} for e in Event.objects.filter(game=g, type="look")]
    know.check_events(raw, 0, "raw")  # seat 0 may see its own fresh look
    with pytest.raises(AssertionError):
        know.check_events(raw, 1, "raw")


def _cribbage_started(users, start_game) -> Game:
    g = start_game(users[:2], kind="cribbage", seed="tracker")
    return g


def test_the_cribbage_tracker_catches_leaks(users, start_game):
    """Not vacuous: unredacted events and states fail it, the engine's own public facts pass."""
    g = _cribbage_started(users, start_game)
    know = cribbage.Knowledge().refresh(g)
    dealt = Event.objects.get(game=g, type="round_dealt")
    raw = {"seq": dealt.seq, "type": dealt.type, "data": dealt.data}
    # The raw deal: both hands and the deck.
    with pytest.raises(AssertionError):
        know.check_events([raw], 0, "raw deal")
    with pytest.raises(AssertionError):
        know.check_events([raw], None, "raw deal")
    # A seat may see its own six cards in the deal, but not the other's.
    mine = {**raw, "data": {**dealt.data, "deck": None, "hands": [dealt.data["hands"][0], None]}}
    know.check_events([mine], 0, "own hand")
    with pytest.raises(AssertionError):
        know.check_events([mine], 1, "the other's hand")
    # The stored snapshot holds the deck: no receiver may get it.
    for seat in (0, 1, None):
        with pytest.raises(AssertionError):
            know.check_state(g.state, seat, "raw state")
    # A card mentioned inside a text is caught too.
    other = dealt.data["hands"][1][0]
    with pytest.raises(AssertionError):
        know.check_state({"detail": f"you cannot beat {other} there"}, 0, "text")


def test_the_cribbage_tracker_keeps_a_lay_away_to_its_own_seat(users, start_game):
    """A lay-away names its cards to its own seat only, even once the crib has been shown."""
    g = _cribbage_started(users, start_game)
    hands = Event.objects.get(game=g, type="round_dealt").data["hands"]
    for seat, user in enumerate(users[:2]):
        services.game_act(
            game=g,
            user=user,
            action={"type": "lay_away", "cards": hands[seat][:2]},
            expected_version=None,
        )
    know = cribbage.Knowledge().refresh(g)
    laid = Event.objects.filter(game=g, type="laid_away").order_by("seq")
    assert laid.count() == 2
    first = laid[0]
    raw = {"seq": first.seq, "type": first.type, "data": first.data}
    know.check_events([raw], first.data["seat"], "own lay-away")
    with pytest.raises(AssertionError):
        know.check_events([raw], 1 - first.data["seat"], "the other's lay-away")
    with pytest.raises(AssertionError):
        know.check_events([raw], None, "a spectator")
    # The starter is public now; the other's kept cards are not.
    starter = Event.objects.get(game=g, type="starter_cut").data["card"]
    know.check_state({"starter": starter}, None, "starter")
    kept_other = sorted(set(hands[1]) - set(hands[1][:2]))
    with pytest.raises(AssertionError):
        know.check_state({"hand": kept_other}, 0, "the other's hand")


def _tc_started(users, seed: str) -> Game:
    game = services.game_create(host=users[0], kind="triple_crown", settings={})
    for u in users[1:4]:
        services.game_join(game=game, user=u)
    services.game_start(game=game, user=users[0], seed=seed)
    game.refresh_from_db()
    return game


def test_the_triple_crown_tracker_catches_leaks(users, fake_clock):
    game = _tc_started(users, triple_crown.seeds(1, "tc-crown", double=False)[0])
    truth = triple_crown.Truth(game)
    h = truth.hands[1]
    assert h.ds is None
    api = client_for(users[0])
    view = api.get(f"/api/v1/games/{game.pk}/state/").json()["state"]
    truth.check_view(view, 0, "honest")  # the real view passes
    # Another seat's cards in the state.
    bad = copy.deepcopy(view)
    bad["hands"][1] = h.dealt[1]
    with pytest.raises(AssertionError, match="cards"):
        truth.check_view(bad, 0, "cards")
    # The raw deal event, as stored.
    raw = [
        {"seq": e.seq, "type": e.type, "data": e.data}
        for e in Event.objects.filter(game=game, type="round_dealt")
    ]
    with pytest.raises(AssertionError):
        truth.check_events(raw, 1, "raw deal")
    # Another seat's role, as a flag on its seat or as words in a message.
    other = next(s for s in range(4) if h.roles[s] != h.roles[0])
    bad = copy.deepcopy(view)
    bad["seat_roles"] = {str(other): h.roles[other]}
    with pytest.raises(AssertionError, match="role"):
        truth.check_view(bad, 0, "role flag")
    word = {"high": "High Crown", "low": "Low Crown", "team": "Team Crown"}[h.roles[other]]
    with pytest.raises(AssertionError, match="role"):
        truth.check_payload({"detail": f"{word} may not do that"}, 0, "role words")
    # A spectator told anybody's role.
    with pytest.raises(AssertionError):
        truth.check_payload({"role": h.roles[2]}, None, "spectator")
    # A derived field only one seat gets.
    bad = copy.deepcopy(view)
    bad["partner_hint"] = other
    spec = client_for(users[5]).get(f"/api/v1/games/{game.pk}/state/").json()["state"]
    truth.check_same_as_spectator(view, spec, 0, "honest")
    with pytest.raises(AssertionError, match="differs"):
        truth.check_same_as_spectator(bad, spec, 0, "derived")


def test_the_triple_crown_tracker_catches_a_memo_leak(users, fake_clock):
    seed = triple_crown.seeds(1, "tc-memo")[0]
    game = _tc_started(users, seed)
    truth = triple_crown.Truth(game)
    ds = truth.hands[1].ds
    services.game_act(
        game=game,
        user=users[ds],
        action={"type": "declare", "trumps": "H", "memo": "high"},
        expected_version=game.version,
    )
    truth.refresh()
    raw = [
        {"seq": e.seq, "type": e.type, "data": e.data}
        for e in Event.objects.filter(game=game, type="declared")
    ]
    truth.check_events(raw, ds, "the declarer")  # its own memo: fine
    other = (ds + 1) % 4
    with pytest.raises(AssertionError, match="Double Stakes hand"):
        truth.check_events(raw, other, "raw declared")
    with pytest.raises(AssertionError):
        truth.check_events(raw, None, "raw declared, spectator")
