"""A test client for the game WebSocket that follows docs/PROTOCOL.md like a real one would.

It keeps the last version it applied, applies `update` frames that continue it, asks for a
`resync` on a gap, reconnects after any close with `?version=<last>` and records everything it
received, so tests can compare what different receivers ended up with.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import time
from collections.abc import Callable
from typing import Any

import websockets

_ids = itertools.count(1)
#: How long the client waits for the site by default (a connection, a first frame, an answer):
#: a ceiling for an event that will come, generous so that a busy machine is slow, not failing.
WAIT = 60


class Player:
    """One socket's view of a game (a player by token, or a spectator)."""

    def __init__(self, port: int, game_id: int, token: str, name: str = "") -> None:
        self.port = port
        self.game_id = game_id
        self.token = token
        self.name = name
        self.state: dict[str, Any] | None = None  # the engine view (payload["state"])
        self.payload: dict[str, Any] | None = None
        self.version = -1
        self.first_version = -1  # the version of the first snapshot
        self.events: list[dict[str, Any]] = []
        self.frames: list[dict[str, Any]] = []
        self.closes: list[int | None] = []
        self.presence: dict[str, Any] | None = None
        self.skew_ms = 0.0  # server clock minus ours, from the latest frame
        self.resyncs = 0
        self.snapshots = 0
        self.reconnect = True
        self._socket: Any = None
        self._task: asyncio.Task[None] | None = None
        self._pending: dict[Any, asyncio.Future[dict[str, Any]]] = {}
        self._changed = asyncio.Event()
        self._background: set[asyncio.Future[None]] = set()
        self.connected = asyncio.Event()

    # --- connection ---------------------------------------------------------------------

    def url(self, version: int | None) -> str:
        query = f"token={self.token}" + (f"&version={version}" if version is not None else "")
        return f"ws://127.0.0.1:{self.port}/ws/games/{self.game_id}/?{query}"

    async def start(self) -> Player:
        self._task = asyncio.create_task(self._run())
        await asyncio.wait_for(self.connected.wait(), WAIT)
        await self.wait_for(lambda p: p.version >= 0, WAIT, "first frame")
        self.first_version = self.version
        return self

    async def _run(self) -> None:
        while True:
            since = self.version if self.version >= 0 else None
            try:
                async with websockets.connect(
                    self.url(since), origin="http://localhost", open_timeout=10
                ) as socket:
                    self._socket = socket
                    self.connected.set()
                    async for text in socket:
                        self._on_frame(json.loads(text))
                    self.closes.append(socket.close_code)
            except (OSError, websockets.ConnectionClosed, websockets.InvalidHandshake) as error:
                code = getattr(getattr(error, "rcvd", None), "code", None)
                self.closes.append(code)
            finally:
                self._socket = None
                self.connected.clear()
                for future in self._pending.values():
                    if not future.done():
                        future.set_exception(ConnectionError("socket closed"))
                self._pending.clear()
            if not self.reconnect:
                return
            await asyncio.sleep(0.2)

    async def drop(self) -> None:
        """Close the socket as a flaky network would; `_run` reconnects unless told not to."""
        if self._socket is not None:
            await self._socket.close()

    async def pause(self) -> None:
        """Go away (no reconnect) until `resume`: everything meanwhile is missed."""
        self.reconnect = False
        await self.drop()
        if self._task is not None:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._task
        self._task = None

    async def resume(self) -> None:
        """Reconnect with `?version=<last>`, as a client back from a network outage does."""
        self.reconnect = True
        self._task = asyncio.create_task(self._run())
        await asyncio.wait_for(self.connected.wait(), WAIT)

    async def stop(self) -> None:
        self.reconnect = False
        await self.drop()
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._task

    # --- frames ---------------------------------------------------------------------------

    def _on_frame(self, frame: dict[str, Any]) -> None:
        self.frames.append(frame)
        if "server_time" in frame:
            self.skew_ms = frame["server_time"] - time.time() * 1000
        kind = frame["type"]
        if kind == "snapshot":
            self.snapshots += 1
            self._set(frame)
        elif kind == "update":
            if frame["version"] < self.version:
                pass  # older than what we have
            elif frame["prev_version"] > self.version:
                self.resyncs += 1  # a gap: ask for what we missed (PROTOCOL.md)
                task = asyncio.ensure_future(
                    self._send({"type": "resync", "version": self.version})
                )
                self._background.add(task)
                task.add_done_callback(self._background.discard)
            else:
                self.events.extend(e for e in frame["events"] if e["version"] > self.version)
                self._set(frame)
        elif kind in {"ack", "error", "pong"}:
            future = self._pending.pop(frame.get("id"), None)
            if future is not None and not future.done():
                future.set_result(frame)
        elif kind == "presence":
            self.presence = frame
        self._changed.set()

    def _set(self, frame: dict[str, Any]) -> None:
        self.version = frame["version"]
        self.payload = frame["state"]
        self.state = frame["state"]["state"]

    async def _send(self, frame: dict[str, Any]) -> None:
        if self._socket is not None:
            with contextlib.suppress(websockets.ConnectionClosed):
                await self._socket.send(json.dumps(frame))

    async def request(self, frame: dict[str, Any], timeout: float = WAIT) -> dict[str, Any]:
        ref = f"{self.name}-{next(_ids)}"
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._pending[ref] = future
        await self._send({**frame, "id": ref})
        return await asyncio.wait_for(future, timeout)

    async def act(self, action: dict[str, Any], **extra: Any) -> dict[str, Any]:
        return await self.request({"type": "act", "action": action, **extra})

    async def wait_for(
        self,
        check: Callable[[Player], bool],
        timeout: float,
        what: str = "",
        poll: float = 0.5,
    ) -> None:
        deadline = time.monotonic() + timeout
        while not check(self):
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError(f"{self.name}: timed out waiting for {what or check}")
            self._changed.clear()
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self._changed.wait(), min(left, poll))

    def server_now(self) -> float:
        return time.time() * 1000 + self.skew_ms

    # --- reading the table ------------------------------------------------------------------

    @property
    def seat(self) -> int | None:
        return None if self.state is None else self.state["seat"]

    def turn(self) -> dict[str, Any] | None:
        return None if self.state is None else self.state["turn"]

    def my_turn_to_draw(self) -> bool:
        """My turn and its draw is open: said by a frame (`phase == "draw"`), or, as
        docs/PROTOCOL.md tells clients, computed from `start_at` by the server's clock -- no
        frame announces the end of a start delay (`may_start` is silent)."""
        return self.may_draw_now()

    def draw_announced(self) -> bool:
        """My turn's draw opened by a frame (`phase == "draw"`): for tests of the timer that
        opens it (the memorise period's end has a timer; a start delay's does not)."""
        turn = self.turn()
        return bool(turn and turn["seat"] == self.seat and turn["phase"] == "draw")

    def may_draw_now(self) -> bool:
        """My turn, and its start delay is over by the server's clock (even if the timer that
        announces it has not run yet: the server applies due deadlines before any action)."""
        turn = self.turn()
        if not turn or turn["seat"] != self.seat:
            return False
        if turn["phase"] == "draw":
            return True
        return turn["phase"] == "start" and self.server_now() >= turn["start_at"] + 20

    def has(self, event_type: str, **data: Any) -> bool:
        return any(
            e["type"] == event_type and all(e["data"].get(k) == v for k, v in data.items())
            for e in self.events
        )

    def first(self, event_type: str, **data: Any) -> dict[str, Any] | None:
        for e in self.events:
            if e["type"] == event_type and all(e["data"].get(k) == v for k, v in data.items()):
                return e
        return None


def comparable(state: dict[str, Any] | None) -> dict[str, Any] | None:
    """A view without what depends on the instant it was rendered (`now`, `you.can`)."""
    if state is None:
        return None
    return {k: v for k, v in state.items() if k not in {"now", "you"}}
