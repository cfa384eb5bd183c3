"""Fixtures shared by the site tests (presence's Redis clients, a table no other test plays)."""

from __future__ import annotations

import uuid

import pytest

from games import presence


@pytest.fixture
def fresh_clients(redis_server: str) -> None:
    """Presence clients are per loop; make sure this test's loop builds its own."""
    presence._clients.clear()
    presence._run_ids.clear()
    presence._touches.clear()


def presence_game() -> int:
    """A game id no test makes (above any real table's): presence keys of its own."""
    return 10**9 + uuid.uuid4().int % 10**6
