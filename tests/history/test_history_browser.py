"""Browser: step through a replay on a phone and on a desktop, in both views (real Chromium).

Only HTTP is involved (the replay page fetches frames from the API), so pytest-django's live
server is enough; no daphne or worker.  Screenshots go to ``test-artifacts/history/``.

Each kind's frames are drawn by its own table module (static/js/games/<kind>/replay.js); the
cards in the page are checked against the frame's state the API serves: face up exactly where
the state names the cards, face down where it gives only a count.
"""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings
from django.test import Client

from tests.e2e.layout_kit import at

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

ARTIFACTS = Path(settings.BASE_DIR) / "test-artifacts" / "history"
VIEWPORTS = {
    "phone": {"viewport": {"width": 360, "height": 740}, "is_mobile": True, "has_touch": True},
    "desktop": {"viewport": {"width": 1366, "height": 800}},
}
#: The sizes each test looks at, in turn, on the one game it played (issue 20: a game per size
#: was played twice over, and its database emptied twice).
DEVICES = ("phone", "desktop")


@pytest.fixture(scope="module")
def chromium() -> Iterator[Any]:
    executable = shutil.which("chromium")
    if executable is None:
        pytest.skip("chromium is not installed")
    from playwright.sync_api import sync_playwright

    previous = os.environ.get("DJANGO_ALLOW_ASYNC_UNSAFE")
    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"  # playwright's loop runs in this thread
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(
                executable_path=executable, args=["--no-sandbox", "--disable-gpu"], headless=True
            )
            try:
                yield browser
            finally:
                browser.close()
    finally:
        if previous is None:
            os.environ.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)
        else:
            os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = previous


def open_as(browser: Any, live_server: Any, user: Any, device: str) -> Any:
    c = Client()
    c.force_login(user)
    context = browser.new_context(locale="en-GB", **VIEWPORTS[device])
    session = c.cookies[settings.SESSION_COOKIE_NAME].value
    context.add_cookies(
        [{"name": settings.SESSION_COOKIE_NAME, "value": session, "url": live_server.url}]
    )
    page = context.new_page()
    page.set_default_timeout(20_000)
    page.errors = []
    page.on("pageerror", lambda error: page.errors.append(str(error)))
    # A renderer that throws is caught by the player (text fallback) and logged: an error too.
    # Not the header's "your move" socket (/ws/me/, issue 26): Django's live_server serves no
    # WebSocket, so its handshake fails here (the site's daphne answers it: tests/e2e/).
    page.on(
        "console",
        lambda m: (
            page.errors.append(m.text) if m.type == "error" and "/ws/me/" not in m.text else None
        ),
    )
    return page


def position(page: Any) -> tuple[int, int]:
    text = page.locator("#replay-position").inner_text()  # "Move n of total"
    words = text.split()
    return int(words[1]), int(words[3])


def test_step_through_a_replay(chromium, live_server, finished_game, users, staff):
    """One game, stepped through on a phone and then on a desktop: the game played once
    (issue 20), each size in pages of its own, a failure naming the size."""
    g = finished_game(seed=3, players=users[:2])
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    lobby = lobby_frames(api_frames(users[0], g, "seat", 0)["frames"])
    assert lobby > 0  # people joined before the first deal
    for device in DEVICES:
        with at(device):
            step_through(chromium, live_server, g, users, staff, device, lobby)


