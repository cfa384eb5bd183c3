"""The shared front end never names a game: adding a game touches only its own files.

The table's controller and its parts (``static/js/table/``), the site's and the replay's shared
scripts (``static/js/*.js``, ``static/js/replay/``) and the templates every game renders through
(``templates/games/*.html``, the history pages) must know a game only through the hooks its own
module supplies (static/js/table/README.md).  A kind's name, its display name, or one of its
action or event types written into one of them is knowledge of that game in the wrong place:
the day a fourth game comes, someone would have to edit the shared file.  These tests read the
files as text, so they fail the moment such a word is written, whatever the code around it.

Two exceptions, each for a reason:

- the events *every* engine emits (docs/ENGINE.md: ``round_dealt``, ``game_over``) are the
  platform's own vocabulary, not one game's;
- a string passed to ``gettext`` is words on screen (a card's rank is "jack" in every card
  game), never a type on the wire.

Site pages that speak about the games (the home page, the footer) are not table machinery and
are not read; nor is the site's name "Crisp online".
"""

from __future__ import annotations

import ast
import importlib
import re
from pathlib import Path
from types import ModuleType

import pytest
from django.conf import settings

from games.engines import KINDS, engine_for

ROOT = Path(settings.BASE_DIR)
JS = ROOT / "static" / "js"
TEMPLATES = ROOT / "templates"

#: Events every engine emits (docs/ENGINE.md, "Events every engine emits").
PLATFORM_EVENTS = {"round_dealt", "game_over"}


def _event_types(kind: str) -> set[str]:
    """The event types ``kind``'s engine writes: every ``Event("type", ...)`` in its package."""
    found: set[str] = set()
    for path in Path(engine_for(kind).__file__).parent.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (
                isinstance(node, ast.Call)
                and getattr(node.func, "id", None) == "Event"
                and node.args
                and isinstance(node.args[0], ast.Constant)
                and isinstance(node.args[0].value, str)
            ):
                found.add(node.args[0].value)
    return found


def _action_types(engine: ModuleType) -> tuple[str, ...]:
    """The engine's ``ACTION_TYPES`` (its package's, or its ``actions`` module's)."""
    if hasattr(engine, "ACTION_TYPES"):
        return tuple(engine.ACTION_TYPES)
    return tuple(importlib.import_module(f"{engine.__name__}.actions").ACTION_TYPES)


def _game_words() -> dict[str, str]:
    """Word -> whose it is: every kind's id, and its action and event types."""
    words: dict[str, str] = {}
    for kind in KINDS:
        engine = engine_for(kind)
        words[kind] = f"the kind {kind}"
        for action in _action_types(engine):
            words[action] = f"{kind}'s action type"
        for event in _event_types(kind) - PLATFORM_EVENTS:
            words[event] = f"{kind}'s event type"
    return words


def _names() -> list[str]:
    """The games' display names (English, as the engines give them)."""
    return [engine_for(kind).NAME for kind in KINDS]


def shared_scripts() -> list[Path]:
    return sorted([*JS.glob("*.js"), *(JS / "table").glob("*.js"), *(JS / "replay").glob("*.js")])


def shared_templates() -> list[Path]:
    """The templates every game's pages render through: the games' shared ones and the
    history pages' (wherever the history app keeps them), never a kind's own folder."""
    found = [*(TEMPLATES / "games").glob("*.html"), *(TEMPLATES / "history").glob("*.html")]
    found += [p for p in ROOT.glob("*/templates/history/**/*.html") if ".venv" not in p.parts]
    return sorted(set(found))


def _strip_js_comments(src: str) -> str:
    src = re.sub(r"/\*.*?\*/", lambda m: "\n" * m.group(0).count("\n"), src, flags=re.S)
    return re.sub(r"(?m)(^|[^:\\\"'])//.*$", r"\1", src)


#: A JS string literal, and whether ``gettext(`` (or ``ngettext(``) comes right before it.
JS_STRING = re.compile(r"""(n?gettext\(\s*)?(["'`])((?:\\.|(?!\2).)*)\2""")


