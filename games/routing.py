"""WebSocket routes of the games app (included by crisp_site/routing.py)."""

from django.urls import path

from games.consumers import GameConsumer
from games.me_consumer import MeConsumer

websocket_urlpatterns = [
    path("ws/games/<int:game_id>/", GameConsumer.as_asgi()),
    # A person's own socket: their "your move" count (issue 26).
    path("ws/me/", MeConsumer.as_asgi()),
]
