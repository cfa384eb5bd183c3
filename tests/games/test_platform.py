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
from games.engines import KINDS, engine_for

GAMES_DIR = Path(games.__file__).parent
PLATFORM = sorted(
    p
    for p in GAMES_DIR.rglob("*.py")
    if "engines" not in p.parts and "migrations" not in p.parts and "bots" not in p.parts
)


def test_the_platform_modules_are_the_ones_we_think() -> None:
    names = {p.relative_to(GAMES_DIR).as_posix() for p in PLATFORM}
    assert {"services/__init__.py", "services/commit.py", "services/lobby.py",
            "services/play.py", "services/bots.py", "services/night.py", "selectors.py",
            "broadcast.py", "tasks.py", "consumers.py", "admin.py", "views.py", "api/views.py",
            "api/serializers.py"} <= names  # fmt: skip


@pytest.mark.parametrize("path", PLATFORM, ids=lambda p: p.relative_to(GAMES_DIR).as_posix())
def test_no_platform_module_imports_a_particular_engine(path: Path) -> None:
    tree = ast.parse(path.read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            assert node.module in (
                "games.engines",
                "games.engines.base",
                "games.engines.protocol",
            ) or not (node.module.startswith("games.engines.")), (path.name, node.module)
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


ROOT = GAMES_DIR.parent
#: Every shared Python module: the platform's, the API's, the site's, the accounts', and the
#: history app's once it is one (issue 23).  Engines and bots are each game's own.
SHARED = sorted(
    p
    for d in ("games", "crisp_site", "accounts", "history")
    if (ROOT / d).is_dir()
    for p in (ROOT / d).rglob("*.py")
    if not {"engines", "bots", "migrations"} & set(p.relative_to(ROOT).parts)
)


def _vocabulary() -> dict[str, set[str]]:
    """Each action and event type a game declares, with the kinds declaring it -- less the
    types every engine shares by contract (``round_dealt``, ``game_over``: docs/ENGINE.md)."""
    out: dict[str, set[str]] = {}
    for kind in KINDS:
        engine = engine_for(kind)
        for name in {*engine.ACTION_TYPES, *engine.EVENT_TYPES}:
            out.setdefault(name, set()).add(kind)
    return {n: ks for n, ks in out.items() if ks != set(KINDS)}


def _value_strings(tree: ast.AST) -> list[ast.Constant]:
    """The string constants of ``tree`` used as values: not a dict key, a subscript or the
    key of ``.get/.pop/.setdefault`` (those name a field, such as an event's ``"timeout"``
    flag or an audit row's ``"call"``, not an action or an event)."""
    keys: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Dict):
            keys |= {id(k) for k in node.keys if k is not None}
        elif isinstance(node, ast.Subscript):
            keys.add(id(node.slice))
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in ("get", "pop", "setdefault")
            and node.args
        ):
            keys.add(id(node.args[0]))
    return [
        n
        for n in ast.walk(tree)
        if isinstance(n, ast.Constant) and isinstance(n.value, str) and id(n) not in keys
    ]


def test_the_shared_modules_are_the_ones_we_think() -> None:
    names = {p.relative_to(ROOT).as_posix() for p in SHARED}
    assert {"games/selectors.py", "games/api/views.py", "crisp_site/settings.py",
            "accounts/views.py"} <= names  # fmt: skip
    assert not any("/engines/" in n or "/bots/" in n for n in names)
    vocabulary = _vocabulary()
    assert {"look", "lay_away", "declare", "timeout", "laid_away", "declared"} <= set(vocabulary)