def js_findings(path: Path, words: dict[str, str], names: list[str]) -> list[str]:
    """Each untranslated string literal of ``path`` that is a game's word or names a game."""
    src = _strip_js_comments(path.read_text(encoding="utf-8"))
    found = []
    for m in JS_STRING.finditer(src):
        if m.group(1):
            continue  # words on screen
        text = m.group(3)
        line = src.count("\n", 0, m.start()) + 1
        if text in words:
            found.append(f"{path.relative_to(ROOT)}:{line}: {text!r} is {words[text]}")
        for name in names:
            if re.search(rf"\b{re.escape(name)}\b", text, re.I):
                found.append(f"{path.relative_to(ROOT)}:{line}: {text!r} names {name}")
    # An object's key or a property read the same way (`{turn: ...}`, `.hand_over`).
    for m in re.finditer(r"(?<![\w$\"'`])\.?([A-Za-z_]\w*)\s*(?=:(?!:))", src):
        key = m.group(1)
        if key in words and words[key].endswith("event type") and "_" in key:
            line = src.count("\n", 0, m.start()) + 1
            found.append(f"{path.relative_to(ROOT)}:{line}: key {key} is {words[key]}")
    return found


def template_findings(path: Path, words: dict[str, str], names: list[str]) -> list[str]:
    """A kind or one of its types quoted in a template tag (a branch or a default on it), or a
    game's display name, other than the site's own name."""
    src = path.read_text(encoding="utf-8")
    found = []
    for m in re.finditer(r"""["']([A-Za-z_]+)["']""", src):
        if m.group(1) in words:
            line = src.count("\n", 0, m.start()) + 1
            found.append(f"{path.relative_to(ROOT)}:{line}: {m.group(0)} is {words[m.group(1)]}")
    text = src.replace("Crisp online", "")
    for name in names:
        for m in re.finditer(rf"\b{re.escape(name)}\b", text):
            line = text.count("\n", 0, m.start()) + 1
            found.append(f"{path.relative_to(ROOT)}:{line}: names {name}")
    return found


def test_the_shared_files_are_the_ones_we_think() -> None:
    """The globs find the files (a move must not make the other tests pass by reading none)."""
    scripts = {p.relative_to(ROOT).as_posix() for p in shared_scripts()}
    assert {"static/js/table/controller.js", "static/js/table/connection.js"} <= scripts
    assert not any(p.startswith("static/js/games/") for p in scripts)
    templates = {p.relative_to(ROOT).as_posix() for p in shared_templates()}
    assert "templates/games/table.html" in templates
    assert not any(f"/games/{kind}/" in p for p in templates for kind in KINDS)
    assert any(p.endswith("history/replay.html") for p in templates)


def test_the_game_words_are_read_from_the_engines() -> None:
    """The list is the engines', so a new game's words are checked without editing this file."""
    words = _game_words()
    assert {"crisp", "cribbage", "triple_crown"} <= set(words)
    assert {"lay_away", "declare", "swap", "trick_won", "starter_cut", "pile_turned"} <= set(words)
    assert not PLATFORM_EVENTS & set(words)
    assert _names() == ["Crisp", "Cribbage", "Triple Crown"]


@pytest.mark.parametrize("path", shared_scripts(), ids=lambda p: p.relative_to(ROOT).as_posix())
def test_no_shared_script_names_a_game(path: Path) -> None:
    assert js_findings(path, _game_words(), _names()) == []


@pytest.mark.parametrize("path", shared_templates(), ids=lambda p: p.relative_to(ROOT).as_posix())
def test_no_shared_template_names_a_game(path: Path) -> None:
    assert template_findings(path, _game_words(), _names()) == []


def test_the_scan_finds_what_it_is_for() -> None:
    """The scanner on made-up files: a branch on an event type, a kind's stylesheet by default,
    a key naming a game's event -- found; a comment, a card's rank in gettext -- not."""
    words, names = _game_words(), _names()
    tmp = ROOT / "var"
    tmp.mkdir(exist_ok=True)
    js = tmp / "platform-scan-probe.js"
    js.write_text(
        "// the trick_won event is Triple Crown's\n"
        'const RANK = { J: gettext("jack") };\n'
        'if (ev.type === "trick_won") cue();\n'
        "const words = { starter_cut: 1 };\n"
        'const title = "Cribbage";\n',
        encoding="utf-8",
    )
    html = tmp / "platform-scan-probe.html"
    html.write_text(
        "{% block title %}Crisp online{% endblock %}\n"
        '{% with kind=game_kind|default:"crisp" %}{% endwith %}\n'
        "<p>Triple Crown</p>\n",
        encoding="utf-8",
    )
    try:
        js_found = js_findings(js, words, names)
        html_found = template_findings(html, words, names)
    finally:
        js.unlink()
        html.unlink()
    assert [f.split(": ", 1)[1] for f in js_found] == [
        "'trick_won' is triple_crown's event type",
        "'Cribbage' names Cribbage",
        "key starter_cut is cribbage's event type",
    ]
    assert [f.split(": ", 1)[1] for f in html_found] == [
        '"crisp" is the kind crisp',
        "names Triple Crown",
    ]
