"""Read by mypy, never run: each engine module assigned to the ``Engine`` Protocol type.

``tests/engines/test_engine_protocol.py::test_mypy_finds_every_engine_conforms`` type-checks
this file; mypy refuses an assignment whose module lacks a member of ``Engine`` or has one of
another type or signature, so a game that drifts from the contract fails the suite.
"""

from __future__ import annotations

from games.engines import cribbage, crisp, triple_crown
from games.engines.protocol import Engine

ENGINES: list[Engine] = [crisp, cribbage, triple_crown]
