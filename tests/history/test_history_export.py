"""Export → verify round trip over random finished games; damaged exports are caught; the
public export hides the seed and the deck order; the notation reads the game.

The module's random games (12 of every kind) are played once (``pool``) and read by every test
here: the checks that played a game of their own before (the damaged exports, the public
export's secrets, the notations) read one of these (issue 20: 36 games instead of 51).  The
``history_verify`` command, which verifies every game in the database, has its own module
(test_history_verify_command.py)."""

from __future__ import annotations

import copy
import json
import random
from collections.abc import Iterator
from typing import Any

import pytest

from games import services
from games.engines import KINDS
from games.models import Game, Round
from history import export
from tests.games.conftest import new_game, new_user

from .conftest import play, playing, seats_for, shared_db

# One worker plays the module's games (``pool``) and runs every test that reads them.
pytestmark = [pytest.mark.django_db, pytest.mark.xdist_group("history_export")]

SEEDS = range(12)


@pytest.fixture(scope="module")
def pool(django_db_setup: None, django_db_blocker: Any) -> Iterator[dict[tuple[str, int], Game]]:
    """Per kind and seed, a random game played to its end (``finished_game``'s)."""
    with shared_db(django_db_blocker):
        with playing() as clock:
            players = [new_user() for _ in range(8)]
            games = {}
            for kind in KINDS:
                for seed in SEEDS:
                    extra = {"draw_seconds": 30, "pile_draw": bool(seed % 2)}
                    g = new_game(
                        players[: seats_for(kind, seed)],
                        seed=f"hist-{seed}",
                        kind=kind,
                        **(extra if kind == "crisp" else {}),
                    )
                    g = play(g, clock, random.Random(seed))
                    assert g.status == Game.Status.FINISHED, "the random game did not finish"
                    games[(kind, seed)] = g
        yield games


@pytest.mark.parametrize("kind", list(KINDS))
@pytest.mark.parametrize("seed", SEEDS)
def test_every_random_game_verifies(pool, kind, seed):
    """Every registered kind: a game played at random, exported, verified by replay."""
    g = pool[(kind, seed)]
    doc = export.game_export(g, audit=True)
    json.dumps(doc)  # JSON-safe
    report = export.verify(doc)
    assert report.ok, report.problems
    assert report.replayed and report.versions_checked == len(doc["audit"]["calls"]) > 10
    assert report.events_checked == sum(1 for e in doc["events"] if e["origin"] == "engine")


def test_a_game_ended_by_the_admin_verifies(users, start_game, fake_clock, staff):
    g = start_game(users[:3], draw_seconds=30)
    g = play(g, fake_clock, random.Random(4), steps=12)
    services.game_end_now(game=g, user=staff)
    g.refresh_from_db()
    report = export.verify(export.game_export(g, audit=True))
    assert report.ok, report.problems


