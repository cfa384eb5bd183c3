"""A countdown task runs on a real worker process, against real Redis, after its countdown."""

from __future__ import annotations

import time
import uuid

import pytest

from crisp_site.tasks import record_run
from tests import processes as live


@pytest.mark.live
@pytest.mark.django_db(transaction=True)
def test_countdown_task_runs_on_a_real_worker(log_dir, redis_client) -> None:
    key = f"test:record_run:{uuid.uuid4()}"
    with live.running(live.celery_worker(log_dir)):
        sent = time.time()
        record_run.apply_async(args=[key], countdown=1)
        live.wait_until(lambda: redis_client.get(key) is not None, 60, "the task to run")
    ran = float(redis_client.get(key))
    # Loose on purpose: these machines are noisy. It ran, and not before its countdown.
    assert ran >= sent + 0.9
    assert ran - sent < 45
