"""ASGI entry point: HTTP to Django, WebSocket to Channels consumers.

Django's ASGI app is created before anything that imports models (the routing modules do).

Garbage collection: once the application is built, `freeze_start_up_objects` imports what the
first socket and the first action would import anyway and moves everything alive out of the
collector's generations (`gc.freeze`), so a full collection in daphne walks only what the
process made since, not Django's, Channels', DRF's and the engines' start-up objects, and
raises the collector's thresholds (`GC_THRESHOLDS`). A collection pauses every socket of the
process; a full one walked ~205,000 objects at 100 tables, 115-148 ms of CPU (bench:
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

#: The collector's thresholds once the start-up objects are frozen (CPython's: 700, 10, 10).
#: A generation-0 pass every 10,000 net allocations of tracked objects instead of 700. The
#: daphne's objects nearly all die by reference counting within an action; at 700 a pass came
#: every ~0.1 s at 100 tables and promoted what a few actions had in flight at that instant, and
#: those promotions fed the generation-1 and 2 passes. At 10,000 (4 interleaved pairs, 30 s
#: windows, bench/results/session18-gc.md): ~8 passes a window of at most ~13 ms of CPU each
#: (at 700: 200-290 passes, up to 5-17 ms each), no generation-1 or 2 pass inside a window
#: (at 700: two full ones of 60-75 ms frozen, 115-148 ms not), the collector's CPU per action
#: 0.35 -> 0.06 ms. Cyclic garbage waits longer to be freed: at most ~10,000 young objects.
GC_THRESHOLDS = (10_000, 10, 10)

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
    import, the lazy modules' objects stayed tracked. What stays tracked is what sockets and
    games make (~75,000 objects for 400 sockets: each socket's own state, not frozen, since a
    socket's cycles must be collected once it closes). A second call does nothing: the freeze
    is a start-up step. Then the collector's thresholds are raised (`GC_THRESHOLDS` says why).
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
    gc.set_threshold(*GC_THRESHOLDS)


freeze_start_up_objects()
