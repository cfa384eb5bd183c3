"""A kind without any history hook (no replay/stats/notation module) still gets everything
generic: records and ratings (winners first), games/wins/win rate, seat and spectator replays,
exports that verify, the replay's event words."""

from __future__ import annotations

import pytest

from history import export, replay, selectors
from history import services as records
from history.models import GameRecord, Rating

from .conftest import client_for

pytestmark = pytest.mark.django_db


@pytest.fixture
def no_hooks(monkeypatch):
    for module in (records, selectors, replay, export):
        monkeypatch.setattr(module, "hook", lambda kind, name: None)


def test_everything_generic_works_without_hooks(no_hooks, finished_game, users):
    g = finished_game(seed=2, n=3)
    record = GameRecord.objects.get(game=g)
    assert record.counters == []
    assert [p["placement"] for p in record.players] == [
        0 if s in g.winners else 1 for s in range(3)
    ]
    assert record.rated and Rating.objects.count() == 3
    stats = selectors.player_stats(user=users[0])
    assert stats[0]["games"] == 1 and stats[0]["details"] == []
    served, frames = replay.replay_frames(game=g, viewer="full")
    assert served == "spectator"
    spectator = replay.replay_frames(game=g, viewer=None)[1]
    assert frames == spectator  # no full view: exactly the spectator's frames, nothing more
    dealt = [e for f in frames for e in f["events"] if e["type"] == "round_dealt"]
    assert "deck" not in dealt[0]["data"] or dealt[0]["data"]["deck"] is None
    doc = export.game_export(g, audit=True)
    assert doc["notation"] is None
    report = export.verify(doc)
    assert report.ok, report.problems
    lines = replay.describe_events(g.kind, frames[5]["events"], ["a", "b", "c"])
    assert lines and all(isinstance(line, str) for line in lines)
    text = client_for(users[0]).get(f"/api/v1/games/{g.pk}/export/", {"output": "text"})
    assert text.status_code == 404 and text.json()["code"] == "no_notation"
