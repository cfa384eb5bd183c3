"""The site's last-resort error views (`handler500` in crisp_site/urls.py)."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views import defaults


def server_error(request: HttpRequest) -> HttpResponse:
    """An uncaught exception: the API's `{code, detail}` JSON under /api/, else the HTML page.

    DRF's exception handler (games/exceptions.py) shapes every error it sees, but a bug that
    escapes it (or one in a middleware) reaches Django, whose 500 page is HTML: a client of the
    API must be able to read every answer as JSON. (With DEBUG on, Django shows its debug page
    instead and never calls this.)
    """
    if request.path_info.startswith("/api/"):
        return JsonResponse(
            {"code": "server_error", "detail": "The server could not complete this request."},
            status=500,
        )
    return defaults.server_error(request)
