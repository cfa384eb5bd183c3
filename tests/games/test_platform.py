"""One platform for every game: the shared layers never name a game, and old games migrate.

The service layer, selectors, broadcast, timers, API, consumers, admin and pages reach the rules
only through ``games.engines.engine_for(game.kind)``.  These tests fail the day one of them
imports a particular engine or branches on a particular kind, which is what would make adding a
game mean editing them.
"""

from __future__ import annotations

import ast
import importlib
import re
from pathlib import Path

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

import games
from games.engines import KINDS

GAMES_DIR = Path(games.__file__).parent
PLATFORM = sorted(
    p
    for p in GAMES_DIR.rglob("*.py")
    if "engines" not in p.parts and "migrations" not in p.parts and "bots" not in p.parts
)


def test_the_platform_modules_are_the_ones_we_think() -> None:
    names = {p.relative_to(GAMES_DIR).as_posix() for p in PLATFORM}
    assert {"services.py", "selectors.py", "broadcast.py", "tasks.py", "consumers.py",
            "admin.py", "views.py", "api/views.py", "api/serializers.py"} <= names  # fmt: skip


@pytest.mark.parametrize("path", PLATFORM, ids=lambda p: p.relative_to(GAMES_DIR).as_posix())
def test_no_platform_module_imports_a_particular_engine(path: Path) -> None:
    tree = ast.parse(path.read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            assert node.module in ("games.engines", "games.engines.base") or not (
                node.module.startswith("games.engines.")
            ), (path.name, node.module)
        if isinstance(node, ast.Import):
            for alias in node.names:
                assert not alias.name.startswith("games.engines."), (path.name, alias.name)


@pytest.mark.parametrize("path", PLATFORM, ids=lambda p: p.relative_to(GAMES_DIR).as_posix())
def test_no_platform_module_branches_on_a_kind(path: Path) -> None:
    """No ``kind == "crisp"`` / ``kind in ("cribbage", …)``: a comparison with a kind's name."""
    tree = ast.parse(path.read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            for side in [node.left, *node.comparators]:
                consts = [side] if isinstance(side, ast.Constant) else []
                if isinstance(side, ast.Tuple | ast.List | ast.Set):
                    consts = [e for e in side.elts if isinstance(e, ast.Constant)]
                for c in consts:
                    assert c.value not in KINDS, (path.name, node.lineno, c.value)
        if isinstance(node, ast.MatchValue) and isinstance(node.value, ast.Constant):
            assert node.value.value not in KINDS, (path.name, node.lineno)


@pytest.mark.django_db(transaction=True)
def test_existing_games_migrate_to_crisp_with_their_settings() -> None:
    """Migration 0002: a game of before (three setting columns) becomes a ``crisp`` game with
    the same settings, and the reverse migration puts them back."""
    executor = MigrationExecutor(connection)
    executor.migrate([("games", "0001_initial")])
    old = executor.loader.project_state([("games", "0001_initial")]).apps
    from django.contrib.auth import get_user_model

    # The account through today's model (its migrations are not rolled back here).
    user_id = get_user_model().objects.create(username="before").pk
    user = old.get_model("accounts", "User").objects.get(pk=user_id)
    Game = old.get_model("games", "Game")
    g1 = Game.objects.create(host=user, invite_code="AAAA2222", target_score=150,
                             draw_seconds=45, pile_draw=True)  # fmt: skip
    g2 = Game.objects.create(host=user, invite_code="BBBB3333")
    try:
        executor = MigrationExecutor(connection)
        executor.migrate([("games", "0002_game_kind")])
        new = executor.loader.project_state([("games", "0002_game_kind")]).apps
        Game2 = new.get_model("games", "Game")
        assert Game2.objects.get(pk=g1.pk).kind == "crisp"
        assert Game2.objects.get(pk=g1.pk).settings == {
            "target_score": 150, "draw_seconds": 45, "pile_draw": True
        }  # fmt: skip
        assert Game2.objects.get(pk=g2.pk).settings == {
            "target_score": 100, "draw_seconds": None, "pile_draw": False
        }  # fmt: skip
        executor = MigrationExecutor(connection)
        executor.migrate([("games", "0001_initial")])
        back = Game.objects.get(pk=g1.pk)
        assert (back.target_score, back.draw_seconds, back.pile_draw) == (150, 45, True)
    finally:
        executor = MigrationExecutor(connection)
        executor.migrate(executor.loader.graph.leaf_nodes())


@pytest.mark.django_db
def test_each_kinds_host_menu_is_in_the_openapi_schema(users) -> None:
    from games.engines import engine_for

    from .conftest import client_for

    schema = client_for(users[0]).get("/api/schema/?format=json").json()
    body = schema["components"]["schemas"]["GameCreateInput"]["properties"]
    variants = body["settings"]["anyOf"]  # the menus share option names: anyOf, not oneOf
    assert len(variants) == len(KINDS)
    for kind, variant in zip(KINDS, variants, strict=True):
        assert set(variant["properties"]) == set(engine_for(kind).SETTINGS_SCHEMA["properties"])
        for prop in variant["properties"].values():
            assert not isinstance(prop.get("type"), list)  # OpenAPI 3.0: `nullable`, no lists
    ref = body["kind"]["allOf"][0]["$ref"].rsplit("/", 1)[1]
    assert set(schema["components"]["schemas"][ref]["enum"]) == set(KINDS)


@pytest.mark.django_db
def test_game_lists_filter_by_kind(users) -> None:
    from games import services

    from .conftest import client_for

    game = services.game_create(host=users[0])
    c = client_for(users[1])
    listed = c.get("/api/v1/games/", {"kind": game.kind}).json()
    assert [g["id"] for g in listed] == [game.pk] and listed[0]["kind"] == game.kind
    others = [k for k in KINDS if k != game.kind]
    for other in others:
        assert c.get("/api/v1/games/", {"kind": other}).json() == []
    assert c.get("/api/v1/games/", {"kind": "chess"}).status_code == 400
    from django.test import Client

    browser = Client()
    browser.force_login(users[1])
    page = browser.get("/games/", {"kind": game.kind}).content.decode()
    assert f"/games/{game.pk}/join/" in page
    for other in others:
        other_page = browser.get("/games/", {"kind": other}).content.decode()
        assert f"/games/{game.pk}/join/" not in other_page


# -- the shared bot modules ---------------------------------------------------------------------
#: The bot modules every game shares: the registry, the level frame, the search, the memory and
#: the referee.  A game's knowledge lives in its own module, ``games/bots/<kind>.py``.
SHARED_BOT_MODULES = [
    GAMES_DIR / "bots" / name
    for name in ("__init__.py", "base.py", "ismcts.py", "observation.py", "arena.py")
]


def _event_types(kind: str) -> set[str]:
    """Every event type the engine of ``kind`` creates (``Event("swap", ...)`` in its source)."""
    found: set[str] = set()
    package = Path(importlib.import_module(KINDS[kind]).__file__ or "").parent
    for path in package.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.Call):
                continue
            name = node.func.attr if isinstance(node.func, ast.Attribute) else None
            name = node.func.id if isinstance(node.func, ast.Name) else name
            if name != "Event":
                continue
            args = [*node.args[:1], *(k.value for k in node.keywords if k.arg == "type")]
            found |= {a.value for a in args if isinstance(a, ast.Constant)}
    return found


def _game_words() -> dict[str, set[str]]:
    """Per kind: its name, its display name, its action types and its event types -- less the
    words every game shares (``round_dealt``, ``game_over``: the platform's vocabulary)."""
    words = {}
    for kind in KINDS:
        engine = importlib.import_module(KINDS[kind])
        actions = importlib.import_module(f"{KINDS[kind]}.actions").ACTION_TYPES
        words[kind] = {kind, engine.NAME.lower(), *actions, *_event_types(kind)}
    common = set.intersection(*words.values())
    return {kind: w - common for kind, w in words.items()}


def test_the_game_words_are_found() -> None:
    """The word lists the next test checks against are not empty (a renamed engine constant
    would otherwise make it pass without checking anything)."""
    words = _game_words()
    for kind in KINDS:
        assert kind in words[kind] and len(words[kind]) > 3, (kind, words[kind])
    assert "swap" in words["crisp"] and "lay_away" in words["cribbage"]
    assert "declared" in words["triple_crown"]


@pytest.mark.parametrize("path", SHARED_BOT_MODULES, ids=lambda p: p.name)
def test_no_shared_bot_module_names_a_game(path: Path) -> None:
    """Issue 23: the registry, the level frame, the search, the memory and the referee know no
    game.  No kind or game name anywhere in them (code, docstrings, comments: a frame that
    says "Crisp's window" is one that was written for Crisp), and no action or event name of
    one game in their code -- a string, a name, an attribute, a parameter.  A game's words
    belong in ``games/bots/<kind>.py``."""
    source = path.read_text()
    tree = ast.parse(source)
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    code: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        line = getattr(node, "lineno", 0)
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            if id(node) not in docstrings:
                code.append((line, node.value))
        elif isinstance(node, ast.Name):
            code.append((line, node.id))
        elif isinstance(node, ast.Attribute):
            code.append((line, node.attr))
        elif isinstance(node, ast.arg) or (isinstance(node, ast.keyword) and node.arg):
            code.append((line, node.arg))
        elif isinstance(node, ast.FunctionDef | ast.ClassDef):
            code.append((line, node.name))
    found = []
    for kind, words in _game_words().items():
        names = {kind, importlib.import_module(KINDS[kind]).NAME.lower()}
        for name in names:
            for pattern in (name, name.replace("_", " ")):
                for m in re.finditer(rf"\b{re.escape(pattern)}\b", source, re.IGNORECASE):
                    found.append((source.count("\n", 0, m.start()) + 1, m.group()))
        found += [(line, text) for line, text in code if text in words]
    assert not found, (path.name, sorted(set(found)))
