"""The bare stack for `bench/scale.py`: a Channels echo consumer, nothing of the product.

Served by the same daphne binary with the same settings module (so the same channel layer,
Redis and prefix as the product) but as its *own* ASGI application, so it cannot be reached in
production: `crisp_site.asgi` never imports it and no URL of the site routes to it. Run only as
`daphne bench.echo_asgi:application` by the benchmark.

The shape mirrors what the product does per change, minus the game: one group per seat of a
table (`echo.<table>.seat.<n>`, one socket each) plus the table's spectators group (empty, as in
the benchmark's product run). A frame from a seat's socket `{"id": ..., "pad": N}` is padded once
to N characters (the size of the product's update frame) and sent to every seat group and the
spectators group of its table through the channel layer, exactly as `games.broadcast.send_all`
sends one frame per redaction group; each socket forwards what it receives.
"""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "crisp_site.settings")

import django

django.setup()

from channels.consumer import get_handler_name  # noqa: E402
from channels.generic.websocket import AsyncWebsocketConsumer  # noqa: E402
from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402
from django.urls import path  # noqa: E402

#: Seats per table: the groups of a table are its seats' plus the spectators'.
SEATS = int(os.environ.get("ECHO_SEATS", "4"))
#: `ECHO_BARE_DISPATCH=1` (session 19): dispatch each message without Channels' own
#: `aclose_old_connections()`, a hop to the database thread and back per message (a received
#: frame and each group message) to close connections this echo never opens. Off by default:
#: the echo is Channels' consumer as it ships (the issue's denominator); on, it is the fan-out
#: alone, which the product's own consumer loop matches (it makes no such hop per frame).
BARE_DISPATCH = os.environ.get("ECHO_BARE_DISPATCH") == "1"


class EchoConsumer(AsyncWebsocketConsumer):
    """One seat's socket of one table; what a seat sends reaches every seat of its table."""

    async def connect(self) -> None:
        kwargs = self.scope["url_route"]["kwargs"]
        self.table, self.seat = int(kwargs["table"]), int(kwargs["seat"])
        self.group = f"echo.{self.table}.seat.{self.seat}"
        await self.channel_layer.group_add(self.group, self.channel_name)
        await self.accept()

    async def disconnect(self, code: int) -> None:
        await self.channel_layer.group_discard(self.group, self.channel_name)

    async def receive(self, text_data: str | None = None, bytes_data: bytes | None = None) -> None:
        text = text_data or "{}"
        # The payload is built once per message, as the product encodes once per redaction.
        pad = 0
        marker = text.find('"pad":')
        if marker >= 0:
            digits = text[marker + 6 :].split(",")[0].split("}")[0]
            pad = max(0, int(digits) - len(text) - 10) if digits.strip().isdigit() else 0
        frame = f'{text[:-1]},"x":"{"x" * pad}"}}'
        message = {"type": "echo.frame", "text": frame}
        groups = [f"echo.{self.table}.seat.{n}" for n in range(SEATS)]
        groups.append(f"echo.{self.table}.spectators")
        await asyncio.gather(*(self.channel_layer.group_send(g, message) for g in groups))

    async def echo_frame(self, message: dict[str, Any]) -> None:
        await self.send(text_data=message["text"])

    if BARE_DISPATCH:

        async def dispatch(self, message: dict[str, Any]) -> None:
            """Channels' `dispatch` minus its `aclose_old_connections()` (see BARE_DISPATCH)."""
            handler = getattr(self, get_handler_name(message), None)
            if handler is None:
                raise ValueError(f"No handler for message type {message['type']}")
            await handler(message)


application = ProtocolTypeRouter(
    {"websocket": URLRouter([path("echo/<int:table>/<int:seat>/", EchoConsumer.as_asgi())])}
)
