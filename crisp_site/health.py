"""`/healthz`: does the database answer, does Redis answer, does at least one Celery worker?"""

from __future__ import annotations

import logging

import redis
from django.conf import settings
from django.db import connection
from django.http import HttpRequest, JsonResponse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET

from crisp_site.celery import app as celery_app

logger = logging.getLogger(__name__)


def _database() -> bool:
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
            return cursor.fetchone() == (1,)
    except Exception:  # any failure means "not healthy", never a 500
        return False


def _redis() -> bool:
    try:
        return bool(redis.Redis.from_url(settings.REDIS_URL, socket_timeout=2).ping())
    except (redis.exceptions.RedisError, OSError):
        return False


def _celery_workers() -> int:
    try:
        replies = celery_app.control.ping(timeout=1.0)
    except Exception:  # broker down: no worker can answer
        return 0
    return len(replies or [])


@never_cache
@require_GET
def healthz(request: HttpRequest) -> JsonResponse:
    """200 with every check true, else 503: for load balancers and for `make run`'s banner."""
    database = _database()
    redis_ok = _redis()
    workers = _celery_workers() if redis_ok else 0
    healthy = database and redis_ok and workers > 0
    body = {
        "status": "ok" if healthy else "unhealthy",
        "database": database,
        "redis": redis_ok,
        "celery": workers > 0,
        "celery_workers": workers,
    }
    response = JsonResponse(body, status=200 if healthy else 503)
    if not healthy:
        # The 503 is the report (load balancers and `make run` poll for it): not a server error
        # for django.request to log as ERROR each time, e.g. while the services come up.
        logger.info("unhealthy: %s", body)
        response._has_been_logged = True  # type: ignore[attr-defined]  # django.utils.log
    return response
