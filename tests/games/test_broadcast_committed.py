"""A broadcast built from what a change's author committed (issue 13, session 4).

The service layer hands the live layer the change it committed (``services.Committed``: the
row's new columns, the engine state, the events, the seat map), so the frames are built without
reading the game back. These tests pin that those frames are *exactly* the ones a read of the
database gives (``broadcast.change_messages``) -- every group, every redaction, every game --
and that building them costs no query.
"""

from __future__ import annotations

import json
import sys
from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

# The real module: the autouse ``live_calls`` fixture stands a recorder in for it afterwards.
from games import broadcast, services
from games.engines import KINDS, engine_for
from games.models import Game

pytestmark = pytest.mark.django_db


def _record(monkeypatch: pytest.MonkeyPatch) -> list[tuple[int, int, Any]]:
    """What the service layer hands ``game_changed`` on commit, change included."""
    seen: list[tuple[int, int, Any]] = []
    stand_in = sys.modules["games.broadcast"]
    monkeypatch.setattr(
        stand_in,
        "game_changed",
        lambda g, v, change=None: seen.append((g, v, change)),
        raising=False,
    )
    return seen


def _decoded(messages: list[tuple[str, dict[str, Any]]]) -> list[tuple[str, dict[str, Any]]]:
    return [(group, {**m, "text": json.loads(m["text"])}) for group, m in messages]


def _step(game: Game, fake_clock: Any) -> None:
    """One change: the first legal action of the first seat that has one, else the next
    deadline's timer."""
    game.refresh_from_db()
    engine = engine_for(game.kind)
    state = engine.GameState.from_json(game.state)
    fake_clock.advance(5)
    for seat in game.seats.select_related("user").order_by("number"):
        actions = [
            a
            for a in engine.legal_actions(state, seat.number, fake_clock.ms)
            if a.to_wire()["type"] != "call"
        ]  # keep the round going
        if actions:
            services.game_act(
                game=game.pk,
                user=seat.user,
                action=actions[0].to_wire(),
                expected_version=game.version,
            )
            return
    due = min(engine.pending_deadlines(state), key=lambda d: d.at)
    fake_clock.ms = max(fake_clock.ms, due.at)
    assert services.game_fire_deadline(game_id=game.pk, key=due.key)


@pytest.mark.parametrize("kind", KINDS)
def test_frames_from_the_committed_change_are_those_read_from_the_database(
    kind: str,
    start_game: Any,
    users: list[Any],
    fake_clock: Any,
    monkeypatch: pytest.MonkeyPatch,
    django_capture_on_commit_callbacks: Any,
) -> None:
    engine = engine_for(kind)
    seen = _record(monkeypatch)
    with django_capture_on_commit_callbacks(execute=True):
        game = start_game(users[: engine.MIN_SEATS], kind=kind)
    for _ in range(12):
        if Game.objects.get(pk=game.pk).status != Game.Status.PLAYING:
            break
        with django_capture_on_commit_callbacks(execute=True):
            _step(game, fake_clock)
        game_id, version, change = seen[-1]
        assert change is not None and change.game.version == version
        with CaptureQueriesContext(connection) as queries:
            built = broadcast.committed_messages([change])
        assert built is not None
        if change.seat_users is not None:
            assert len(queries) == 0  # nothing read back
        assert _decoded(built) == _decoded(broadcast.change_messages(game_id, version))
    assert len(seen) > 3


def test_a_burst_of_committed_changes_is_one_frame_and_a_hole_reads_the_table(
    start_game: Any,
    users: list[Any],
    fake_clock: Any,
    monkeypatch: pytest.MonkeyPatch,
    django_capture_on_commit_callbacks: Any,
) -> None:
    seen = _record(monkeypatch)
    game = start_game(users[:3])
    for _ in range(3):
        with django_capture_on_commit_callbacks(execute=True):
            _step(game, fake_clock)
    (_, _, c1), (_, _, c2), (_, _, c3) = seen[-3:]
    # The last two, handed over in either order: one frame per group from c2's predecessor,
    # with both changes' events and c3's state -- what a read of the table at c3 gives.
    coalesced = broadcast.committed_messages([c3, c2])
    assert coalesced is not None
    assert {m["prev_version"] for _, m in coalesced} == {c2.game.version - 1}
    assert {m["version"] for _, m in coalesced} == {c3.game.version}
    assert _decoded(coalesced) == _decoded(broadcast.change_messages(game.pk, c2.game.version))
    # A hole (v2 came from another process): the dispatcher reads the table instead.
    assert broadcast.committed_messages([c1, c3]) is None
