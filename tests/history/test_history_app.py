"""History is its own Django app (issue 23): it imports the games app and never the other way
round, its records are still filed in the transaction that finishes a game, and a database
migrated before the move keeps its rows and the admin permissions granted on them."""

from __future__ import annotations

import ast
import random
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.contrib.contenttypes.models import ContentType
from django.db import connection, transaction
from django.db.migrations.executor import MigrationExecutor
from django.utils import timezone

import games
import history
from games import services, signals
from games.engines import KINDS
from games.models import Game
from history.models import GameRecord, PlayerStats, Rating

from .conftest import play

GAMES_DIR = Path(games.__file__).parent
HISTORY_DIR = Path(history.__file__).parent
GAMES_FILES = sorted(GAMES_DIR.rglob("*.py"))
HISTORY_FILES = sorted(p for p in HISTORY_DIR.rglob("*.py") if "migrations" not in p.parts)


def _imported(path: Path) -> set[str]:
    """Every module ``path`` imports (absolute names; ``import_module("…")`` calls too)."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.add(node.module)
        elif (
            isinstance(node, ast.Call)
            and getattr(node.func, "attr", getattr(node.func, "id", None)) == "import_module"
            and node.args
            and isinstance(node.args[0], ast.Constant)
        ):
            names.add(str(node.args[0].value))
    return names


def test_the_walk_sees_the_games_app_and_the_history_app() -> None:
    assert len(GAMES_FILES) > 30 and {"services/commit.py", "views.py", "signals.py"} <= {
        p.relative_to(GAMES_DIR).as_posix() for p in GAMES_FILES
    }
    assert {"models.py", "services.py", "selectors.py", "views.py", "apps.py"} <= {
        p.name for p in HISTORY_FILES
    }
    # The walk finds an import of history where there is one (so the next test can fail).
    assert "history" in _imported(HISTORY_DIR / "views.py")
    assert "history.hooks" in _imported(HISTORY_DIR / "export.py")
    assert "importlib" in _imported(HISTORY_DIR / "hooks.py")


@pytest.mark.parametrize("path", GAMES_FILES, ids=lambda p: p.relative_to(GAMES_DIR).as_posix())
def test_the_games_app_never_imports_history(path: Path) -> None:
    found = {n for n in _imported(path) if n == "history" or n.startswith("history.")}
    assert not found, (path.relative_to(GAMES_DIR).as_posix(), found)


@pytest.mark.parametrize("path", HISTORY_FILES, ids=lambda p: p.relative_to(HISTORY_DIR).as_posix())
def test_history_neither_imports_an_engine_nor_names_a_kind(path: Path) -> None:
    """Shared code like the games platform (tests/games/test_platform.py): a kind's knowledge
    reaches history only through its engine and its optional hook modules."""
    for name in _imported(path):
        assert name in ("games.engines", "games.engines.base") or not name.startswith(
            "games.engines."
        ), (path.name, name)
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Compare):
            for side in [node.left, *node.comparators]:
                consts = [side] if isinstance(side, ast.Constant) else []
                if isinstance(side, ast.Tuple | ast.List | ast.Set):
                    consts = [e for e in side.elts if isinstance(e, ast.Constant)]
                assert not any(c.value in KINDS for c in consts), (path.name, node.lineno)


def test_history_listens_to_the_end_of_games_once() -> None:
    from history.services import on_game_finished

    receivers = [r for r in signals.game_finished._live_receivers(Game)[0]]
    assert receivers.count(on_game_finished) == 1


class _Undo(Exception):
    pass


@pytest.mark.django_db
def test_the_record_is_filed_in_the_transaction_that_ends_the_game(
    users, start_game, fake_clock, staff
) -> None:
    """Same rows, same transaction as when the service layer called the records itself: they
    exist before the game's end commits and vanish with it when it rolls back."""
    g = start_game(users[:2], draw_seconds=30)
    g = play(g, fake_clock, random.Random(5), steps=8)
    assert g.status == Game.Status.PLAYING
    with pytest.raises(_Undo), transaction.atomic():
        services.game_end_now(game=g, user=staff)
        assert GameRecord.objects.get(game=g).rated
        assert Rating.objects.count() == PlayerStats.objects.count() == 2
        raise _Undo
    g.refresh_from_db()
    assert g.status == Game.Status.PLAYING
    assert not GameRecord.objects.exists() and not Rating.objects.exists()
    services.game_end_now(game=g, user=staff)
    assert GameRecord.objects.get(game=g).rated and Rating.objects.count() == 2


BEFORE = ("games", "0006_cribbage_hand_over_pegged")  # the last migration before the move


@pytest.mark.django_db(transaction=True)
def test_a_database_from_before_the_move_keeps_its_rows_and_permissions() -> None:
    """games 0007 + history 0001 on a database at the old head: the tables, their rows and the
    content types (so the admin permissions granted on the models) now belong to history."""
    executor = MigrationExecutor(connection)
    executor.migrate([BEFORE, ("history", None)])
    old = executor.loader.project_state([BEFORE]).apps
    # The account through today's model (its migrations are not rolled back here).
    user_id = get_user_model().objects.create(username="before").pk
    user = old.get_model("accounts", "User").objects.get(pk=user_id)
    game = old.get_model("games", "Game").objects.create(
        host=user, invite_code="HIST2222", kind="crisp", status="finished"
    )
    old.get_model("games", "GameRecord").objects.create(
        game=game, kind="crisp", finished_at=timezone.now(), players=[{"seat": 0}], rated=True
    )
    old.get_model("games", "Rating").objects.create(
        user=user, kind="crisp", mu=27.0, sigma=8.0, ordinal=3.0, games=1
    )
    OldContentType = old.get_model("contenttypes", "ContentType")
    # The test database's content type went back to the games app with history 0001 undone.
    ct = OldContentType.objects.get(app_label="games", model="gamerecord")
    perm = old.get_model("auth", "Permission").objects.get(
        content_type=ct, codename="view_gamerecord"
    )
    user.user_permissions.add(perm)
    try:
        executor = MigrationExecutor(connection)
        executor.migrate(executor.loader.graph.leaf_nodes())
        record = GameRecord.objects.get(game_id=game.pk)
        assert (record.kind, record.players, record.rated) == ("crisp", [{"seat": 0}], True)
        assert Rating.objects.get(user_id=user_id).mu == 27.0
        ContentType.objects.clear_cache()
        assert ContentType.objects.get_for_model(GameRecord).pk == ct.pk
        assert not ContentType.objects.filter(app_label="games", model="gamerecord").exists()
        assert get_user_model().objects.get(pk=user_id).has_perm("history.view_gamerecord")
    finally:
        executor = MigrationExecutor(connection)
        executor.migrate(executor.loader.graph.leaf_nodes())
        ContentType.objects.clear_cache()
