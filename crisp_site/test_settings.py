"""Test settings: the real settings with a few test-only changes.

The embedded Redis for tests listens on its own socket so a running `make run` is never touched;
with `REDIS_URL` set (CI) the tests use that server instead.

`CRISP_TEST_ISOLATION=name` gives a test run its own test database, Redis socket, Celery queue and
channel prefix, so several runs can share one machine at once (e.g. two developers' sessions).
Each pytest-xdist worker (`PYTEST_XDIST_WORKER`, e.g. `gw0`) adds its name to that, so the workers
of one run are as isolated from each other as two runs are; the processes a live test starts are
handed the combined name (`TEST_ISOLATION`, tests/processes.py) and so share their worker's.
"""

import os
from collections.abc import Mapping

from crisp_site import embedded_redis
from crisp_site.settings import *  # noqa: F403
from crisp_site.settings import (
    CACHES,
    CHANNEL_LAYERS,
    DATABASES,
    DEFAULT_THROTTLE_RATES,
    VAR_DIR,
    celery_url,
)


def test_isolation(environ: Mapping[str, str]) -> str:
    """The isolation name of this process: the outer name, then the xdist worker's, joined by _."""
    parts = [environ.get("CRISP_TEST_ISOLATION", ""), environ.get("PYTEST_XDIST_WORKER", "")]
    return "_".join(part for part in parts if part)


TEST_ISOLATION = test_isolation(os.environ)
_suffix = f"_{TEST_ISOLATION}" if TEST_ISOLATION else ""

if embedded_redis.environ_url() is None:
    EMBEDDED_REDIS_SOCKET = embedded_redis.socket_path(VAR_DIR, f"redis-test{_suffix}")
    REDIS_URL = embedded_redis.url_for(EMBEDDED_REDIS_SOCKET)
    CHANNEL_LAYERS["default"]["CONFIG"]["hosts"] = [{"address": REDIS_URL}]
    CELERY_BROKER_URL = celery_url(REDIS_URL)

CHANNEL_LAYERS["default"]["CONFIG"]["prefix"] = f"crisp-test{_suffix}"
CACHES["default"]["LOCATION"] = CHANNEL_LAYERS["default"]["CONFIG"]["hosts"][0]["address"]
CACHES["default"]["KEY_PREFIX"] = f"crisp-test{_suffix}"

# Tests make requests far faster than people: the throttles' real rates would trip the suite.
# tests/site/test_throttles.py puts the real rates (DEFAULT_THROTTLE_RATES) back and proves them.
THROTTLE_RATES = {scope: "100000/second" for scope in DEFAULT_THROTTLE_RATES}

# Own queue, so a test worker never takes a running `make run`'s tasks or the other way round.
CELERY_TASK_DEFAULT_QUEUE = f"crisp-test{_suffix}"
# Own control exchange: a broadcast (`/healthz`'s ping, `inspect`) reaches only the workers this
# test process started. On a shared Redis (CI's `REDIS_URL`) the other xdist worker's live
# site answered `test_unhealthy_without_a_worker`'s ping once (200 where 503 was due).
CELERY_CONTROL_EXCHANGE = f"crisp-test{_suffix}"

# Hashing passwords slowly is a feature in production and only a delay in tests.
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]

if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # A file, not :memory:, so that the processes the live tests start share it.
    DATABASES["default"]["TEST"] = {"NAME": str(VAR_DIR / f"test_db{_suffix}.sqlite3")}
else:
    DATABASES["default"]["TEST"] = {"NAME": f"test_{DATABASES['default']['NAME']}{_suffix}"}
    _pool = DATABASES["default"].get("OPTIONS", {}).get("pool")
    if isinstance(_pool, dict) and "DB_POOL_MAX_SIZE" not in os.environ:
        # Django's test client keeps a thread's connection for the thread's life (it turns off
        # the close at the end of each request), and concurrency tests run a dozen such threads
        # in one process: room for them. The pool still opens only what is used.
        _pool["max_size"] = 30

EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"
