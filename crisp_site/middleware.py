"""Site-wide middleware."""

from __future__ import annotations

import io
import logging
from collections.abc import Callable

from django.conf import settings
from django.http import HttpRequest, HttpResponse, JsonResponse

logger = logging.getLogger(__name__)


def too_large_response() -> JsonResponse:
    """The API's answer to a body over `DATA_UPLOAD_MAX_MEMORY_SIZE`, in its error shape."""
    from games.exceptions import too_large_response_data

    return JsonResponse(too_large_response_data(), status=413)


def _is_api(request: HttpRequest) -> bool:
    return request.path_info.startswith("/api/")


class BodyLimitMiddleware:
    """One size limit for every request body, declared or chunked, answered before any view.

    Django enforces `DATA_UPLOAD_MAX_MEMORY_SIZE` (2.5 MB) only where a body is read, and only
    against a declared `Content-Length`:

    * too large with a `Content-Length`: Django answered with its HTML 400 page and logged a
      full ERROR traceback (`django.security.RequestDataTooBig`) for each such request -- a
      client's mistake reported as a server fault. Here it is a 413 (`{code, detail}` JSON on
      the API, a short text on pages) and one WARNING line.
    * `Transfer-Encoding: chunked` (no `Content-Length`): DRF takes a body without a length
      for an empty one, so `POST /api/v1/games/` with a chunked `{"kind": "cribbage"}` made a
      public Crisp game, and a 64 MB chunked body went through. The body (which the ASGI
      server has already received) is read here up to the limit: past it, the same 413;
      within it, the request goes on with its `Content-Length` set, so every reader downstream
      (DRF, Django's forms, the CSRF check) sees an ordinary request.
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
        if limit is None:
            return self.get_response(request)
        declared = request.META.get("CONTENT_LENGTH")
        if declared:
            try:
                length = int(declared)
            except ValueError:
                length = 0
            if length > limit:
                return self._too_large(request, f"{length} bytes declared")
        elif "chunked" in request.META.get("HTTP_TRANSFER_ENCODING", "").lower():
            # Under WSGI (the test client) Django reads `wsgi.input` only up to a declared
            # length, i.e. nothing here; under ASGI (daphne) its stream is the whole body.
            environ = getattr(request, "environ", None)
            stream = environ.get("wsgi.input") if isinstance(environ, dict) else None
            body = (stream or request).read(limit + 1)
            if len(body) > limit:
                return self._too_large(request, "a chunked body")
            # Downstream the request is as if it had declared its length.
            request._stream = io.BytesIO(body)  # type: ignore[attr-defined]
            request._read_started = False  # type: ignore[attr-defined]
            request.META["CONTENT_LENGTH"] = str(len(body))
        return self.get_response(request)

    @staticmethod
    def _too_large(request: HttpRequest, what: str) -> HttpResponse:
        limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
        logger.warning(
            "Refused a request body over %s bytes (%s): %s %s",
            limit,
            what,
            request.method,
            request.path_info,
        )
        if _is_api(request):
            return too_large_response()
        return HttpResponse(
            f"Request bodies are limited to {limit} bytes.\n",
            status=413,
            content_type="text/plain; charset=utf-8",
        )