@pytest.mark.parametrize("path", SHARED, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_no_shared_module_names_a_game_s_action_or_event(path: Path) -> None:
    """What is one game's -- an action it takes, an event it emits -- is declared by its engine
    (``VERSION_EXEMPT_ACTIONS``, ``TIMEOUT_EVENTS``, ``ROUND_END_EVENT``, ``MOVE_KEYS`` …) and
    read from there, so a new game never means editing shared code (issue 23)."""
    vocabulary = _vocabulary()
    found = [
        (n.lineno, n.value, sorted(vocabulary[n.value]))
        for n in _value_strings(ast.parse(path.read_text()))
        if n.value in vocabulary
    ]
    assert found == [], path.relative_to(ROOT).as_posix()


def test_the_vocabulary_check_finds_a_game_s_word() -> None:
    tree = ast.parse('EXEMPT = {"look"}\nif ev.type == "timeout": d.get("timeout")\nx = {"a": 1}')
    assert [n.value for n in _value_strings(tree) if n.value in _vocabulary()] == [
        "look",
        "timeout",
    ]


TEMPLATES = ROOT / "templates"


def _own_template(rel: str) -> bool:
    """A game's own templates: its folder ``games/<kind>/``, and Crisp's rules pages, which
    live in ``rules/`` (the first game's, from before there were several)."""
    return rel.startswith(tuple(f"games/{k}/" for k in KINDS)) or rel.startswith("rules/")


def _template_code(text: str) -> str:
    """A template less its comments, its translated prose (``{% translate %}`` and
    ``{% blocktranslate %}`` -- words for people, such as the footer naming the games) and the
    site's own name ("Crisp online", which is not the game): what is left is markup and logic."""
    text = re.sub(r"\{#.*?#\}", "", text, flags=re.S)
    text = re.sub(r"\{%\s*comment\s*%\}.*?\{%\s*endcomment\s*%\}", "", text, flags=re.S)
    text = re.sub(r"\{%\s*blocktranslate.*?\{%\s*endblocktranslate\s*%\}", "", text, flags=re.S)
    text = re.sub(r"\{%\s*translate\s.*?%\}", "", text, flags=re.S)
    return re.sub(r"Crisp( <span>)?\s*online", "", text)


def _game_words() -> re.Pattern[str]:
    words = [w for kind in KINDS for w in (kind, engine_for(kind).NAME)]
    return re.compile(r"\b(" + "|".join(re.escape(w) for w in words) + r")\b")


SHARED_TEMPLATES = sorted(
    p for p in TEMPLATES.rglob("*.html") if not _own_template(p.relative_to(TEMPLATES).as_posix())
)


@pytest.mark.parametrize(
    "path", SHARED_TEMPLATES, ids=lambda p: p.relative_to(TEMPLATES).as_posix()
)
def test_no_shared_template_names_a_game(path: Path) -> None:
    """A shared page gets the game from its context (``game_kind``, ``kind_name``), never by
    naming one: no kind and no game name in its markup or logic."""
    found = _game_words().findall(_template_code(path.read_text()))
    assert found == [], path.relative_to(TEMPLATES).as_posix()


def test_the_template_check_finds_a_game_s_name() -> None:
    assert len(SHARED_TEMPLATES) > 20
    assert {p.relative_to(TEMPLATES).as_posix() for p in SHARED_TEMPLATES} >= {
        "base.html", "games/table.html", "games/lobby.html"
    }  # fmt: skip
    words = _game_words()
    code = _template_code(
        '{# crisp #}{% translate "Crisp" %}<title>Crisp online</title>'
        '{% url "rules:game" game_kind|default:"crisp" %}<p>Triple Crown</p>'
    )
    assert words.findall(code) == ["crisp", "Triple Crown"]


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


def _bot_game_words() -> dict[str, set[str]]:
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
    words = _bot_game_words()
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
    for kind, words in _bot_game_words().items():
        names = {kind, importlib.import_module(KINDS[kind]).NAME.lower()}
        for name in names:
            for pattern in (name, name.replace("_", " ")):
                for m in re.finditer(rf"\b{re.escape(pattern)}\b", source, re.IGNORECASE):
                    found.append((source.count("\n", 0, m.start()) + 1, m.group()))
        found += [(line, text) for line, text in code if text in words]
    assert not found, (path.name, sorted(set(found)))
