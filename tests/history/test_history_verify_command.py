"""The ``history_verify`` command: every stored game verified, a damaged file refused (in a
module of its own: ``--all`` verifies every game in the database, and test_history_export.py
keeps its random games there for the whole module)."""

from __future__ import annotations

import io
import json

import pytest
from django.core.management import CommandError, call_command

from history import export

pytestmark = pytest.mark.django_db


def test_the_verify_command(finished_game, tmp_path):
    g = finished_game(seed=9)
    out = io.StringIO()
    call_command("history_verify", "--all", stdout=out)
    assert f"game {g.pk}: ok" in out.getvalue()
    bad = export.game_export(g, audit=True)
    bad["audit"]["states"][3]["digest"] = "f" * 64
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(bad))
    with pytest.raises(CommandError):
        call_command("history_verify", "--file", str(path), stdout=io.StringIO())
    with pytest.raises(CommandError):
        call_command("history_verify", stdout=io.StringIO())
