"""The table controller's page lifecycle (static/js/table/controller.js), in real Chromium.

- Crisp at 2 and 8 seats, phones and desktops side by side, with other processes keeping
  every core busy (``cpu_hog``: one busy loop a core): the game starts without a page reload
  (the lobby becomes the table in place) and every seat's opening look is on screen from the
  moment it arrives until the memorise period ends, in round 1 and after the round change.
  Each page samples its own DOM (the face-up cards of its seat) on its own clock; the
  deadlines are the server's (the deal's instant plus the memorise period). (A 4-seat copy
  was dropped (issue 20): the look's code has nothing that depends on the number of seats
  (static/js/table/controller.js, static/js/games/crisp/view.js), 2 seats is the smallest
  table and 8 the most pages sharing the starved machine; the 4-seat table's drawing is
  measured in tests/e2e/test_table_layout.py.) The 2-seat table is the "I'm back" test's below
  (one game for both, issue 20), started through the services; the 8-seat one starts at the
  host's click.
- "I'm back" sent at a round change, after the page's own opening look already took the seat
  back: no reload, no false error, the look stays; the banner is above the round's results.
- Offline: one person on a phone and a desktop; the desktop's page says it is live only once
  it has the table (its snapshot held back by the test until then); cut off, each page redraws
  itself as the turn opens with the table's buttons locked and the status bar saying so; back
  online they work.
- A game's lobby page updates in place: seven people taking a seat one after another, each
  while the others' joins arrive, all get their seat (no reload aborts a click's page load).

The game is moved on by the test through the service layer (the players' moves "from another
device"), so only the pages' lifecycle is under test, and the moves never wait for a browser.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django.db import transaction

from games import selectors, services
from games.errors import ServiceError
from games.models import Event, Game, Seat
from tests.e2e.test_play import log_in, shot, wait_live
from tests.factories import UserFactory

pytestmark = [pytest.mark.browser, pytest.mark.live]

PHONE = {"width": 360, "height": 740}
DESKTOP = {"width": 1366, "height": 800}
MEMORISE_MS = 5000
#: A sample this close to the deadline may already show the cards turned down (the page redraws
#: on its 5-per-second tick; the clocks of page and server agree to a few ms).
EDGE_MS = 250

#: Each page records how many of its own seat's cards are face up, every time that changes: a
#: MutationObserver's callback runs right after the task that changed the page, so the instant
#: is the change's even when a busy machine delays the page's timers (the clock is the server's,
#: as the page keeps it: window.tableTrace, static/js/table/trace.js). And a marker that a page
#: reload would lose.
SAMPLER = """() => {
  window.__noReload = 'kept';
  const now = () => window.tableTrace ? window.tableTrace.now() : Date.now();
  const count = () => document.querySelectorAll('.seat.mine .slot.peeking').length;
  window.__samples = [[now(), count()]];
  new MutationObserver(() => {
    const up = count();
    const last = window.__samples[window.__samples.length - 1];
    if (up !== last[1]) window.__samples.push([now(), up]);
  }).observe(document.body, {childList: true, subtree: true});
}"""


#: A busy loop that says when it is running (and stops itself after 10 minutes, should the test
#: that started it be killed before its teardown).
#: One busy loop; it ends with its test (killed), after 10 minutes, or as soon as the test run
#: that started it is gone (its parent changes), so an interrupted run leaves no hog behind.
HOG = (
    "import os, time\nparent = os.getppid()\nprint('busy', flush=True)\n"
    "end = time.time() + 600\nwhile time.time() < end and os.getppid() == parent: pass"
)


@pytest.fixture
def cpu_hog() -> Iterator[list[subprocess.Popen[str]]]:
    """Other processes keeping every core busy for the whole test (issue 22: "with the machine
    kept busy by another process"): one busy loop a core, each running before the test starts
    (it says so on its output, which is waited for)."""
    hogs = [
        subprocess.Popen([sys.executable, "-c", HOG], stdout=subprocess.PIPE, text=True)
        for _ in range(max(2, os.cpu_count() or 1))
    ]
    try:
        for hog in hogs:
            assert hog.stdout is not None and hog.stdout.readline().strip() == "busy"
        yield hogs
    finally:
        for hog in hogs:
            hog.kill()
            hog.wait(timeout=10)
    assert all(hog.returncode is not None for hog in hogs)


def _open_pages(
    chromium: Any, site: str, path: str, users: list[Any], sizes: list[dict[str, int]]
) -> list[Any]:
    """A live page at ``path`` for each user, the pages loading side by side: each browser is
    signed in on a small page of the site (the manifest), then all are sent to ``path`` at
    once and waited for together (issue 20: eight pages loaded one after another spent most
    of the 8-seat and lobby tests waiting for each other's loads)."""
    pages = [
        log_in(chromium, site, user.username, size, to="/manifest.webmanifest")
        for user, size in zip(users, sizes, strict=True)
    ]
    for page in pages:
        page.goto(f"{site}{path}", wait_until="commit")
    for page in pages:
        wait_live(page)
    return pages


def _seat_pages(
    chromium: Any, site: str, game: Game, users: list[Any], sizes: list[dict[str, int]]
) -> list[Any]:
    pages = _open_pages(chromium, site, f"/games/{game.pk}/", users, sizes)
    for page in pages:
        page.evaluate(SAMPLER)
    return pages


def _new_game(n: int, name: str) -> tuple[Game, list[Any]]:
    users = [
        UserFactory(username=f"{name}{i}", display_name=f"{name.title()} {i}") for i in range(n)
    ]
    game = services.game_create(host=users[0], kind="crisp", settings={"target_score": 150})
    for user in users[1:]:
        services.game_join(game=game.pk, user=user)
    return game, users


def _act(game: Game, user: Any, action: dict[str, Any]) -> bool:
    try:
        services.game_act(game=game.pk, user=user, action=action, expected_version=None)
    except ServiceError:
        return False  # the table moved on meanwhile (a timer): look again
    return True


def _play_round(game: Game, users: list[Any], may_call: Any = None, skip: int | None = None) -> int:
    """Play the current round to its reveal through the services: every seat but ``skip``
    draws and discards, and the first to finish a turn calls
    crisp once ``may_call()`` allows it.  Returns the round played."""
    start = selectors.game_payload(game=Game.objects.get(pk=game.pk), user=users[0])["state"]
    round_no = start["round"]
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        g = Game.objects.get(pk=game.pk)
        moved = False
        for seat, user in enumerate(users):
            st = selectors.game_payload(game=g, user=user)["state"]
            if st["round"] != round_no or st["reveal"] or st["status"] != "playing":
                return round_no
            if seat == skip:
                continue  # its clock runs out; then the computer sitting in plays it
            can = st["you"]["can"]
            if "call" in can and (may_call is None or may_call()):
                moved = _act(g, user, {"type": "call"})
            elif "king" in can:
                moved = _act(g, user, {"type": "king"})
            elif "discard" in can:
                moved = _act(g, user, {"type": "discard"})
            elif "swap" in can:
                moved = _act(g, user, {"type": "swap", "place": "left"})
            elif "draw_deck" in can:
                moved = _act(g, user, {"type": "draw", "source": "deck"})
            if moved:
                break
        if not moved:
            time.sleep(0.05)  # waiting for the start delay, a window or a timer
    raise AssertionError(f"round {round_no} did not end")


#: The pauses of play itself, written into the stored snapshot's settings once round 1 is dealt
#: (`_quicken_play`): no start delay before the turns the test plays through the services, a
#: crisp window of a second (long enough to call in: the round ends only on a call), and a short
#: pause between rounds. The memorise period stays the product's (`MEMORISE_MS`): it is what the
#: looks are measured against, in both rounds.
QUICK_PLAY = {"start_delay_ms": 0, "window_ms": 1000, "between_rounds_ms": 1000}


def _quicken_play(game: Game, settings: dict[str, int] = QUICK_PLAY) -> None:
    """Change the running game's settings in its snapshot (by default shorten the pauses of
    play, `QUICK_PLAY`): issue 20's 8-seat round spent 2 s before each of its turns, 3 s in the
    crisp window and 8 s between the rounds, none of it what the test is about. A round is
    dealt with the settings in force then, so round 1's memorise period is over before anything
    here applies, and a memorise period set here is the next round's."""
    with transaction.atomic():
        locked = Game.objects.select_for_update().get(pk=game.pk)
        locked.state["settings"].update(settings)
        locked.save(update_fields=["state"])


def _memorise_deadlines(game: Game) -> dict[int, int]:
    """Round -> the server instant its memorise period ends (the deal plus the period)."""
    return {
        e.data["round"]: e.data["at"] + MEMORISE_MS
        for e in Event.objects.filter(game=game, type="round_dealt")
    }


def _wait_past(page: Any, instant: int) -> None:
    page.wait_for_function(
        f"() => (window.tableTrace ? window.tableTrace.now() : Date.now()) > {instant + EDGE_MS}",
        timeout=60_000,
    )


def _check_look(page: Any, who: str, round_no: int, deadline: int) -> int:
    """The page's own look for ``round_no`` was on screen from when it first appeared until
    the memorise deadline, and appeared before it. Returns how long after the deal (ms)."""
    assert page.evaluate("() => window.__noReload") == "kept", f"{who}'s page reloaded"
    trace = page.evaluate("() => window.tableTrace.events")
    looks = [e for e in trace if e["what"] == "look" and e.get("round") == round_no]
    assert looks, f"{who}: no opening look recorded in round {round_no}: {trace[-12:]}"
    dealt = deadline - MEMORISE_MS
    changes = page.evaluate("() => window.__samples")  # [instant, cards face up], as they changed
    during = [(at, n) for at, n in changes if dealt <= at < deadline - EDGE_MS]
    up = [i for i, (_, n) in enumerate(during) if n >= 2]
    assert up, (
        f"{who}: the round {round_no} look was not on screen in its memorise period"
        f" (face-up changes after the deal, ms: {[(at - dealt, n) for at, n in during]})"
    )
    hidden = [at for at, n in during[up[0] :] if n < 2]
    assert not hidden, (
        f"{who}: round {round_no}'s look turned down {hidden[0] - dealt} ms after the deal,"
        f" before the memorise period ended ({MEMORISE_MS} ms)"
    )
    assert looks[0]["until"] >= deadline - EDGE_MS, f"{who}: the look was meant to end early"
    return during[up[0]][0] - dealt


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("seats", [8])
def test_every_opening_look_stays_for_the_memorise_period(
    chromium: Any, site: str, artifacts: Path, cpu_hog: Any, seats: int
) -> None:
    game, users = _new_game(seats, f"look{seats}-")
    sizes = [PHONE if i % 2 else DESKTOP for i in range(seats)]
    pages = _seat_pages(chromium, site, game, users, sizes)
    host = pages[0]
    host.click("#start-game")  # the host's own page starts the game in place too
    for page in pages:
        page.wait_for_selector("#table-app .seat.mine", timeout=60_000)
    for page, size in ((pages[1], "phone"), (host, "desktop")):
        with contextlib.suppress(Exception):  # only a picture: the looks are checked below
            page.wait_for_selector(".seat.mine .slot.peeking >> nth=1", timeout=5_000)
        shot(page, artifacts, f"controller-{seats}-memorise-{size}")
    round_one = _memorise_deadlines(game)[1]
    _quicken_play(game)
    for page in pages:
        _wait_past(page, round_one)
    _play_round(game, users)
    deadline = time.monotonic() + 60
    while 2 not in _memorise_deadlines(game):
        assert time.monotonic() < deadline, "round 2 was not dealt"
        time.sleep(0.1)
    round_two = _memorise_deadlines(game)[2]
    for page in pages:
        _wait_past(page, round_two)
    _check_every_look(game, pages)


def _check_every_look(game: Game, pages: list[Any]) -> None:
    """Every seat's opening look of rounds 1 and 2 stayed for its memorise period
    (`_check_look`), with what the server and each page recorded printed for a failure's
    reader; once every page is past round 2's deadline."""
    deadlines = _memorise_deadlines(game)
    looked = {
        (e.data["seat"], e.round.number): e.data["at"]
        for e in Event.objects.filter(game=game, type="look").select_related("round")
    }
    for i, page in enumerate(pages):
        for round_no, at in ((1, deadlines[1]), (2, deadlines[2])):
            server = looked.get((i, round_no), at) - (at - MEMORISE_MS)
            print(f"seat {i} round {round_no}: the server took the look {server} ms after the deal")
            on_screen = _check_look(page, f"seat {i}", round_no, at)
            steps = {
                e["what"]: e["at"] - (at - MEMORISE_MS)
                for e in page.evaluate("() => window.tableTrace.events")
                if e["what"] in ("dealt", "table", "look") and e.get("round", round_no) == round_no
                and at - MEMORISE_MS - 2000 < e["at"] < at
            }  # fmt: skip
            print(f"seat {i} round {round_no}: ms after the deal {steps}, on screen {on_screen}")
        assert page.errors == []


@pytest.mark.django_db(transaction=True)
def test_im_back_at_a_round_change_keeps_the_page_and_the_look(
    chromium: Any, site: str, artifacts: Path, cpu_hog: Any
) -> None:
    """The player was away for two turns (a computer sat in). The round ends; the banner with
    "I'm back" is above the round's results. At the next deal the page's own opening look takes
    the seat back -- and the "I'm back" the player sent at that moment is answered without a
    reload or an error, and the look stays on screen.

    The table is also the 2-seat case of `test_every_opening_look_stays_for_the_memorise_period`
    (a desktop beside the phone, the product's memorise period in both rounds): both seats'
    opening looks stay for it, in round 1 and after the round change -- one game under the CPU
    hog instead of two (issue 20). The game is started through the services here (the draw
    clock that makes the player away is shorter than any a host may choose); the lobby turning
    into the table in place at the host's click is the 8-seat test's."""
    game, users = _new_game(2, "back-")
    pages = _seat_pages(chromium, site, game, users, [DESKTOP, PHONE])
    # A short start delay and crisp window, the product's memorise period (the looks of both
    # rounds are checked). The banner's 6 s between the rounds stay: the test reads the results
    # and the banner in them, under the CPU hog.
    services.game_start(
        game=game.pk, user=users[0],
        timers={"draw_seconds": 3, "start_delay_ms": 300, "between_rounds_ms": 6000,
                "memorise_ms": MEMORISE_MS, "window_ms": 1000},
    )  # fmt: skip
    for seat_page in pages:
        seat_page.wait_for_selector("#table-app .seat.mine", timeout=60_000)
    away, page = 1, pages[1]
    for seat_page in pages:  # play starts once both looks are over (round 1's are checked)
        _wait_past(seat_page, _memorise_deadlines(game)[1])
    _play_round(
        game, users, skip=away,
        may_call=lambda: Seat.objects.get(game=game, number=away).sitting_in,
    )  # fmt: skip
    page.wait_for_selector("#sitin-form", state="visible")
    page.wait_for_selector("#reveal:not([hidden])")
    on_top = page.evaluate(
        "() => { const b = document.getElementById('im-back').getBoundingClientRect();"
        " const hit = document.elementFromPoint(b.left + b.width / 2, b.top + b.height / 2);"
        " return !!hit && !!hit.closest('#sitin-form'); }"
    )
    shot(page, artifacts, "controller-im-back-over-results-phone")
    assert on_top, "the round's results cover the 'I'm back' banner"
    deadline = time.monotonic() + 60
    while 2 not in _memorise_deadlines(game):
        assert time.monotonic() < deadline, "round 2 was not dealt"
        time.sleep(0.1)
    # The page's opening look ended the sit-in (the person moved); the player's "I'm back"
    # crosses it.
    page.wait_for_function("() => document.querySelectorAll('.seat.mine .slot.peeking').length")
    assert not Seat.objects.get(game=game, number=away).sitting_in
    page.evaluate("() => document.getElementById('sitin-form').requestSubmit()")
    page.wait_for_function(  # answered in place -- or the page was loaded again
        "() => !window.__noReload || window.tableTrace.events.some((e) => e.what === 'back')"
    )
    assert page.evaluate("() => window.__noReload") == "kept", "'I'm back' reloaded the page"
    shot(page, artifacts, "controller-im-back-round-2-phone")
    assert page.locator("#sitin-form").is_hidden()
    toast = page.locator("#toast")
    assert toast.is_hidden() or "sitting in" not in toast.inner_text()
    assert "sitting in for you" not in page.inner_text("body")
    for seat_page in pages:
        _wait_past(seat_page, _memorise_deadlines(game)[2])
    _check_look(page, "the player back", 2, _memorise_deadlines(game)[2])
    _check_every_look(game, pages)


class HeldSnapshot:
    """A page's game socket through Playwright, the server's frames held back until `release`:
    a snapshot still on its way (a loaded server answers a socket after accepting it,
    docs/PROTOCOL.md "Close codes"), for as long as the test needs, without a guessed delay."""

    def __init__(self, page: Any) -> None:
        self.held: list[Any] = []
        self.route: Any = None
        page.route_web_socket("**/ws/games/**", self.connect)

    def connect(self, route: Any) -> None:
        server = route.connect_to_server()
        if self.route is not None:  # a reconnection: its frames go through
            return
        self.route = route
        server.on_message(self.arrived)

    def arrived(self, message: Any) -> None:
        if self.held is None:
            self.route.send(message)
        else:
            self.held.append(message)

    def release(self) -> None:
        held, self.held = self.held, None
        for message in held or []:
            self.route.send(message)


def _check_offline(page: Any, artifacts: Path, size: str) -> None:
    """The page redraws itself offline as the turn opens (`#deck.ready`), everything locked."""
    page.wait_for_selector("#deck.ready", timeout=60_000)
    shot(page, artifacts, f"controller-offline-{size}")
    enabled = page.evaluate(
        "() => [...document.querySelectorAll('#table-app .table-main button')]"
        ".filter((b) => !b.disabled).map((b) => b.dataset.key || b.id)"
    )
    assert enabled == [], f"{size}: tappable while offline: {enabled}"
    assert page.locator("#table-app[data-offline] .offline-note").is_visible()
    assert page.locator("[data-key=draw-deck]").is_disabled()


@pytest.mark.django_db(transaction=True)
def test_offline_locks_the_table(chromium: Any, live_site: Any, artifacts: Path) -> None:
    person = UserFactory(username="offline-crisp", display_name="Offline")
    # The person's turn opens a while after the deal, so the page redraws itself while offline
    # when it opens (time alone changes what may be done): a redraw must not unlock anything
    # (CI saw the deck, a button the view keeps across redraws, tappable again). The first
    # turn is the person's (a deal where the computer starts is set aside).
    for _ in range(50):
        game = services.game_create(host=person, kind="crisp", settings={}, private=True)
        services.game_add_bot(game=game.pk, host=person, level="easy")
        services.game_start(
            game=game.pk, user=person, timers={"memorise_ms": 15_000, "start_delay_ms": 0}
        )  # fmt: skip
        game.refresh_from_db()
        if game.state["round"]["turn"]["seat"] == game.seats.get(user=person).number:
            break
        services.game_abandon(game=game, user=person)
    # The computer's opening look is taken first (its worker acts within a second or two), so
    # no update is on its way when daphne stops.
    deadline = time.monotonic() + 60
    while not Event.objects.filter(game=game, type="look").exists():
        assert time.monotonic() < deadline, "the computer never took its opening look"
        time.sleep(0.05)
    # One person, two devices: the phone takes the opening look; the desktop, opened next,
    # has no look of its own to show. Its socket's first frame (the snapshot) is held back:
    # the page must not say it is live before it has the table. It did, at the socket's open
    # event -- and a page cut off then had no table at all and never showed its turn opening
    # offline (1 run in 4 beside a CPU hog, the page opened just before daphne stopped; the
    # likely cause of CI's failure when this test waited only for "Live" and the deck).
    table = f"/games/{game.pk}/"
    phone = log_in(chromium, live_site.url, person.username, PHONE, to=table)
    wait_live(phone)
    phone.wait_for_function("() => document.querySelectorAll('.my-seat .pcard.peek').length === 2")
    desktop = log_in(chromium, live_site.url, person.username, DESKTOP, to="/manifest.webmanifest")
    socket = HeldSnapshot(desktop)
    desktop.goto(f"{live_site.url}{table}")
    deadline = time.monotonic() + 60
    while not socket.held:  # Playwright's calls deliver the socket's frames to `arrived`
        assert time.monotonic() < deadline, "the desktop's socket got no frame"
        desktop.wait_for_function("() => true")
    state = desktop.get_attribute("#conn", "data-state")
    assert state != "online", "the page said it was live before it had the table"
    socket.release()
    wait_live(desktop)
    assert desktop.locator(".seat.mine").count() == 1, "live without the table"
    live_site.stop_daphne()
    for page in (phone, desktop):
        page.wait_for_selector("#conn[data-state=offline]")
        assert "ready" not in (page.get_attribute("#deck", "class") or ""), "opened online"
    _check_offline(phone, artifacts, "phone")
    _check_offline(desktop, artifacts, "desktop")
    live_site.start_daphne()
    # The person taps the banner's "Retry now" (shown unless an attempt is under way) instead
    # of waiting out its back-off, by then up to 5 s; a page reconnecting by itself after an
    # outage is proven in tests/e2e/test_specials.py, test_cribbage.py and test_triple_crown.py.
    for page in (phone, desktop):
        page.evaluate("() => document.querySelector('[data-key=retry-now]:not([hidden])')?.click()")
    for page in (phone, desktop):
        page.wait_for_selector("#conn[data-state=online]", timeout=30_000)
        page.wait_for_selector("[data-key=draw-deck]:not([disabled])")
        assert page.locator(".offline-note").count() == 0
    desktop.click("[data-key=draw-deck]")
    desktop.wait_for_selector(
        "[data-key=discard], [data-key=king], .seat.mine button.slot.pickable"
    )
    assert phone.errors == [] and desktop.errors == []


@pytest.mark.django_db(transaction=True)
def test_lobby_joins_are_never_aborted_by_a_reload(
    chromium: Any, site: str, artifacts: Path
) -> None:
    host = UserFactory(username="lobbyhost", display_name="Host")
    game = services.game_create(host=host, kind="crisp", settings={})
    hosts_page = log_in(chromium, site, host.username, DESKTOP, to=f"/games/{game.pk}/")
    wait_live(hosts_page)
    hosts_page.evaluate(SAMPLER)
    guests = [UserFactory(username=f"joiner{i}", display_name=f"Joiner {i}") for i in range(7)]
    sizes = [PHONE if i % 2 else DESKTOP for i in range(7)]
    pages = _open_pages(chromium, site, f"/games/{game.pk}/", guests, sizes)
    # One after another, each click while the joins before it are still arriving everywhere.
    # A plain click, not `no_wait_after=True`: Playwright blocks its own mouse events when the
    # element it aimed at is no longer the one under the pointer (here: the lobby put in place
    # between its aim and its press, "Take a seat" a new node at the same place) and clicks
    # again -- but with `no_wait_after` it never looks at that result, so the click was
    # silently never made (the flake of issue 20: the page saw no pointer event at all, and
    # sent no join). A person's press lands on whatever node is there; a lobby put in place
    # between press and release is held back (static/js/table/lobby.js).
    for page in pages:
        page.click("#join-game")
    for page in pages:
        page.wait_for_selector(".lobby-seat .you-badge", timeout=30_000)
    assert Seat.objects.filter(game=game).count() == 8
    hosts_page.wait_for_selector(".lobby-seat:nth-child(8)")
    assert hosts_page.evaluate("() => window.__noReload") == "kept", "the host's lobby reloaded"
    assert not hosts_page.locator("#start-game").is_disabled()
    shot(hosts_page, artifacts, "controller-lobby-full-desktop")
    for page in [hosts_page, *pages]:
        assert page.errors == []
