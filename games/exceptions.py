"""The project-wide DRF exception handler: every refusal is ``{"code", "detail"}`` JSON.

Registered as ``REST_FRAMEWORK["EXCEPTION_HANDLER"]``.  One application error type
(``ServiceError``) plus the engine's ``IllegalAction`` and DRF's own exceptions (validation,
parsing, authentication, permissions, 404, 405 …) all come out in the same shape with a stable
``code``, so API clients switch on codes and never parse prose.  A database lock wait that
times out (PostgreSQL sqlstate 55P03 ``lock_not_available``, SQLite ``database is locked``) is a
503 ``busy`` with ``Retry-After`` -- the request changed nothing and may simply be retried.  A
database that cannot be reached at all (refused connections, an exhausted pool) is a 503
``unavailable`` with ``Retry-After``: nothing was read or written, so "try again" is true.  Any
other database error (a lost connection mid-request, a disk error …) is logged with its traceback
and answered 500 ``server_error`` -- never disguised as ``busy``, and still ``{code, detail}``
JSON (Django would answer its HTML 500 page).  A body past ``DATA_UPLOAD_MAX_MEMORY_SIZE`` is a 413
``too_large`` (Django would answer with its HTML 400 page); a throttled request is DRF's 429
``throttled`` with ``Retry-After`` (crisp_site/throttles.py).
"""

from __future__ import annotations

import logging
from typing import Any

from django.conf import settings
from django.core.exceptions import PermissionDenied as DjangoPermissionDenied
from django.core.exceptions import RequestDataTooBig
from django.db import DatabaseError, OperationalError, connection
from django.http import Http404
from rest_framework import exceptions as drf
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler
from rest_framework.views import set_rollback

from games.engines.base import IllegalAction
from games.errors import ServiceError

logger = logging.getLogger(__name__)

#: PostgreSQL's ``lock_not_available``: ``lock_timeout`` ran out, or ``NOWAIT`` found a lock.
_PG_LOCK_NOT_AVAILABLE = "55P03"

#: DRF's own codes, renamed where ours read better; the rest keep DRF's ``default_code``.
_RENAMED = {"parse_error": "malformed_json", "invalid": "invalid"}


def _flatten(detail: Any) -> str:
    """A one-line human summary of DRF's nested validation detail."""
    if isinstance(detail, dict):
        return "; ".join(f"{k}: {_flatten(v)}" for k, v in detail.items())
    if isinstance(detail, list):
        return " ".join(_flatten(v) for v in detail)
    return str(detail)


def _is_lock_timeout(exc: OperationalError) -> bool:
    """Whether a database error is a lock wait that ran out (and nothing else)."""
    cause = exc.__cause__
    sqlstate = getattr(cause, "sqlstate", None) or getattr(cause, "pgcode", None)
    if sqlstate is not None:
        return sqlstate == _PG_LOCK_NOT_AVAILABLE
    return "database is locked" in str(exc)  # SQLite: the busy timeout ran out


def _could_not_connect(exc: DatabaseError) -> bool:
    """Whether the database could not be reached at all (nothing was read or written).

    Django keeps no connection object when opening one failed (PostgreSQL refusing, SQLite
    unable to open its file); the psycopg pool's ``PoolTimeout`` (no connection to lend in
    time) says the same. A connection lost in the middle of a request is not this: what it
    did may or may not have happened.
    """
    cause = exc.__cause__
    if type(cause).__name__ == "PoolTimeout":
        return True
    return isinstance(exc, OperationalError) and connection.connection is None


def _is_json(context: dict[str, Any]) -> bool:
    """Whether the refused request declared a JSON body (or none: DRF's default is JSON)."""
    request = context.get("request")
    content_type = getattr(request, "content_type", "") or ""
    return not content_type or "json" in content_type.lower()


def too_large_response_data() -> dict[str, str]:
    limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
    return {"code": "too_large", "detail": f"Request bodies are limited to {limit} bytes."}


def api_exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    """Map any refusal to ``{"code": ..., "detail": ...}`` with its HTTP status."""
    if isinstance(exc, ServiceError):
        set_rollback()
        return Response(exc.to_json(), status=exc.status)
    if isinstance(exc, IllegalAction):
        set_rollback()
        err = ServiceError.from_illegal(exc)
        return Response(err.to_json(), status=err.status)
    if isinstance(exc, OperationalError) and _is_lock_timeout(exc):
        set_rollback()
        return Response(
            {"code": "busy", "detail": "The game is busy; retry in a moment."},
            status=503,
            headers={"Retry-After": "1"},
        )
    if isinstance(exc, DatabaseError):
        set_rollback()
        if _could_not_connect(exc):
            logger.warning("Database unreachable in an API request: %s", exc)
            return Response(
                {"code": "unavailable", "detail": "The service is unavailable; retry shortly."},
                status=503,
                headers={"Retry-After": "5"},
            )
        logger.exception("Database error in an API request", exc_info=exc)
        return Response(
            {"code": "server_error", "detail": "The server could not complete this request."},
            status=500,
        )
    if isinstance(exc, RequestDataTooBig):  # a body past DATA_UPLOAD_MAX_MEMORY_SIZE
        return Response(too_large_response_data(), status=413)
    if isinstance(exc, Http404):
        exc = drf.NotFound()
    elif isinstance(exc, DjangoPermissionDenied):
        exc = drf.PermissionDenied()
    response = drf_exception_handler(exc, context)
    if response is None:
        return None
    if isinstance(exc, drf.ValidationError):
        response.data = {"code": "invalid", "detail": _flatten(exc.detail), "errors": exc.detail}
        return response
    if isinstance(exc, drf.APIException):
        code = exc.get_codes()
        code = code if isinstance(code, str) else exc.default_code
        code = _RENAMED.get(code, code)
        if code == "malformed_json" and not _is_json(context):
            code = "malformed_body"  # a form or multipart body DRF could not parse
        response.data = {"code": code, "detail": _flatten(exc.detail)}
    return response
