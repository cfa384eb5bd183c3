"""Helpers for the layout tests (test_table_layout.py): games driven through the service layer
to a chosen state, a page logged in at a phone's or a desktop's size, and element boxes measured.

Driving the game on the server (random legal moves, any "call" taken at once) is fast and
deterministic enough: the browser only has to draw the state, and the tests measure the drawing.
"""

from __future__ import annotations

import contextlib
import random
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from games import clock, services
from games.engines import engine_for
from games.models import Game
from tests.e2e.conftest import OPEN_CONTEXTS, sign_in
from tests.factories import UserFactory

DESKTOP = {"width": 1366, "height": 800}
PHONE = {"width": 360, "height": 740}
VIEWPORTS = {"phone": PHONE, "desktop": DESKTOP}
#: Crisp's timers for a driven game: no memorising, the next turn at once, crisp callable for a
#: minute after each turn (so ``drive`` ends rounds quickly), a round's results kept up.
QUICK_CRISP = {
    "memorise_ms": 0,
    "window_ms": 60_000,
    "start_delay_ms": 0,
    "between_rounds_ms": 600_000,
}
NAMES = ["Alexandra", "Bartholomew", "Christabel", "Dmitri", "Evangeline", "Fitzgerald",
         "Guinevere", "Hieronymus"]  # fmt: skip


def players(n: int, prefix: str = "p", language: str = "en") -> list[Any]:
    return [
        UserFactory(username=f"{prefix}{i}", display_name=NAMES[i % len(NAMES)], language=language)
        for i in range(n)
    ]


def started(
    kind: str,
    people: list[Any],
    *,
    settings: dict[str, Any] | None = None,
    timers: dict[str, int] | None = None,
    seed: str = "layout",
    bots: int = 0,
) -> Game:
    """A started game of ``people`` (the first is the host), and ``bots`` computer players."""
    game = services.game_create(host=people[0], kind=kind, settings=settings or {})
    for p in people[1:]:
        services.game_join(game=game, user=p, invite_code=game.invite_code)
    for _ in range(bots):
        services.game_add_bot(game=game, host=people[0], level="easy")
    services.game_start(game=game, user=people[0], seed=seed, timers=timers)
    game.refresh_from_db()
    return game


def drive(game: Game, until: Callable[[Game], bool], *, seed: int = 1, steps: int = 4000) -> Game:
    """Random legal moves (a "call" as soon as one is offered) until ``until(game)``; a timer
    that holds everybody up is fired at once."""
    rng = random.Random(seed)
    # The people's seats (a computer's moves are its own): each one's legal actions are what
    # ``selectors.game_legal_actions`` lists, in wire form at the clock's now, here from one
    # parse of the state per step instead of a seat query and a parse per seat (the same
    # options in the same order; the selector itself is tested in tests/games).
    seats = [s for s in game.seats.order_by("number").select_related("user") if s.user_id]
    engine = engine_for(game.kind)
    for _ in range(steps):
        game.refresh_from_db()
        if until(game) or game.status != Game.Status.PLAYING:
            break
        state, now = engine.GameState.from_json(game.state), clock.now_ms()
        options = [
            (s, a.to_wire()) for s in seats for a in engine.legal_actions(state, s.number, now)
        ]
        if not options:
            # Nobody may move: a timer is running (the next round's, a trick's pause). Fire it
            # now rather than wait for it.
            if game.deadlines:
                key = min(game.deadlines, key=lambda d: d.get("at", 0))["key"]
                services.game_fire_deadline(game_id=game.pk, key=key)
            continue
        calls = [o for o in options if o[1].get("type") == "call"]
        seat, action = rng.choice(calls or options)
        try:
            services.game_act(
                game=game, user=seat.user, action=action, expected_version=game.version
            )
        except services.ServiceError:
            continue  # a deadline fired in between: read the game again
    game.refresh_from_db()
    assert until(game), f"the game never reached the state wanted (status {game.status})"
    return game


