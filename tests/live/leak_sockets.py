"""The one WebSocket leak harness (issue 20): every receiver's socket of one game, drained by
event, every frame handed to the game's own knowledge tracker.

The three live leak tests (``test_leaks.py`` for Crisp, ``test_leaks_cribbage.py``,
``test_leaks_triple_crown.py``) play random games through these sockets; what a receiver may
know stays in each game's tracker (``tests/games/leak_<kind>.py``), handed in as ``check``.

Why drain by event rather than "until some quiet time of silence": the consumer sends every
socket exactly one ``update`` per stored version it has not yet covered (``game_update`` in
``games/consumers.py``; docs/PROTOCOL.md, "Versions and resync"), a ``snapshot`` or ``update``
answering a connect or a resync, and unversioned ``presence``/``spectators``/``chat`` frames.
So after a step the caller reads the game's stored version V, and ``drain(V)`` reads each
socket until it has received a ``snapshot``/``update`` of a version >= V -- a frame of that
change can no longer arrive late and escape the check, and no step pays a guessed silence on
every socket. A short look (``TRAIL``) then takes whatever is already queued behind it (a
presence frame). The wait for the frame is the suite's hang guard (``WAIT``), never a guess.
A resync or a reconnect reads its one answer at once (``resync``, ``reconnect``); ``close``
ends with a ping on every socket and reads up to its pong, so every frame the consumer sent
before is checked too.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from tests.live.conftest import communicator

#: After every socket's frame of the awaited version: one look this long, for all sockets at
#: once, for a frame queued behind it. Not a wait for anything that must come (those are
#: awaited by version, under the hang guard); a later unversioned frame (presence) is read by
#: the next drain or by ``close``.
TRAIL = 0.002

#: Frames that carry the game's state at their version: what a drain waits for.
VERSIONED = {"snapshot", "update"}

#: ``check(frame, receiver)``: the game's tracker judges one frame for one receiver (a seat's
#: number, None for a signed-in spectator, ``ANONYMOUS``); it raises AssertionError on a leak.
Check = Callable[[dict[str, Any], Any], None]


class Sockets:
    """One socket per receiver of one game; counts the frames it had checked."""

    def __init__(self, game_id: int, cookies: dict[Any, str | None], check: Check) -> None:
        self.game_id = game_id
        self.cookies = cookies
        self.check = check
        self.comms: dict[Any, Any] = {}
        #: The newest ``snapshot``/``update`` version each receiver has received (-1: none).
        self.version: dict[Any, int] = {}
        self.frames = 0

    async def open(self) -> None:
        """Connect every receiver; each one's snapshot is read by the next drain."""
        for who, cookie in self.cookies.items():
            self.comms[who] = communicator(self.game_id, cookie=cookie)
            self.version[who] = -1
            assert (await self.comms[who].connect())[0], f"{who!r} could not connect"

    def _note(self, who: Any, frame: dict[str, Any]) -> None:
        if frame["type"] in VERSIONED:
            self.version[who] = max(self.version[who], frame["version"])

    async def _read(self, who: Any) -> dict[str, Any]:
        """The next frame of `who`, checked and counted."""
        frame = await self.comms[who].receive_json_from()  # WAIT: the hang guard
        self._note(who, frame)
        self.check(frame, who)
        self.frames += 1
        return frame

    async def act(self, who: Any, ref: int, action: dict[str, Any]) -> list[dict[str, Any]]:
        """Send an act and return the frames up to its answer, *unchecked* and uncounted: the
        caller first teaches the tracker the version the act made, then checks them itself
        (a refusal may name the mover's own cards: only the caller knows the action)."""
        comm = self.comms[who]
        await comm.send_json_to({"type": "act", "id": ref, "action": action})
        held = []
        while True:
            frame = await comm.receive_json_from()  # WAIT: the hang guard
            self._note(who, frame)
            held.append(frame)
            if frame["type"] in {"ack", "error"} and frame.get("id") == ref:
                return held

    async def drain(self, version: int) -> int:
        """Read and check each socket until it has the frame of `version` (the game's stored
        version, read by the caller after its step), then, after one short look (``TRAIL``)
        for all of them, what is already queued behind it. How many frames were checked.

        One socket after the other, in the caller's task: every wait is for a frame that
        will come, so the others' frames queue meanwhile and the total wait is the slowest
        socket's, as if read at once; and a leak fails at once, with no sibling left waiting.
        (Reading the communicators from child tasks instead left a pooled PostgreSQL
        connection checked out at the test database's teardown.)"""
        before = self.frames
        for who in self.comms:
            while self.version[who] < version:
                await self._read(who)
        await asyncio.sleep(TRAIL)
        for who, comm in self.comms.items():
            while not await comm.receive_nothing(timeout=0):
                await self._read(who)
        return self.frames - before

    async def _answer(self, who: Any) -> None:
        """Read up to the ``snapshot``/``update`` answering a connect or a resync.

        Called between steps: no new version is stored meanwhile and every update up to the
        stored one was drained (the consumer skips an update it already covered), so the
        first versioned frame is the answer."""
        while (await self._read(who))["type"] not in VERSIONED:
            pass

    async def reconnect(self, who: Any, back: int) -> None:
        """`who` drops out and comes back `back` versions behind (a catch-up frame)."""
        await self.comms[who].disconnect()
        since = max(0, self.version[who] - back)
        self.comms[who] = communicator(
            self.game_id, cookie=self.cookies[who], query=f"version={since}"
        )
        assert (await self.comms[who].connect())[0], f"{who!r} could not reconnect"
        await self._answer(who)

    async def resync(self, who: Any, version: int) -> None:
        """`who` asks for a resync from `version` on its open socket."""
        await self.comms[who].send_json_to({"type": "resync", "version": version})
        await self._answer(who)

    async def close(self) -> None:
        """A ping on every socket, every frame up to its pong checked; then disconnect."""
        for comm in self.comms.values():
            await comm.send_json_to({"type": "ping", "id": "last"})
        for who, comm in self.comms.items():
            while (await self._read(who))["type"] != "pong":
                pass
            await comm.disconnect()
