"""Every WebSocket route of the site, in one list."""

from django.urls import path

from crisp_site.consumers import PingConsumer

websocket_urlpatterns = [
    path("ws/ping/", PingConsumer.as_asgi()),
]
