"""Site-wide middleware."""

from __future__ import annotations

from collections.abc import Callable

from django.conf import settings
from django.http import HttpRequest, HttpResponse, JsonResponse


def too_large_response() -> JsonResponse:
    """The API's answer to a body over `DATA_UPLOAD_MAX_MEMORY_SIZE`, in its error shape."""
    from games.exceptions import too_large_response_data

    return JsonResponse(too_large_response_data(), status=413)


class ApiBodyLimitMiddleware:
    """Refuse an API request whose declared body exceeds Django's limit, as JSON (413).

    Django enforces `DATA_UPLOAD_MAX_MEMORY_SIZE` (2.5 MB) wherever the body is read, and answers
    with its HTML 400 page; API clients expect `{code, detail}` like every other refusal. The
    declared `Content-Length` is checked here, before any middleware reads the body; a body
    without one that grows past the limit is caught in games.exceptions when DRF reads it.
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
        if limit is not None and request.path_info.startswith("/api/"):
            try:
                length = int(request.META.get("CONTENT_LENGTH") or 0)
            except ValueError:
                length = 0
            if length > limit:
                return too_large_response()
        return self.get_response(request)