def open_page(
    browser: Any, site: str, user: Any, viewport: str, path: str, *, fake_timers: bool = False
) -> Any:
    """``user`` logged in, at ``path``, in a phone's (with touch) or a desktop's window; the
    page's language is the user's own. ``fake_timers``: the page's timers are Playwright's, running
    as the real clock does until the test moves them on (``page.clock.fast_forward``), for a
    page that paces what it shows (a callout held for a second or two) while the test only
    reads what it shows."""
    size = VIEWPORTS[viewport]
    phone = viewport == "phone"
    context = browser.new_context(viewport=size, locale="en-GB", has_touch=phone, is_mobile=phone)
    OPEN_CONTEXTS.append(context)
    page = context.new_page()
    page.set_default_timeout(20_000)
    page.errors = []
    page.on("pageerror", lambda error: page.errors.append(str(error)))
    sign_in(context, site, user.username)  # the form's cookies, without the form
    if fake_timers:
        page.clock.install()  # before the load, so every timer of the page is the fake's
    page.goto(f"{site}{path}")
    return page


def shot(page: Any, artifacts: Path, name: str) -> None:
    page.screenshot(path=str(artifacts / f"layout-{name}.png"))


#: JavaScript: the element's box, and the visible box of its nearest scrolling ancestor (or the
#: window), so a test can say whether it is on screen without any scrolling.
VISIBLE = """e => {
  const r = e.getBoundingClientRect();
  let clip = {left: 0, top: 0, right: innerWidth, bottom: innerHeight};
  for (let a = e.parentElement; a; a = a.parentElement) {
    const cs = getComputedStyle(a);
    if (/(auto|scroll|hidden|clip)/.test(cs.overflowX + cs.overflowY)) {
      const b = a.getBoundingClientRect();
      clip = {left: Math.max(clip.left, b.left), top: Math.max(clip.top, b.top),
              right: Math.min(clip.right, b.right), bottom: Math.min(clip.bottom, b.bottom)};
    }
  }
  return {left: r.left, top: r.top, right: r.right, bottom: r.bottom, width: r.width,
          height: r.height, clip: clip};
}"""


def fully_visible(page: Any, selector: str, across_only: bool = False) -> list[str]:
    """Each element matching ``selector`` that is not wholly inside what its scrolling
    ancestors and the window show (the reason, for the assertion message). ``across_only``:
    only left and right count (a page may be scrolled down to a table, never sideways)."""
    bad = []
    for i, box in enumerate(page.eval_on_selector_all(selector, f"es => es.map({VISIBLE})")):
        c = box["clip"]
        if box["width"] == 0 or box["height"] == 0:
            bad.append(f"{selector}[{i}] has no size")
        elif (
            box["left"] < c["left"] - 0.5
            or box["right"] > c["right"] + 0.5
            or (not across_only and box["top"] < c["top"] - 0.5)
            or (not across_only and box["bottom"] > c["bottom"] + 0.5)
        ):
            bad.append(f"{selector}[{i}] {box} is cut off")
    return bad


def boxes(page: Any, selector: str) -> list[dict[str, float]]:
    return page.eval_on_selector_all(
        selector,
        "es => es.map(e => { const r = e.getBoundingClientRect();"
        " return {left: r.left, top: r.top, right: r.right, bottom: r.bottom}; })",
    )


def overlap(a: dict[str, float], b: dict[str, float]) -> bool:
    return (
        min(a["right"], b["right"]) - max(a["left"], b["left"]) > 0.5
        and min(a["bottom"], b["bottom"]) - max(a["top"], b["top"]) > 0.5
    )


def inside(a: dict[str, float], outer: dict[str, float]) -> bool:
    return (
        a["left"] >= outer["left"] - 0.5
        and a["right"] <= outer["right"] + 0.5
        and a["top"] >= outer["top"] - 0.5
        and a["bottom"] <= outer["bottom"] + 0.5
    )


@contextlib.contextmanager
def at(size: str) -> Iterator[None]:
    """Name the size (phone, desktop) in a failure of the block: one test looks at both on the
    one game it played (issue 20: a game per size was played twice over)."""
    try:
        yield
    except BaseException as error:
        error.add_note(f"(at the {size} size)")
        raise
