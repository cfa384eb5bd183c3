"""Our consumers' receive loop (`games.consumer_loop`) keeps Channels' semantics.

The contract tests run `dispatch_serially` and Channels' own `await_many_dispatch` side by
side: whatever one guarantees (one handler at a time, each source's order, an exception ending
the loop after the running handler and before any other, nothing left running, one context for
the handlers), the other must too. Then the game socket itself: it runs on our loop, and a
disconnect leaves no task of it behind and every group it joined left.
"""

from __future__ import annotations

import asyncio
import contextvars
from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from channels.exceptions import StopConsumer
from channels.layers import get_channel_layer
from channels.utils import await_many_dispatch

from games.consumer_loop import SerialDispatchMixin, dispatch_serially
from games.consumers import GameConsumer
from games.me_consumer import MeConsumer
from tests.live.conftest import communicator, make_game, make_user

Loop = Callable[[list[Any], Callable[[dict[str, Any]], Awaitable[None]]], Awaitable[None]]

LOOPS = pytest.mark.parametrize(
    "loop", [dispatch_serially, await_many_dispatch], ids=["ours", "channels"]
)

#: The ceiling of an event wait (the event comes; on a busy machine, late).
WAIT = 60


def _source(queue: asyncio.Queue[dict[str, Any]], taken: asyncio.Event | None = None) -> Any:
    async def receive() -> dict[str, Any]:
        message = await queue.get()
        if taken is not None:
            taken.set()
        return message

    return receive


async def _until(condition: Callable[[], bool]) -> None:
    """Until `condition` holds, giving the loop's other tasks a turn between checks."""
    while not condition():
        await asyncio.sleep(0)


def _own_tasks(before: set[asyncio.Task[Any]]) -> set[asyncio.Task[Any]]:
    """Tasks started since `before` that are still running, but this test's own."""
    return {t for t in asyncio.all_tasks() - before if not t.done()} - {asyncio.current_task()}


@LOOPS
async def test_one_handler_at_a_time_and_each_source_in_order(loop: Loop) -> None:
    """While a handler waits, a message of the other source is taken but not dispatched; it
    is once the handler returns. (Without the lock, the second handler would start in the
    same step as its source returned, before `taken` is seen here.)"""
    a, b = asyncio.Queue[dict[str, Any]](), asyncio.Queue[dict[str, Any]]()
    b_taken, release, first_running = asyncio.Event(), asyncio.Event(), asyncio.Event()
    running, seen = 0, []

    async def dispatch(message: dict[str, Any]) -> None:
        nonlocal running
        running += 1
        assert running == 1, "two handlers at once"
        seen.append(message["n"])
        if message["n"] == "a0":
            first_running.set()
            await release.wait()
        await asyncio.sleep(0)
        running -= 1
        if message["n"] == "stop":
            raise StopConsumer()

    task = asyncio.ensure_future(loop([_source(a), _source(b, b_taken)], dispatch))
    a.put_nowait({"n": "a0"})
    await asyncio.wait_for(first_running.wait(), WAIT)
    b.put_nowait({"n": "b0"})
    await asyncio.wait_for(b_taken.wait(), WAIT)
    for _ in range(5):  # let the other reader run on: it must be held at the lock
        await asyncio.sleep(0)
    assert seen == ["a0"]
    for n in range(1, 20):
        a.put_nowait({"n": f"a{n}"})
        b.put_nowait({"n": f"b{n}"})
    release.set()
    await asyncio.wait_for(_until(lambda: len(seen) == 40), WAIT)
    a.put_nowait({"n": "stop"})
    with pytest.raises(StopConsumer):
        await asyncio.wait_for(task, WAIT)
    assert [n for n in seen if n.startswith("a")] == [f"a{n}" for n in range(20)]
    assert [n for n in seen if n.startswith("b")] == [f"b{n}" for n in range(20)]


@LOOPS
async def test_a_handler_that_raises_ends_the_loop_and_no_handler_runs_after(loop: Loop) -> None:
    before = asyncio.all_tasks()
    a, b = asyncio.Queue[dict[str, Any]](), asyncio.Queue[dict[str, Any]]()
    seen = []

    async def dispatch(message: dict[str, Any]) -> None:
        seen.append(message["n"])
        await asyncio.sleep(0)
        if message["n"] == "boom":
            raise RuntimeError("boom")

    for n in range(50):
        b.put_nowait({"n": f"b{n}"})
    a.put_nowait({"n": "boom"})
    with pytest.raises(RuntimeError, match="boom"):
        await asyncio.wait_for(loop([_source(a), _source(b)], dispatch), WAIT)
    assert "boom" in seen and seen[-1] == "boom", seen
    assert not _own_tasks(before)


@LOOPS
async def test_a_source_that_raises_lets_the_running_handler_finish(loop: Loop) -> None:
    before = asyncio.all_tasks()
    a = asyncio.Queue[dict[str, Any]]()
    handler_running, release = asyncio.Event(), asyncio.Event()
    finished = []

    async def failing() -> dict[str, Any]:
        await asyncio.wait_for(handler_running.wait(), WAIT)
        raise ConnectionError("source failed")

    async def dispatch(message: dict[str, Any]) -> None:
        handler_running.set()
        await release.wait()
        finished.append(message["n"])

    task = asyncio.ensure_future(loop([_source(a), failing], dispatch))
    a.put_nowait({"n": "a0"})
    await asyncio.wait_for(handler_running.wait(), WAIT)
    for _ in range(5):  # the source fails now, while the handler waits
        await asyncio.sleep(0)
    assert not task.done()
    release.set()
    with pytest.raises(ConnectionError):
        await asyncio.wait_for(task, WAIT)
    assert finished == ["a0"]  # not cancelled by the other source's failure
    assert not _own_tasks(before)