def step_through(
    chromium: Any, live_server: Any, g: Any, users: Any, staff: Any, device: str, lobby: int
) -> None:
    """Game ``g``'s replay stepped through at ``device``'s size (``lobby``: its frames before
    the first deal)."""
    page = open_as(chromium, live_server, users[0], device)
    page.goto(f"{live_server.url}/games/{g.pk}/replay/")
    page.wait_for_selector("#replay-board .replay-table .replay-text-log")
    n, total = position(page)
    # It opens at the first deal; the lobby's moments are no steps of their own.
    assert total == g.version - lobby and n == 1
    assert page.locator("#replay-board .replay-main").is_visible()
    now = " ".join(page.locator(".replay-text-log li.now").all_inner_texts())
    assert "Round 1" in now and "Nothing happened" not in now, now
    assert page.locator("#replay-view").input_value() == "seat:0"  # a player: their own seat
    note = page.locator(".replay-pov-note:visible")
    assert note.count() == 0  # "you" is the reader
    # The other player's point of view is theirs (and staff's): not offered to this reader.
    assert page.locator("#replay-view option[value='seat:1']").count() == 0
    # Staff may open it: the table says "you" to that seat, and the page says so.
    admin = open_as(chromium, live_server, staff, device)
    admin.goto(f"{live_server.url}/games/{g.pk}/replay/")
    admin.wait_for_selector("#replay-board .replay-table .replay-text-log")
    admin.select_option("#replay-view", "seat:1")
    admin_note = admin.locator(".replay-pov-note:visible")
    poll(lambda: admin_note.count() == 1)
    assert users[1].public_name in admin_note.inner_text()
    admin.screenshot(path=str(ARTIFACTS / f"{device}-other-seat.png"))
    admin.context.close()
    page.wait_for_selector("#replay-board .replay-table .replay-text-log")
    poll(lambda: position(page)[0] == 1)
    page.click("#replay-last")
    poll(lambda: position(page)[0] == total)
    page.click("#replay-first")
    assert position(page)[0] == 1
    page.click("#replay-next")
    page.click("#replay-next")
    assert position(page)[0] == 3 and f"at={lobby + 3}" in page.url
    page.click("#replay-prev")
    assert position(page)[0] == 2
    page.locator("#replay-slider").fill("12")
    assert position(page)[0] == 12
    page.screenshot(path=str(ARTIFACTS / f"{device}-seat.png"), full_page=True)
    # Earlier looks are in the log as the seat's log showed them afterwards: shown once.
    looks = [t for t in page.locator(".replay-text-log li").all_inner_texts() if "looks at" in t]
    assert looks and all(t.endswith("?, ?") for t in looks)
    # The full view: the same moment, everything the finished game may show.
    page.select_option("#replay-view", "full")
    # (No wait_for_function: it evaluates a string in the page, which the site's CSP forbids.)
    poll(lambda: "view=full" in page.evaluate("() => document.location.search"))
    assert position(page)[0] == 12
    page.screenshot(path=str(ARTIFACTS / f"{device}-full.png"), full_page=True)
    # Play at x10 moves on by itself; the button pauses it again.
    page.select_option("#replay-speed", "10")
    page.click("#replay-play")
    poll(lambda: int(page.input_value("#replay-slider")) > 13)
    page.click("#replay-play")
    page.click("#replay-last")
    assert position(page) == (total, total)
    log = page.locator(".replay-text-log li").all_inner_texts()
    assert any("Game over" in line for line in log)
    # A shared link opens at its moment.
    page.goto(f"{live_server.url}/games/{g.pk}/replay/?view=spectator&at={lobby + 7}")
    page.wait_for_selector("#replay-board .replay-table .replay-text-log")
    assert position(page)[0] == 7 and page.locator("#replay-view").input_value() == "spectator"
    # The profile and the leaderboard, for a person to look at.
    page.goto(f"{live_server.url}/players/{users[0].username}/")
    page.screenshot(path=str(ARTIFACTS / f"{device}-profile.png"), full_page=True)
    page.goto(f"{live_server.url}/leaderboards/crisp/?provisional=1")
    assert page.locator("table.board tbody tr").count() == 2
    page.screenshot(path=str(ARTIFACTS / f"{device}-leaderboard.png"), full_page=True)
    assert page.errors == []
    page.context.close()


def poll(ok: Any, timeout: float = 60.0) -> None:
    """Wait until ``ok()`` is true (checked from Python, every 100 ms); ``timeout`` is the
    suite's hang guard (60 s), not a goal: a page on a busy machine is slow, not failing."""
    import time

    end = time.monotonic() + timeout
    while not ok():
        if time.monotonic() > end:
            raise AssertionError("timed out waiting in the replay page")
        time.sleep(0.1)


# --- Each kind drawn by its own table module ---------------------------------------------------

#: The kinds whose replay log prints the server's lines as they are (the server has the
#: kind's notation words); the others tell the events with their live log's describe.js.
SERVER_WORDS = {"crisp"}

#: Seats for each kind's game: enough that a phone has to fit several opponents.
SEATS = {"crisp": 3, "cribbage": 2, "triple_crown": 4}


def api_frames(user: Any, game: Any, view: str, seat: int | None = None) -> dict[str, Any]:
    """The replay API's answer (every frame) for ``view``, as the page fetches it."""
    c = Client()
    c.force_login(user)
    query = f"view={view}" + (f"&seat={seat}" if seat is not None else "")
    body = c.get(f"/api/v1/games/{game.pk}/replay/?{query}&limit=1000").json()
    assert len(body["frames"]) == game.version, "one page of frames is the whole game here"
    return body