@pytest.mark.parametrize(
    "damage",
    [
        "event_card",
        "state_digest",
        "winners",
        "action",
        "missing_event",
        "format",
    ],
)
def test_damaged_exports_fail(pool, damage):
    g = pool[("crisp", 1)]  # 3 seats
    doc = copy.deepcopy(export.game_export(g, audit=True))
    if damage == "event_card":
        e = next(e for e in doc["events"] if e["type"] == "discard")
        e["data"]["card"] = "KH" if e["data"]["card"] != "KH" else "QH"
    elif damage == "state_digest":
        doc["audit"]["states"][-1]["digest"] = "0" * 64
    elif damage == "winners":
        doc["result"]["winners"] = [s for s in range(3) if s not in doc["result"]["winners"]]
    elif damage == "action":
        call = next(c for c in doc["audit"]["calls"] if c["call"] == "apply")
        call["seat"] = (call["seat"] + 1) % 3
    elif damage == "missing_event":
        doc["events"].pop(len(doc["events"]) // 2)
    else:
        doc["format_version"] = 99
    report = export.verify(doc)
    assert not report.ok and report.problems


def test_the_public_export_keeps_the_secrets(pool):
    g = pool[("crisp", 0)]
    doc = export.game_export(g)
    text = json.dumps(doc)
    assert "audit" not in doc and g.seed not in text
    for rnd in Round.objects.filter(game=g):
        assert json.dumps(rnd.deck) not in text
    dealt = [e for e in doc["events"] if e["type"] == "round_dealt"]
    assert dealt and all(e["data"]["deck"] is None for e in dealt)
    report = export.verify(doc)
    assert report.ok and not report.replayed and report.notes


def test_notation_reads_the_game(pool):
    g = pool[("crisp", 8)]  # 3 seats
    text = export.game_export(g)["notation"]
    lines = text.splitlines()
    assert lines[0].startswith("Crisp, 3 players: P0 ")
    assert sum(1 for line in lines if line.startswith("Round ")) == g.rounds.count()
    assert "reveal:" in text and lines[-1].startswith("Result: ")
    assert "??" not in text  # the full forms know every card but the deck order


@pytest.mark.parametrize("kind", ["cribbage", "triple_crown"])
@pytest.mark.parametrize("seed", range(2))
def test_cribbage_and_triple_crown_exports_keep_what_stays_secret(pool, kind, seed):
    """The public export of a finished game: its full forms, so every played and shown card,
    but never the seed, a deck order, a stock -- nor, in Cribbage, who laid away what."""
    g = pool[(kind, seed)]
    doc = export.game_export(g)
    text = json.dumps(doc)
    assert "audit" not in doc and g.seed not in text
    for rnd in Round.objects.filter(game=g):
        assert json.dumps(rnd.deck) not in text
    dealt = [e for e in doc["events"] if e["type"] == "round_dealt"]
    assert dealt and all(e["data"]["deck"] is None for e in dealt)
    if kind == "cribbage":
        assert all(e["data"]["hands"] == [None, None] for e in dealt)
        laid = [e for e in doc["events"] if e["type"] == "laid_away"]
        assert laid and all(e["data"]["cards"] is None for e in laid)
    else:
        assert all(all(len(h) == 13 for h in e["data"]["hands"]) for e in dealt)
        declared = [e for e in doc["events"] if e["type"] == "declared"]
        assert all(e["data"]["memo"] in ("high", "low") for e in declared)
    report = export.verify(doc)
    assert report.ok and not report.replayed


def test_cribbage_notation_reads_the_game(pool):
    g = pool[("cribbage", 8)]
    text = export.game_export(g)["notation"]
    lines = text.splitlines()
    assert lines[0].startswith("Cribbage, 2 players: P0 ")
    assert lines[2].startswith("Cut for deal: ")
    assert sum(1 for line in lines if line.startswith("Hand ")) == g.rounds.count()
    assert "  count: " in text and "  show: " in text and lines[-1].startswith("Result: P")
    # A hand of the notation is its hand_over: its shows, as the scorer counts them.
    shows = [ln for ln in lines if ln.startswith("  show: ")]
    hand_overs = [e for e in export.game_export(g)["events"] if e["type"] == "hand_over"]
    assert len(shows) == sum(1 for e in hand_overs if e["data"]["shows"])
    assert "??" not in text  # the full forms know every card the notation names


def test_triple_crown_notation_reads_the_game(pool):
    g = pool[("triple_crown", 8)]
    doc = export.game_export(g)
    lines = doc["notation"].splitlines()
    assert lines[0].startswith("Triple Crown, 4 players: P0 ")
    assert sum(1 for line in lines if line.startswith("Hand ")) == g.rounds.count()
    tricks = sum(1 for e in doc["events"] if e["type"] == "trick_won")
    assert sum(1 for ln in lines if ln.split(":")[0].strip().split(" ")[0].isdigit()) == tricks
    assert sum(1 for ln in lines if ln.startswith("  reveal: ")) == g.rounds.count()
    assert lines[-1].startswith("Result: P") and "??" not in doc["notation"]