@LOOPS
async def test_cancelling_the_consumer_cancels_every_receive_and_leaves_no_task(
    loop: Loop,
) -> None:
    """As daphne cancels a consumer still running after its client left: each source's
    pending `receive` is cancelled (channels-redis cleans the channel up there)."""
    before = asyncio.all_tasks()
    waiting, cancelled = [], []

    def source(name: str) -> Any:
        async def receive() -> dict[str, Any]:
            waiting.append(name)
            try:
                await asyncio.Future()
            except asyncio.CancelledError:
                cancelled.append(name)
                raise
            raise AssertionError

        return receive

    async def dispatch(message: dict[str, Any]) -> None:
        raise AssertionError

    task = asyncio.ensure_future(loop([source("client"), source("layer")], dispatch))
    await asyncio.wait_for(_until(lambda: len(waiting) == 2), WAIT)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert sorted(cancelled) == ["client", "layer"]
    assert not _own_tasks(before)


@LOOPS
async def test_handlers_share_one_context_whichever_source(loop: Loop) -> None:
    var: contextvars.ContextVar[str] = contextvars.ContextVar("var", default="unset")
    a, b = asyncio.Queue[dict[str, Any]](), asyncio.Queue[dict[str, Any]]()
    seen = []

    async def dispatch(message: dict[str, Any]) -> None:
        if message["n"] == "set":
            var.set("from a")
            b.put_nowait({"n": "read"})
        else:
            seen.append(var.get())
            raise StopConsumer()

    a.put_nowait({"n": "set"})
    with pytest.raises(StopConsumer):
        await asyncio.wait_for(loop([_source(a), _source(b)], dispatch), WAIT)
    assert seen == ["from a"]


async def test_one_source_is_dispatched_in_the_callers_task() -> None:
    """Without a channel layer there is one source: no reader task at all."""
    before = asyncio.all_tasks()
    a = asyncio.Queue[dict[str, Any]]()
    tasks_seen = []

    async def dispatch(message: dict[str, Any]) -> None:
        tasks_seen.append(_own_tasks(before))
        if message["n"] == 2:
            raise StopConsumer()

    for n in range(3):
        a.put_nowait({"n": n})
    with pytest.raises(StopConsumer):
        await dispatch_serially([_source(a)], dispatch)
    assert tasks_seen == [set(), set(), set()]


def _readers() -> list[asyncio.Task[Any]]:
    return [
        t
        for t in asyncio.all_tasks()
        if not t.done() and t.get_coro().__qualname__ == "dispatch_serially.<locals>.read"
    ]


def _socket_tasks() -> list[asyncio.Task[Any]]:
    """Running tasks of a game socket: its readers, its heartbeat, its gap timer."""
    names = {
        "dispatch_serially.<locals>.read",
        "GameConsumer._heartbeat",
        "GameConsumer._gap_later",
    }
    return [t for t in asyncio.all_tasks() if not t.done() and t.get_coro().__qualname__ in names]


@pytest.fixture
def game(scheduled: Any, transactional_db: None) -> Any:
    return make_game([make_user(), make_user()])


@pytest.mark.django_db(transaction=True)
async def test_the_game_socket_runs_on_our_loop_and_a_disconnect_leaves_nothing(
    game: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Connected, the socket has its two readers; disconnected, no task of it runs (readers,
    heartbeat, gap timer) and it left every group it joined."""
    assert issubclass(GameConsumer, SerialDispatchMixin)
    assert issubclass(MeConsumer, SerialDispatchMixin)
    layer = get_channel_layer()
    added: set[tuple[str, str]] = set()
    discarded: set[tuple[str, str]] = set()
    group_add, group_discard = layer.group_add, layer.group_discard

    async def add(group: str, channel: str) -> None:
        added.add((group, channel))
        await group_add(group, channel)

    async def discard(group: str, channel: str) -> None:
        discarded.add((group, channel))
        await group_discard(group, channel)

    monkeypatch.setattr(layer, "group_add", add)
    monkeypatch.setattr(layer, "group_discard", discard)
    assert not _socket_tasks()
    comm = communicator(game.pk)  # an anonymous spectator of a public game
    connected, _ = await comm.connect()
    assert connected
    while (await comm.receive_json_from())["type"] != "snapshot":
        pass
    assert len(_readers()) == 2  # the client's and the layer's, for the socket's life
    assert added
    await comm.disconnect()
    assert not _socket_tasks()
    assert discarded == added


async def test_a_socket_sends_past_the_session_wrapper_only_when_it_cannot_act() -> None:
    """`AuthMiddlewareStack`'s session wrapper acts only on `http.response.start`: a socket's
    frames skip it. A wrapper that would act on a WebSocket message is kept."""
    from channels.auth import AuthMiddlewareStack
    from channels.sessions import InstanceSessionWrapper

    from games.consumer_loop import past_session_wrapper

    async def raw_send(message: dict[str, Any]) -> None:
        return None

    handed: list[Any] = []

    async def inner(scope: Any, receive: Any, send: Any) -> None:
        handed.append(send)

    scope = {"type": "websocket", "path": "/ws/me/", "headers": []}
    await AuthMiddlewareStack(inner)(scope, None, raw_send)
    (send,) = handed
    assert isinstance(send.__self__, InstanceSessionWrapper)  # the stack wraps it
    assert past_session_wrapper(send) is raw_send
    assert past_session_wrapper(raw_send) is raw_send

    class Saving(InstanceSessionWrapper):
        save_message_types = ["http.response.start", "websocket.accept"]

    saving = Saving({"cookies": {}}, raw_send)
    assert past_session_wrapper(saving.send) == saving.send