def lobby_frames(frames: list[dict[str, Any]]) -> int:
    """How many frames come before the first deal (people joining: no table). The page folds
    them into the first deal's frame, so its move n is the API's frame ``lobby + n - 1``."""
    return next(i for i, f in enumerate(frames) if f["state"] is not None)


def mid_game(kind: str, frames: list[dict[str, Any]]) -> int:
    """The index of a frame in the thick of play: the most hidden cards on the table."""

    def weight(f: dict[str, Any]) -> int:
        st = f["state"]
        if not st or st.get("status") != "playing" or st.get("reveal") or st.get("phase") == "over":
            return -1
        if kind == "crisp":
            return 10 * (st["held"] is not None) + len(st["pile"])
        if kind == "cribbage":
            return (
                10 * (st["phase"] == "play") + 2 * len(st["sequence"]) + sum(map(len, st["played"]))
            )
        mid = -3 * abs(len(st["tricks"]) - 4) + len(st["trick"])  # a third through the hand
        return 20 + mid if st["phase"] == "play" else 0

    best = max(range(len(frames)), key=lambda i: (weight(frames[i]), -i))
    assert weight(frames[best]) >= 0
    return best


def faces(page: Any, selector: str) -> int:
    return page.locator(selector + " .pcard:not(.back):not(.empty)").count()


def backs(page: Any, selector: str) -> int:
    return page.locator(selector + " .pcard.back").count()


def check_crisp(page: Any, st: dict[str, Any], you: int | None) -> None:
    """Every seat's three places: face up where the state names the card, else face down
    (the viewer's own places may also show a look the frame's events carry)."""
    for s, hand in enumerate(st["hands"]):
        sel = f'#replay-board .seat[data-seat="{s}"] .hand'
        known = sum(c is not None for c in hand)
        assert page.locator(sel + " .slot").count() == 3
        assert page.locator(sel).is_visible()
        if s == you:
            assert known <= faces(page, sel) <= 3
        else:
            assert faces(page, sel) == known and backs(page, sel) == 3 - known
    held = st["held"]
    drawn = page.locator("#replay-board #held-wrap")
    kings = (st["turn"] or {}).get("kings_in_play") or []
    assert drawn.is_visible() == (held is not None or bool(kings))
    if held is not None:
        assert faces(page, "#replay-board #held") == (1 if held["card"] else 0)


def check_cribbage(page: Any, st: dict[str, Any], you: int | None) -> None:
    """Each seat's hand: the cards the state names (a seat's own hand is ``you.hand``) face up,
    the others as as many backs as the seat holds."""
    for s in range(2):
        sel = f'#replay-board .crib-seat[data-seat="{s}"] .crib-hand'
        own = st.get("you", {}).get("hand") if s == you and st.get("you") else None
        cards = own if own is not None else (st["hands"][s] if st.get("hands") else None)
        shown = page.locator(
            sel + " > .pcard:not(.back), " + sel + " > .crib-card > .pcard"
        ).count()
        if cards:
            assert page.locator(sel).is_visible()
        if cards is not None:
            assert shown == len(cards) and backs(page, sel) == 0
        else:
            assert shown == 0 and backs(page, sel) == st["hand_sizes"][s]
    played = page.locator("#replay-board .crib-played .pcard").count()
    assert played == sum(len(p) for p in st["played"])


def check_triple_crown(page: Any, st: dict[str, Any], you: int | None) -> None:
    """The bottom seat's hand face up when the state has it; every other seat's cards face up
    when the state names them (the full view), else only their number."""
    bottom = 0 if you is None else you
    hands = st.get("hands") or [None] * st["seats"]
    for s in range(st["seats"]):
        if s == bottom:
            cards = hands[s]
            assert page.locator("#replay-board #tc-hand .pcard").count() == len(cards or [])
            if cards:
                assert page.locator("#replay-board #tc-hand").is_visible()
            continue
        sel = f'#replay-board .tc-seat[data-seat="{s}"]'
        if hands[s] is not None:
            assert faces(page, sel) == len(hands[s])
            if hands[s]:
                assert page.locator(sel + " .tc-open-hand").is_visible()
            assert page.locator(sel + " .tc-backs").count() == 0
        else:
            assert faces(page, sel) == 0
            count = page.locator(sel + " .tc-count").inner_text()  # "8 cards"
            assert count.split()[0] == str(st["hand_sizes"][s])
    trick = page.locator("#replay-board #tc-trick .pcard").count()
    assert trick == len(st["trick"]) or (not st["trick"] and trick <= st["seats"])
    roles = st.get("roles")
    if isinstance(roles, dict):
        roles = [roles.get(str(s)) for s in range(st["seats"])]
    if isinstance(roles, list) and st.get("phase") != "over":
        assert page.locator("#replay-board .tc-role").count() == sum(r is not None for r in roles)


