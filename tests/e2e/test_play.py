"""Two people play a whole round of Crisp in two real browsers, through the real site.

Host (English, desktop 1280x800) creates a private game; the guest (Japanese, phone 390x844)
joins with the invite code; they take the opening look, play turns (draws, a swap, a discard),
whoever played first calls crisp, the other takes the final turn, and the reveal shows everybody's
cards and scores. The deck is random (the server's secret seed),
so each turn plays whatever was drawn.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from games.models import Game
from tests.e2e.conftest import OPEN_CONTEXTS, sign_in
from tests.factories import DEFAULT_PASSWORD, UserFactory

pytestmark = [pytest.mark.browser, pytest.mark.live]

DESKTOP = {"width": 1280, "height": 800}
PHONE = {"width": 390, "height": 844}


def log_in(
    browser: Any,
    site: str,
    username: str,
    viewport: dict[str, int],
    *,
    form: bool = False,
    to: str = "/games/",
    scripts: tuple[str, ...] = (),
    clock: bool = False,
) -> Any:
    """A page of a new browser context, signed in as ``username``, at ``to`` (the games' lobby
    unless the test opens another page first: issue 20, a page load fewer per browser).

    ``form``: through the log-in form, as a person does (it lands on the lobby); else with the
    cookies the form would have set (`conftest.sign_in`: two page loads and a password hash
    fewer). ``scripts``: JavaScript run in every document of the page before its own (Playwright's
    init scripts), from the first load on. ``clock``: Playwright's clock installed before the first
    load (time flows as usual), so the test can run the page's own timers forward
    (`page.clock.run_for`) instead of waiting for them: the lobby's 8-second refresh."""
    context = browser.new_context(viewport=viewport, locale="en-GB")
    OPEN_CONTEXTS.append(context)
    page = context.new_page()
    page.set_default_timeout(60_000)
    page.errors = []  # JavaScript errors: the test fails if there are any
    page.on("pageerror", lambda error: page.errors.append(str(error)))
    page.frames_seen = []  # the last WebSocket frames, printed if the test fails

    def on_socket(socket: Any) -> None:
        socket.on("framereceived", lambda f: page.frames_seen.append(("in", str(f)[:300])))
        socket.on("framesent", lambda f: page.frames_seen.append(("out", str(f)[:300])))

    page.on("websocket", on_socket)
    for script in scripts:
        page.add_init_script(script)
    if clock:
        page.clock.install()
    if not form:
        sign_in(context, site, username)
        page.goto(f"{site}{to}")
        return page
    page.goto(f"{site}/accounts/login/?next=/games/")
    page.fill("input[name=username]", username)
    page.fill("input[name=password]", DEFAULT_PASSWORD)
    page.click("form[action$='/accounts/login/'] button[type=submit]")
    page.wait_for_url(f"{site}/games/")
    return page


def shot(page: Any, artifacts: Path, name: str, full: bool = False) -> None:
    page.screenshot(path=str(artifacts / f"{name}.png"), full_page=full)


def painted(page: Any) -> None:
    """Wait until the page has drawn what it holds now (two animation frames: the first runs
    before the next paint, the second after it): a screenshot or a reading after a resize or
    an answer then sees the page as it settled, without a guessed number of milliseconds."""
    page.evaluate("() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))")


def wait_live(page: Any) -> None:
    page.wait_for_selector("#conn[data-state=online]")


