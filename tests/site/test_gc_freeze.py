"""The daphne freezes its start-up objects out of the garbage collector once, at start-up.

`crisp_site.asgi` ends with `freeze_start_up_objects()` (its docstring says why: a full
collection walks every tracked object while no socket of the process gets a frame). Checked in
a fresh interpreter: the test process has imported much else, and may have frozen already.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

from tests.processes import BASE_DIR

PROBE = """
import gc, json, sys
import crisp_site.asgi as asgi
after_import = gc.get_freeze_count()
tracked = len(gc.get_objects())
asgi.freeze_start_up_objects()  # a second call: a no-op
late = sorted(set(asgi.FIRST_USE_MODULES) - set(sys.modules))
print(json.dumps({"frozen": after_import, "again": gc.get_freeze_count(),
                  "tracked": tracked, "missing": late,
                  "thresholds": [gc.get_threshold(), asgi.GC_THRESHOLDS]}))
"""


def test_importing_the_asgi_application_freezes_once() -> None:
    """Frozen once, with what the first socket and action import, and the thresholds raised."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST")}
    env.setdefault("DJANGO_SETTINGS_MODULE", "crisp_site.settings")
    done = subprocess.run(
        [sys.executable, "-c", PROBE],
        cwd=BASE_DIR,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    out = json.loads(done.stdout.strip().splitlines()[-1])
    # Django, Channels, DRF, the engines: well over 100,000 objects on this project.
    assert out["frozen"] > 50_000, out
    assert out["again"] == out["frozen"], "the freeze is a start-up step, done once"
    # What is left tracked is what was made after the freeze: a few objects, not the start-up.
    assert out["tracked"] < out["frozen"] // 10, out
    assert out["missing"] == []
    current, wanted = out["thresholds"]
    assert current == wanted and wanted[0] > 700, "the raised thresholds are in force"
