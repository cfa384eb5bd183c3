"""The live layer's tests (WebSocket, broadcast, timers) -- and the `tests.live` helpers.

This package has the import name `tests.live`, which also names the helper module
`tests/live.py` (real daphne / Celery processes); a package wins over a module of the same
name, so without this the helpers would be unreachable (`from tests import live` everywhere).
The helpers stay in tests/live.py; this re-exports them from there.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

_path = Path(__file__).resolve().parent.parent / "live.py"
_spec = importlib.util.spec_from_file_location("tests._live_processes", _path)
assert _spec is not None and _spec.loader is not None
_helpers = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = _helpers
_spec.loader.exec_module(_helpers)
globals().update({k: v for k, v in vars(_helpers).items() if not k.startswith("__")})
