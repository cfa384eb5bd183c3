"""How deep the random tests dig: one knob for a developer's run and CI.

The Hypothesis profile in force (``HYPOTHESIS_PROFILE``, else ``ci`` when ``CI`` is set, else
``default``; registered in tests/conftest.py) also chooses how many whole random games the
plain random-game tests play: ``default`` a quicker sample for ``make test`` on a laptop, ``ci``
the full depth (issue 20).  A test's own environment variable, where it has one, wins.
"""

from __future__ import annotations

import os

PROFILE = os.environ.get("HYPOTHESIS_PROFILE") or ("ci" if os.environ.get("CI") else "default")


def depth(default: int, ci: int) -> int:
    """``ci`` under the ``ci`` profile, else ``default``: how many random games (or examples)
    a test plays."""
    return ci if PROFILE == "ci" else default