CHECKS = {"crisp": check_crisp, "cribbage": check_cribbage, "triple_crown": check_triple_crown}


def drawn(page: Any, kind: str, frame: dict[str, Any], you: int | None, index: int) -> None:
    """The page shows frame ``index`` drawn by the kind's renderer (not the text fallback)."""
    poll(lambda: position(page)[0] == index + 1)
    assert page.locator(f'#replay-board .replay-table[data-replay-table="{kind}"]').count() == 1
    assert page.locator("#replay-board .replay-text-status").count() == 0  # not text.js
    # Read-only: nothing on the table is a button.
    assert page.locator("#replay-board .replay-main button").count() == 0
    assert page.locator("#replay-board .countdown").count() == 0
    now = page.locator("#replay-board .replay-text-log li.now").all_inner_texts()
    assert now
    if kind in SERVER_WORDS:
        assert now == (frame["lines"] or [now[0]])
    else:  # told by the table's own describe.js: words, not an event's raw fields
        assert not any(re.match(r"^[a-z_]+ \(", line) for line in now), now
    CHECKS[kind](page, frame["state"], you)


@pytest.mark.parametrize("kind", ["crisp", "cribbage", "triple_crown"])
def test_each_kind_replays_on_its_own_table(chromium, live_server, finished_game, users, kind):
    """The kind's game, played once, stepped through on a phone and then on a desktop."""
    g = finished_game(seed=11, players=users[: SEATS[kind]], kind=kind)
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    me = users[0]
    seat_view = api_frames(me, g, "seat", 0)
    full_view = api_frames(me, g, "full")
    for device in DEVICES:
        with at(device):
            own_table(chromium, live_server, g, me, kind, device, seat_view, full_view)


