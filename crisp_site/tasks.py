"""Diagnostic Celery tasks (used by the health check's tests and by operators)."""

from __future__ import annotations

import time

import redis
from celery import shared_task
from django.conf import settings


@shared_task(name="crisp_site.record_run")
def record_run(key: str) -> None:
    """Write the wall time at which this task ran into Redis under `key`.

    Lets a test prove that a countdown task really ran on a worker, and when.
    """
    client = redis.Redis.from_url(settings.REDIS_URL)
    client.set(key, repr(time.time()), ex=300)