def whose_turn(pages: dict[str, Any], timeout: float = 60) -> str:
    """The name of the page whose player may draw now (waits for the start delay)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for name, page in pages.items():
            if page.locator("[data-key=draw-deck]").count():
                return name
        time.sleep(0.1)
    raise AssertionError("nobody could draw")


def play_turn(page: Any, prefer: str, after_draw: Any = None) -> str:
    """Draw from the deck and play the card: swap (prefer="swap") or discard if possible.

    Specials drawn from the deck cannot be swapped in: a King is used (its extra draws are
    then played the same way), a Jack or Queen is discarded. Returns what the first card did.
    """
    done = ""
    page.click("[data-key=draw-deck]")
    while True:
        page.wait_for_selector("[data-key=discard], [data-key=king]")
        if after_draw is not None:
            after_draw()
            after_draw = None
        if page.locator("[data-key=king]").count():
            page.click("[data-key=king]")
            done = done or "king"
            page.wait_for_selector("[data-key=draw-deck]")
            page.click("[data-key=draw-deck]")
            continue
        swappable = page.locator(".seat.mine button.slot.pickable")
        if prefer == "swap" and swappable.count() == 3:
            swappable.nth(0).click()
            done = done or "swap"
        else:
            page.click("[data-key=discard]")
            done = done or "discard"
        prefer = "discard"
        page.wait_for_function(
            "() => !document.querySelector('[data-key=discard]')"
            " && !document.querySelector('[data-key=king]')"
        )
        # Either the turn passed on, or a King's extra draw is offered.
        page.wait_for_function(
            "() => !document.querySelector('.seat.mine.active')"
            " || document.querySelector('[data-key=draw-deck]')"
        )
        if page.locator("[data-key=draw-deck]").count():
            page.click("[data-key=draw-deck]")
            continue
        return done


@pytest.mark.django_db(transaction=True)
def test_two_players_play_a_round(chromium: Any, site: str, artifacts: Path) -> None:
    pages: dict[str, Any] = {}
    try:
        _play_a_round(chromium, site, artifacts, pages)
    except BaseException:
        for name, page in pages.items():
            print(f"----- {name}: last WebSocket frames -----")
            for direction, frame in page.frames_seen[-25:]:
                print(direction, frame)
        raise


def _play_a_round(chromium: Any, site: str, artifacts: Path, pages: dict[str, Any]) -> None:
    started = time.monotonic()
    host_user = UserFactory(username="aiko", display_name="Aiko", language="en")
    guest_user = UserFactory(username="boris", display_name="Борис", language="ja")

    # Through the log-in form: the guest's profile language follows them to this browser.
    host = log_in(chromium, site, host_user.username, DESKTOP, form=True)
    guest = log_in(chromium, site, guest_user.username, PHONE, form=True)
    pages.update(host=host, guest=guest)
    assert guest.locator("html").get_attribute("lang") == "ja"

    # The host creates a private game with pile drawing and a 60 s clock.
    shot(host, artifacts, "01-lobby-desktop-en", full=True)
    host.select_option("#id_kind", "crisp")
    host.select_option("#id_crisp-target_score", "50")
    host.select_option("#id_crisp-draw_seconds", "60")
    host.check("input[name=crisp-pile_draw]")
    host.check("input[name=private]")
    host.click(".create-form button[type=submit]")
    host.wait_for_selector("#invite-code")
    code = host.input_value("#invite-code")
    assert len(code) == 8
    game = Game.objects.get(invite_code=code)
    wait_live(host)

    # The guest joins with the code; the host's lobby updates live.
    shot(guest, artifacts, "02-lobby-phone-ja", full=True)
    guest.fill("#id_invite_code", code.lower())
    guest.click(".code-form button[type=submit]")
    guest.wait_for_url(f"{site}/games/{game.pk}/")
    host.wait_for_selector(".lobby-seat:nth-child(2)")
    assert "Борис" in host.inner_text(".lobby-seats")
    wait_live(host)
    shot(host, artifacts, "03-table-lobby-desktop-en")
    shot(guest, artifacts, "04-table-lobby-phone-ja")

    # Start: both pages become the live table and take the opening look at once.
    host.click("#start-game")
    for page in (host, guest):
        page.wait_for_selector("#table-app")
        wait_live(page)
        assert page.errors == []
        page.wait_for_selector(".seat.mine .pcard.peek >> nth=1")
        # Only the left and right cards are shown; the centre stays face down.
        assert page.locator(".seat.mine .pcard.peek").count() == 2
        assert page.locator(".seat:not(.mine) .pcard.face").count() == 0
    shot(host, artifacts, "05-memorise-desktop-en")
    shot(guest, artifacts, "06-memorise-phone-ja", full=True)
    # R3/R4: the look is hidden again after the memorise period, and not kept anywhere.
    for page in (host, guest):
        page.wait_for_function("() => !document.querySelector('.pcard.peek')", timeout=60_000)
        assert page.locator(".seat.mine .pcard.face").count() == 0
        assert page.evaluate("() => localStorage.length + sessionStorage.length") == 0

    # Turn 1: draw and (if the card allows it) swap.
    first = whose_turn(pages)
    p = pages[first]
    assert p.locator(".seat.mine.active").count() == 1

    def drawn() -> None:
        p.wait_for_selector("#held-wrap:not([hidden]) .pcard.face")
        shot(host, artifacts, f"07-drawn-desktop-en-{first}")
        shot(guest, artifacts, f"08-drawn-phone-ja-{first}", full=True)

    play_turn(p, "swap", after_draw=drawn)
    other = "guest" if first == "host" else "host"

    # Turn 2: the other player draws and discards.
    assert whose_turn(pages) == other
    play_turn(pages[other], "discard")

    # Turn 3: the first player again, then calls crisp inside the window.
    assert whose_turn(pages) == first
    play_turn(pages[first], "swap")
    caller = pages[first]
    caller.wait_for_selector("[data-key=call]", timeout=60_000)
    shot(caller, artifacts, f"09-crisp-window-{first}")
    caller.click("[data-key=call]")
    for page in (host, guest):
        page.wait_for_selector(".crisp-chip")

    # The final turn of the other player, then the reveal.
    assert whose_turn(pages) == other
    play_turn(pages[other], "swap")
    for page in (host, guest):
        page.wait_for_selector("#reveal:not([hidden]) .reveal-table")
        assert page.locator(".seat .pcard.face").count() >= 6  # every card face up
    shot(host, artifacts, "10-reveal-desktop-en")
    shot(guest, artifacts, "11-reveal-phone-ja", full=True)
    rows = host.locator(".reveal-table tbody tr")
    assert rows.count() == 2
    text = host.inner_text(".reveal-panel")
    assert "crisp" in text.lower()
    host.click("[data-key=reveal-close]")
    shot(host, artifacts, "12-after-reveal-desktop-en")
    log = host.inner_text("#log")
    assert "called CRISP" in log
    assert "discarded" in log
    assert "You drew from the deck." in log  # never the value of one's own draw (R4/R5)
    # Japanese phone view of the same table, and an English phone view.
    host.set_viewport_size(PHONE)
    shot(host, artifacts, "13-after-reveal-phone-en", full=True)
    guest.set_viewport_size(DESKTOP)
    guest.click("[data-key=reveal-close]")
    shot(guest, artifacts, "14-after-reveal-desktop-ja")
    assert host.errors == [] and guest.errors == []
    print(f"a round in two browsers in {time.monotonic() - started:.0f} s")
