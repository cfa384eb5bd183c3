"""A diagnostic WebSocket: proves the socket and the channel layer work end to end."""

from __future__ import annotations

from typing import Any

from channels.generic.websocket import AsyncJsonWebsocketConsumer


class PingConsumer(AsyncJsonWebsocketConsumer):
    """Echoes `{"type": "ping", "data": X}` back as `pong`, routed through the channel layer.

    The reply travels out through Redis and back (group_send to a group holding only this socket)
    rather than straight down the socket, so a pong proves the layer works, not just the socket.
    """

    async def connect(self) -> None:
        self.group = f"ping.{self.channel_name.replace('!', '_')}"
        await self.channel_layer.group_add(self.group, self.channel_name)
        await self.accept()

    async def disconnect(self, code: int) -> None:
        await self.channel_layer.group_discard(self.group, self.channel_name)

    async def receive_json(self, content: Any, **kwargs: Any) -> None:
        if not isinstance(content, dict) or content.get("type") != "ping":
            await self.send_json({"type": "error", "code": "bad_frame", "detail": "Send a ping."})
            return
        await self.channel_layer.group_send(
            self.group, {"type": "pong.message", "data": content.get("data")}
        )

    async def pong_message(self, message: dict[str, Any]) -> None:
        await self.send_json({"type": "pong", "data": message["data"]})
