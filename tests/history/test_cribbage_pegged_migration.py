"""Migration 0006: a Cribbage game stored before the engine's fix of ``hand_over.pegged`` (issue
21, item 9) still replays -- the migration rewrites the stored copies of that figure from the
game's own ``play``/``last_card`` events -- and games it need not touch stay as they were."""

from __future__ import annotations

import importlib
import random

import pytest
from django.apps import apps

from games.errors import ServiceError
from games.models import Event, Game, Round
from history import export, replay

from .conftest import play

pytestmark = pytest.mark.django_db

fix = importlib.import_module("games.migrations.0006_cribbage_hand_over_pegged").fix


def ended_in_the_play(users, start_game, fake_clock) -> Game:
    """A Cribbage game (to 31) that ended during the play: its last hand was never shown."""
    for i in range(30):
        g = start_game(users[:2], seed=f"pegged-{i}", kind="cribbage", timers={"target_score": 31})
        g = play(g, fake_clock, random.Random(i))
        last = Event.objects.filter(game=g, type="hand_over").order_by("-seq").first()
        if g.status == Game.Status.FINISHED and not last.data["shows"]:
            return g
    pytest.fail("no random game ended in the play")


def as_stored_before_the_fix(g: Game) -> list[int]:
    """Put back what the old engine stored: the winner's last pegging points left out."""
    last = Event.objects.filter(game=g, type="hand_over").order_by("-seq").first()
    final = (
        Event.objects.filter(game=g, type__in=("play", "last_card"), seq__lt=last.seq)
        .order_by("-seq")
        .first()
    )
    old = list(last.data["pegged"])
    old[final.data["seat"]] -= final.data["scored"]
    Event.objects.filter(pk=last.pk).update(data={**last.data, "pegged": old})
    g.state["last_hand"]["pegged"] = old
    Game.objects.filter(pk=g.pk).update(state=g.state)
    rnd = Round.objects.get(game=g, number=last.data["round"])
    Round.objects.filter(pk=rnd.pk).update(result={**rnd.result, "pegged": old})
    return old


def test_the_migration_mends_a_game_stored_with_the_old_figure(users, start_game, fake_clock):
    g = ended_in_the_play(users, start_game, fake_clock)
    right = Event.objects.filter(game=g, type="hand_over").order_by("-seq").first().data["pegged"]
    old = as_stored_before_the_fix(g)
    assert old != right
    g.refresh_from_db()
    with pytest.raises(ServiceError) as info:  # why the migration is needed
        replay.replay_frames(game=g, viewer="full")
    assert info.value.code == "replay_mismatch"
    fix(apps, None)
    g.refresh_from_db()
    last = Event.objects.filter(game=g, type="hand_over").order_by("-seq").first()
    assert last.data["pegged"] == right == g.state["last_hand"]["pegged"]
    assert Round.objects.get(game=g, number=last.data["round"]).result["pegged"] == right
    _, frames = replay.replay_frames(game=g, viewer="full")
    assert frames[-1]["version"] == g.version
    report = export.verify(export.game_export(g, audit=True))
    assert report.ok and report.replayed, report.problems
    # Run again: nothing left to mend, nothing changes.
    before = (dict(last.data), dict(g.state))
    fix(apps, None)
    last.refresh_from_db()
    g.refresh_from_db()
    assert (last.data, g.state) == before