def own_table(
    chromium: Any,
    live_server: Any,
    g: Any,
    me: Any,
    kind: str,
    device: str,
    seat_view: dict[str, Any],
    full_view: dict[str, Any],
) -> None:
    """Game ``g`` of ``kind`` replayed at ``device``'s size by its own table module, each
    frame drawn checked against the API's (``seat_view``: seat 0's, ``full_view``)."""
    frames = seat_view["frames"]
    i = mid_game(kind, frames)
    lobby = lobby_frames(frames)  # the page's move n is frames[lobby + n - 1]
    page = open_as(chromium, live_server, me, device)
    # A link to a moment opens that moment, from the seat's view.
    page.goto(f"{live_server.url}/games/{g.pk}/replay/?view=seat&seat=0&at={frames[i]['version']}")
    page.wait_for_selector("#replay-board .replay-table")
    drawn(page, kind, frames[i], 0, i - lobby)
    page.screenshot(path=str(ARTIFACTS / f"{kind}-{device}-seat.png"), full_page=True)
    page.screenshot(path=str(ARTIFACTS / f"{kind}-{device}-seat-screen.png"))  # what one sees
    page.click("#replay-next")
    drawn(page, kind, frames[i + 1], 0, i + 1 - lobby)
    page.click("#replay-prev")
    page.click("#replay-prev")
    drawn(page, kind, frames[i - 1], 0, i - 1 - lobby)
    j = max(lobby + 1, (i + lobby) // 2)
    page.locator("#replay-slider").fill(str(j - lobby + 1))
    drawn(page, kind, frames[j], 0, j - lobby)
    # The first move is the first deal (the lobby's moments fold into it): its table drawn.
    page.click("#replay-first")
    poll(lambda: position(page)[0] == 1)
    assert page.locator("#replay-board .replay-main").is_visible()
    CHECKS[kind](page, frames[lobby]["state"], 0)
    page.locator("#replay-slider").fill(str(i - lobby + 1))
    drawn(page, kind, frames[i], 0, i - lobby)
    # The full view of the same moment: every hand the finished game may show, face up.
    page.select_option("#replay-view", "full")
    poll(lambda: "view=full" in page.evaluate("() => document.location.search"))
    full = full_view["frames"]
    drawn(page, kind, full[i], None, i - lobby)
    assert full_view["view"] == "full"  # every kind has a full_view hook
    hands = full[i]["state"]["hands"]
    assert any(h is not None for h in hands)
    if kind == "triple_crown":  # the finished hand's roles, every seat's, at every moment
        assert page.locator("#replay-board .tc-role").count() == SEATS[kind]
    page.screenshot(path=str(ARTIFACTS / f"{kind}-{device}-full.png"), full_page=True)
    page.locator("#replay-board").scroll_into_view_if_needed()
    page.screenshot(path=str(ARTIFACTS / f"{kind}-{device}-full-screen.png"))
    page.click("#replay-next")
    drawn(page, kind, full[i + 1], None, i + 1 - lobby)
    # The end: the results drawn by the table (the live table's reveal / show panel).
    page.click("#replay-last")
    poll(lambda: position(page)[0] == len(full) - lobby)
    assert page.locator("#replay-board .replay-table").count() == 1
    assert page.locator("#replay-board .replay-text-status").count() == 0
    page.screenshot(path=str(ARTIFACTS / f"{kind}-{device}-end.png"), full_page=True)
    # The controls stay usable on a phone: every one of them in the viewport's width.
    width = VIEWPORTS[device]["viewport"]["width"]
    for control in (
        "#replay-first",
        "#replay-prev",
        "#replay-play",
        "#replay-next",
        "#replay-last",
        "#replay-slider",
        "#replay-view",
    ):
        box = page.locator(control).bounding_box()
        assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= width, control
        assert box["height"] >= 24, control
    assert page.evaluate("() => document.documentElement.scrollWidth") <= width
    assert page.errors == []
    page.context.close()


@pytest.mark.parametrize("kind", ["cribbage", "triple_crown"])
def test_a_cribbage_or_triple_crown_replay_and_profile(
    chromium, live_server, finished_game, users, kind
):
    """Their full view and figures in a real page: the game told in words to its end, the
    profile's figures for the kind (screenshots for a person to look at); one game, read at a
    phone's width and then at a desktop's."""
    n = 2 if kind == "cribbage" else 4
    g = finished_game(seed=6, players=users[:n], kind=kind)
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    for device in ({"width": 360, "height": 740}, {"width": 1366, "height": 800}):
        with at(str(device["width"])):
            told_and_profile(chromium, live_server, g, users, kind, device)


def told_and_profile(
    chromium: Any, live_server: Any, g: Any, users: Any, kind: str, device: dict[str, int]
) -> None:
    """Game ``g``'s full view told to its end, and its first player's profile, in a window of
    ``device``'s size."""
    c = Client()
    c.force_login(users[0])
    context = chromium.new_context(locale="en-GB", viewport=device)
    session = c.cookies[settings.SESSION_COOKIE_NAME].value
    context.add_cookies(
        [{"name": settings.SESSION_COOKIE_NAME, "value": session, "url": live_server.url}]
    )
    page = context.new_page()
    page.set_default_timeout(20_000)
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.goto(f"{live_server.url}/games/{g.pk}/replay/?view=full")
    page.wait_for_selector("#replay-board .replay-text-log")
    n, total = position(page)
    assert n == 1  # the first deal
    page.click("#replay-last")
    poll(lambda: position(page) == (total, total))
    log = page.locator(".replay-text-log li").all_inner_texts()
    assert any("Game over" in line for line in log)
    words = "the show" if kind == "cribbage" else "takes it"  # the table's own log words
    assert any(words in line for line in log), log
    tag = f"{kind}-{device['width']}"
    page.screenshot(path=str(ARTIFACTS / f"{tag}-full.png"), full_page=True)
    page.goto(f"{live_server.url}/players/{users[0].username}/")
    label = "Best hand" if kind == "cribbage" else "Double Stakes won"
    assert label in page.locator("dl.stats").inner_text()
    width = page.evaluate("() => document.documentElement.scrollWidth")
    assert width <= device["width"]  # nothing sticks out sideways
    page.screenshot(path=str(ARTIFACTS / f"{tag}-profile.png"), full_page=True)
    assert errors == []
    context.close()
