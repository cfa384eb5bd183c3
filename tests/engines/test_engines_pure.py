"""Every engine package is pure: standard library only, and importable without Django.

Parametrised over the registry, so a new game is checked the moment it is registered.
"""

from __future__ import annotations

import ast
import doctest
import importlib
import pkgutil
import subprocess
import sys
from pathlib import Path

import pytest

import games.engines
from games.engines import KINDS, engine_for

ENGINES_DIR = Path(games.engines.__file__).parent
ROOT = ENGINES_DIR.parent.parent


def _modules(kind: str) -> list[Path]:
    return sorted(Path(engine_for(kind).__file__).parent.glob("*.py"))


@pytest.mark.parametrize("kind", list(KINDS))
def test_engine_imports_only_the_standard_library_and_the_shared_base(kind: str) -> None:
    stdlib = set(sys.stdlib_module_names)
    for path in [*_modules(kind), ENGINES_DIR / "base.py", ENGINES_DIR / "__init__.py"]:
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level == 1:
                    continue  # the engine itself
                if node.level == 2:
                    assert node.module == "base", (path.name, node.module)
                    continue
                names = [node.module or ""]
            else:
                continue
            for name in names:
                assert name.split(".")[0] in stdlib | {"__future__"}, (path.name, name)


@pytest.mark.parametrize("kind", list(KINDS))
def test_engine_imports_without_django_or_the_rest_of_games(kind: str) -> None:
    code = (
        f"import sys; import {KINDS[kind]}; "
        "bad = [m for m in sys.modules if m.split('.')[0] in ('django', 'channels', 'celery') "
        f"or (m.startswith('games.') and not m.startswith('{KINDS[kind]}') "
        "and m not in ('games.engines', 'games.engines.base'))]; print(bad)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "[]"


@pytest.mark.parametrize("kind", list(KINDS))
def test_engine_offers_the_whole_interface(kind: str) -> None:
    """docs/ENGINE.md's names -- ``games.engines.protocol.Engine``'s members -- present in every
    engine (the web layer uses nothing else; tests/engines/test_engine_protocol.py checks
    their types and signatures)."""
    from games.engines.protocol import Engine

    eng = engine_for(kind)
    members = [n for n in vars(Engine) if not n.startswith("_")] + list(Engine.__annotations__)
    for name in members:
        assert hasattr(eng, name), (kind, name)
    assert kind == eng.KIND
    assert eng.IllegalAction is games.engines.base.IllegalAction


def test_doctests_of_the_shared_base() -> None:
    mod = importlib.import_module("games.engines.base")
    result = doctest.testmod(mod, optionflags=doctest.ELLIPSIS)
    assert result.failed == 0
    assert [m.name for m in pkgutil.iter_modules([str(ENGINES_DIR)])]
