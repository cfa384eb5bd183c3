"""The per-person WebSocket: `/ws/me/` (issue 26, "your move, everywhere").

Every page of a signed-in person opens it (static/js/yourmove.js): on connect, and whenever
their "your move" list changes, it sends `{"type": "turns", "count": n, "etag": "..."}` -- how
many games await them and a token that changes with the list (the API's `etag`).  The service
layer's on-commit wake-up (`broadcast.turns_changed`) reaches the person's group `user.<id>`;
the message carries nothing, and the count is read here from the person's own seats
(`games.turns`), so no frame can carry anything about a game but that it awaits you.
Authentication as the game socket's: the session, or a personal API token (`?token=` or
`Authorization: Token <key>`); a refusal closes with 4401 before anything is sent.
"""

from __future__ import annotations

from typing import Any

from channels.generic.websocket import AsyncJsonWebsocketConsumer
from django.contrib.auth.models import AnonymousUser

from crisp_site.db import parallel_database_sync_to_async as database_sync_to_async
from games import broadcast, turns
from games.consumer_loop import SerialDispatchMixin
from games.consumers import CLOSE_UNAUTHENTICATED, _header_token, _query, _user_for_token


def _turns(user: Any) -> dict[str, Any]:
    items = turns.turn_list(user)
    return {"type": "turns", "count": len(items), "etag": turns.etag(items)}


class MeConsumer(SerialDispatchMixin, AsyncJsonWebsocketConsumer):
    """One socket of one signed-in person: their "your move" count, live (run by
    `games.consumer_loop`, as the game socket)."""

    group: str | None = None
    last: str | None = None

    async def connect(self) -> None:
        await self.accept()
        key = _query(self.scope, "token") or _header_token(self.scope)
        if key:
            user = await database_sync_to_async(_user_for_token)(key)
        else:
            user = self.scope.get("user") or AnonymousUser()
        if user is None or not user.is_authenticated:
            await self.close(code=CLOSE_UNAUTHENTICATED)
            return
        self.user = user
        self.group = broadcast.user_group(user.pk)
        # Subscribe before reading, so no change falls between the two.
        await self.channel_layer.group_add(self.group, self.channel_name)
        await self._send_turns()

    async def _send_turns(self) -> None:
        frame = await database_sync_to_async(_turns)(self.user)
        if frame["etag"] != self.last:
            self.last = frame["etag"]
            await self.send_json(frame)

    async def turns_changed(self, message: dict[str, Any]) -> None:
        await self._send_turns()

    async def receive(self, text_data: str | None = None, bytes_data: bytes | None = None) -> None:
        """Nothing to say to this socket: whatever a client sends is ignored."""

    async def disconnect(self, code: int) -> None:
        if self.group is not None:
            await self.channel_layer.group_discard(self.group, self.channel_name)
            self.group = None
