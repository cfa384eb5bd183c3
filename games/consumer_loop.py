"""The receive loop of our WebSocket consumers: Channels' semantics, without a task per message.

Channels 4.3's `AsyncConsumer.__call__` runs `channels.utils.await_many_dispatch`: for every
message of every socket it creates a new asyncio task for the next `receive()` of that source
and goes through an `asyncio.wait` (a future, a done-callback on each pending task, a set of
them, all undone again). A broadcast frame reaches every socket of its group, so that cost is
paid per socket per frame, and it was the largest single per-socket cost of a delivered frame
in the daphne (bench/RESULTS.md, Session 16, issue 25).

`SerialDispatchMixin` runs the same consumer with `dispatch_serially` instead: one long-lived
reader task per source (the client's ASGI `receive`, the channel layer's `receive` of the
socket's channel), each awaiting its source directly and dispatching what it got under one
lock. Why this design rather than the others:

* A reader per source keeps each source's order (a reader asks its source for the next message
  only once the last one is dispatched, exactly as Channels re-arms a source's task only after
  dispatching its result), and no message is taken from a source before it can be dispatched
  (a queue between readers and one dispatcher would read ahead of the handlers).
* Awaiting the layer's `receive` in the consumer's own task, and waking it when the client
  speaks, would mean cancelling that `receive`; channels-redis treats a cancelled `receive` as
  the consumer leaving (it unsubscribes the channel), so the layer's `receive` is never
  cancelled except at the end, as in Channels.
* The lock keeps dispatch serialised, one handler at a time per consumer, as Channels' single
  loop does; taking a free `asyncio.Lock` does not yield to the loop, so it costs nothing when
  nothing else is being dispatched.

What stays as in Channels (tests/live/test_consumer_loop.py holds each):

* An exception, from a handler or from a source, ends the consumer with that exception once
  any handler already running has finished, and no handler starts after it: the reader that
  failed keeps the lock (a source's exception is raised only once the reader holds it, which
  is when Channels' loop would have looked at that source's result). `StopConsumer` is such
  an exception and ends the consumer quietly, as in `AsyncConsumer.__call__`.
* At the end (an exception, `StopConsumer`, or the consumer's task cancelled, as daphne does
  to a consumer still running after its client left) every reader is cancelled and awaited
  before `__call__` returns; a reader cancelled in its source's `receive` cancels that
  `receive`, which is how channels-redis cleans up the channel, as with Channels' loop.
* The handlers of both readers run in one `contextvars` context (a copy of the consumer's at
  the start), so a context variable set by one handler is seen by the next, whichever source
  it came from, as when Channels ran them all in the consumer's task.
* Without a channel layer there is one source, and it is read and dispatched inline in the
  consumer's task (no task at all).

The send side: every frame a socket sends went through Channels' session middleware's `send`
(`AuthMiddlewareStack` wraps it), which looks at the session (two lazy-object reads and an
`is_empty()`) on every message and can act only on `http.response.start`; 3.4-3.9 us per
frame here. `past_session_wrapper` hands the consumer the `send` under it when the wrapper
cannot act on any WebSocket message, so a frame costs what it did minus that.

Checked against Channels 4.3.2's `AsyncConsumer.__call__` and `await_many_dispatch`; async
consumers only (a `SyncConsumer`'s `base_send` is wrapped in `async_to_sync`, not here).
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import functools
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from channels.exceptions import StopConsumer
from channels.layers import get_channel_layer
from channels.sessions import InstanceSessionWrapper

Message = dict[str, Any]
Source = Callable[[], Awaitable[Message]]


async def dispatch_serially(
    sources: Sequence[Source], dispatch: Callable[[Message], Awaitable[Any]]
) -> None:
    """Pass every message of `sources` to `dispatch`, one at a time, until something raises.

    `channels.utils.await_many_dispatch`'s contract (never returns; raises what a source or
    `dispatch` raised; leaves no task behind) with one reader task per source for the whole
    life of the consumer instead of one task per message. See the module's docstring.
    """
    if len(sources) == 1:
        receive = sources[0]
        while True:
            await dispatch(await receive())

    lock = asyncio.Lock()

    async def read(receive: Source) -> None:
        while True:
            try:
                message = await receive()
            except Exception:
                # Raised once no handler runs, and the lock kept: no handler after it.
                await lock.acquire()
                raise
            await lock.acquire()
            await dispatch(message)  # raising keeps the lock: no other handler starts
            lock.release()

    loop = asyncio.get_running_loop()
    context = contextvars.copy_context()
    readers = [loop.create_task(read(source), context=context) for source in sources]
    try:
        await asyncio.wait(readers, return_when=asyncio.FIRST_COMPLETED)
        for reader in readers:
            if reader.done():
                reader.result()  # raises: a reader only ends by raising
        raise AssertionError("a reader ended without an exception")  # pragma: no cover
    finally:
        for reader in readers:
            reader.cancel()
        for reader in readers:
            if reader.done() and not reader.cancelled():
                continue  # the one that failed: its exception is the one being raised
            with contextlib.suppress(asyncio.CancelledError):
                await reader


#: The message types a WebSocket consumer sends (the ASGI WebSocket spec's, server side).
WEBSOCKET_SEND_TYPES = frozenset({"websocket.accept", "websocket.send", "websocket.close"})


def past_session_wrapper(send: Any) -> Any:
    """`send`, or the `send` under Channels' session wrappers when they cannot act on a
    WebSocket message (they save the session and set its cookie on the message types they
    name, `http.response.start` in Channels 4.3; on any other they only pass it on)."""
    wrapper = getattr(send, "__self__", None)
    while isinstance(wrapper, InstanceSessionWrapper):
        acts_on = {*wrapper.save_message_types, *wrapper.cookie_response_message_types}
        if acts_on & WEBSOCKET_SEND_TYPES or send.__func__ is not InstanceSessionWrapper.send:
            break  # it may act on these, or it is not Channels' `send`
        send = wrapper.real_send
        wrapper = getattr(send, "__self__", None)
    return send


class SerialDispatchMixin:
    """`AsyncConsumer.__call__` (Channels 4.3.2) with `dispatch_serially` for Channels' loop.

    Put it first among an async consumer's bases; everything else (`dispatch`, the handlers,
    `send`) is the consumer's own. The set-up is Channels' line for line: the channel layer
    (optional), the socket's channel, `base_send` (past the session wrapper on a WebSocket,
    `past_session_wrapper`).
    """

    channel_layer_alias: str
    dispatch: Callable[[Message], Awaitable[Any]]

    async def __call__(self, scope: Any, receive: Source, send: Any) -> None:
        self.scope = scope
        self.channel_layer = get_channel_layer(self.channel_layer_alias)
        sources = [receive]
        if self.channel_layer is not None:
            self.channel_name = await self.channel_layer.new_channel()
            self.channel_receive = functools.partial(self.channel_layer.receive, self.channel_name)
            sources.append(self.channel_receive)
        self.base_send = past_session_wrapper(send) if scope.get("type") == "websocket" else send
        with contextlib.suppress(StopConsumer):  # exit cleanly, as Channels does
            await dispatch_serially(sources, self.dispatch)
