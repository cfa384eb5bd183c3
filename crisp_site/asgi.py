"""ASGI entry point: HTTP to Django, WebSocket to Channels consumers.

Django's ASGI app is created before anything that imports models (the routing modules do).

Garbage collection: once the application is built, `freeze_start_up_objects` imports what the
first socket and the first action would import anyway and moves everything alive out of the
collector's generations (`gc.freeze`), so a full collection in daphne walks only what the
process made since, not Django's, Channels', DRF's and the engines' start-up objects. A full
pass pauses every socket of the process; it walked ~205,000 objects at 100 tables (bench:
`bench/gc_pause.py`, results in bench/results/session18-gc.md).
"""

import gc
import importlib
import os
from typing import Any

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "crisp_site.settings")
django_asgi_app = get_asgi_application()

from channels.auth import AuthMiddlewareStack  # noqa: E402
from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402
from channels.security.websocket import AllowedHostsOriginValidator  # noqa: E402

from crisp_site.routing import websocket_urlpatterns  # noqa: E402


class OriginOrTokenClientValidator:
    """Refuse a WebSocket whose `Origin` is foreign; let one without an `Origin` through.

    Browsers always send `Origin` on a WebSocket handshake, so a present one is checked
    against ALLOWED_HOSTS exactly as Channels' `AllowedHostsOriginValidator` does (that is
    the cross-site protection for session-cookie sockets). A handshake with no `Origin` is a
    non-browser client (docs/PROTOCOL.md: third parties authenticate by API token); it is not
    a browser acting on a victim's cookies, so it cannot be a cross-site attack. Channels'
    validator would refuse it (HTTP 403).
    """

    def __init__(self, application: Any) -> None:
        self.application = application
        self.validator = AllowedHostsOriginValidator(application)

    async def __call__(self, scope: Any, receive: Any, send: Any) -> Any:
        if scope["type"] == "websocket" and not any(
            name.lower() == b"origin" for name, _ in scope.get("headers", [])
        ):
            return await self.application(scope, receive, send)
        return await self.validator(scope, receive, send)


application = ProtocolTypeRouter(
    {
        "http": django_asgi_app,
        "websocket": OriginOrTokenClientValidator(
            AuthMiddlewareStack(URLRouter(websocket_urlpatterns))
        ),
    }
)


#: Imported inside functions by the consumers, the service layer and the channel layer on first
#: use (to keep import cycles and a bare start-up light): every socket or action imports them
#: anyway, so they are imported here, before the freeze, rather than after it.
FIRST_USE_MODULES = (
    "accounts.selectors",
    "accounts.tokens",
    "channels_redis.core",
    "crisp_site.throttles",
    "cryptography.fernet",
    "django.contrib.sessions.serializers",
    "games.broadcast",
    "games.errors",
    "games.layers",
    "games.scheduling",
    "games.selectors",
    "games.services",
    "games.timers",
    "psycopg_pool",  # the PostgreSQL backend imports it on the first connection (DB_POOL)
    "rest_framework.throttling",
)

_frozen = False


def freeze_start_up_objects() -> None:
    """Import what every socket and action will, then freeze what is alive (once per process).

    Why: CPython's full (generation-2) collection walks every object the collector tracks, and
    while it runs no socket of this daphne gets a frame. Most of those objects are start-up
    ones that live as long as the process (modules, classes, Django's and DRF's registries, URL
    patterns, the engines' tables), so walking them finds nothing. The documented remedy is
    `gc.freeze()` ("move them to a permanent generation and ignore them in all the future
    collections ... reduce the cost of full collections"): collect first so no start-up
    garbage is frozen, then freeze. Objects made later (sockets, games, requests) are collected
    as always; a frozen object is still freed by reference counting, only a reference cycle
    among frozen objects would never be collected, and start-up objects are not garbage.

    The lazily imported modules are imported here explicitly: frozen at the end of the bare
    import, only about half the objects were (the other half came with the first socket and
    action). A second call does nothing: the freeze is a start-up step.
    """
    global _frozen
    if _frozen:
        return
    _frozen = True
    from django.apps import apps
    from django.db import connections

    from games.engines import engine_for, kinds

    for name in FIRST_USE_MODULES:
        importlib.import_module(name)
    for kind in kinds():
        engine_for(kind)
    for model in apps.get_models():
        model._meta.get_fields()  # Django fills each model's field caches on first query
    for alias in connections:
        connections[alias].ops.compiler("SQLCompiler")  # the backend's compiler module
    gc.collect()
    gc.freeze()


freeze_start_up_objects()
