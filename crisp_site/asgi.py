"""ASGI entry point: HTTP to Django, WebSocket to Channels consumers.

Django's ASGI app is created before anything that imports models (the routing modules do).
"""

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
