"""Four people play Triple Crown in four real browsers, through the real site, to the game's end.

Two are on phones (360x740), two on desktops (1366x800), in English, Japanese and Russian. The
game's seed is chosen (by the test, replaying the engine with the players' own choices) so that
hand 1 is a Crown hand played to trick 13 and hand 2 a Double Stakes hand that stops early; the
target is set (a test-only setting) so that hand 2 ends the game. Every player plays the first
card the table lets them lift (tap to lift, tap again to play), and the Double Stakes player
names hearts with the memo High through the dialog. Hand 1's tricks 3 to 12 are played through
the service layer with the same choice (``BY_SERVICE_H1``), the pages following them.

Checked on the way: each page shows exactly one role badge -- its own, as the server's truth
says -- and no other seat's role; only legal cards can be lifted; the reveal names every role
with its tricks and points; the scores and the game-over panel agree with the engine.
"""

from __future__ import annotations

import re
import time
from pathlib import Path
from typing import Any

import pytest

from games import services
from games.engines import triple_crown as tc
from games.models import Event, Game
from tests.e2e.conftest import OPEN_CONTEXTS, sign_in
from tests.factories import UserFactory

pytestmark = [pytest.mark.browser, pytest.mark.live]

DESKTOP = {"width": 1366, "height": 800}
PHONE = {"width": 360, "height": 740}
RANKS = "23456789TJQKA"
TAP = {"x": 9, "y": 28}
#: The declaration the Double Stakes player makes in the dialog.
TRUMPS, MEMO = "H", "high"
SEED = "tc-e2e-9"
#: Seat by seat: two desktops, two phones, three languages.
PEOPLE = [
    ("aiko", "Aiko", "en", DESKTOP),
    ("boris", "Борис", "ru", PHONE),
    ("chie", "千恵", "ja", DESKTOP),
    ("dan", "Dan", "en", PHONE),
]
#: What an English page's badge says for each role.
ROLE_WORDS = {
    "high": "High Crown",
    "low": "Low Crown",
    "team": "Team Crown",
    "double": "Double Stakes",
    "opponent": "Against Double Stakes",
}


def display_order(cards: list[str], trumps: str | None) -> list[str]:
    """The order the table fans a hand in (static/js/games/triple_crown/view.js)."""
    suits = ["S", "H", "C", "D"]
    if trumps and trumps != "NT":
        suits = [trumps] + [s for s in suits if s != trumps]
    return sorted(cards, key=lambda c: (suits.index(c[1]), -RANKS.index(c[0])))


def plan(seed: str) -> list[dict[str, Any]]:
    """The hands this seed gives when everybody plays like the test's players do."""
    st, _ = tc.new_game(
        seats=4, settings=tc.Settings(move_seconds=60, target_score=1000), seed=seed, now=0
    )
    hands: list[dict[str, Any]] = []
    while len(hands) < 2:
        h = st.round
        if h.phase == "declare":
            action = tc.Action.declare(TRUMPS, MEMO)
        else:
            legal = [a.card for a in tc.legal_actions(st, h.turn, 0)]
            action = tc.Action.play(display_order(legal, h.trumps)[0])
        st, events = tc.apply(st, h.turn, action, 0)
        hands += [e.data for e in events if e.type == "hand_over"]
    return hands


def people_lang(seat: int) -> str:
    return PEOPLE[seat][2]


def log_in(browser: Any, site: str, username: str, viewport: dict[str, int]) -> Any:
    context = browser.new_context(
        viewport=viewport, locale="en-GB", has_touch=viewport is PHONE, is_mobile=viewport is PHONE
    )
    OPEN_CONTEXTS.append(context)
    page = context.new_page()
    page.set_default_timeout(60_000)
    page.errors = []
    page.on("pageerror", lambda error: page.errors.append(str(error)))
    page.on(
        "response",
        lambda r: (
            page.errors.append(f"{r.status} {r.url}")
            if r.status >= 400 and not r.url.endswith("/favicon.ico")
            else None
        ),
    )
    sign_in(context, site, username)  # the form's cookies, without the form (conftest.py)
    return page


def shot(page: Any, artifacts: Path, name: str) -> None:
    page.evaluate("() => window.scrollTo(0, 0)")  # a click may have scrolled the page
    page.screenshot(path=str(artifacts / f"tc-{name}.png"))


def truth(game: Game) -> dict[str, Any]:
    game.refresh_from_db()
    return game.state


def in_view(page: Any, selector: str) -> bool:
    """Whether the element is wholly inside the window (no scrolling needed)."""
    return page.eval_on_selector(
        selector,
        "e => { const r = e.getBoundingClientRect();"
        " return r.top >= 0 && r.left >= 0 && r.bottom <= innerHeight && r.right <= innerWidth; }",
    )


def check_badges(pages: list[Any], game: Game) -> None:
    """Each seat's page shows its own role, and nothing of anybody else's."""
    roles = truth(game)["round"]["roles"]
    for seat, page in enumerate(pages):
        page.wait_for_selector("#role-badge")
        assert page.locator(".tc-role").count() == 1
        assert page.get_attribute("#role-badge", "data-role") == roles[seat]
        assert page.locator("[data-role]").count() == 1  # no role-shaped mark for other seats


#: Hand 1's tricks (counted by those already won) whose cards are played through the service
#: layer, not the pages: tricks 3 to 12 (issue 20). Every page still draws every card and trick
#: as it comes, and the pages play tricks 1-2 (the trick history, the half-played trick) and
#: 13 (the hand's end, its reveal), and all of hand 2: what a page offers and plays is the
#: same code at every trick, checked on each of those moves.
BY_SERVICE_H1 = (2, 12)


def play_hand(pages: list[Any], game: Game, artifacts: Path, tag: str) -> None:
    """Play the hand under way to its end, each move by the page of the seat on turn (hand 1's
    middle tricks through the service layer: `BY_SERVICE_H1`)."""
    number = truth(game)["round"]["number"]
    moves = 0
    shots = listed = False
    while True:
        state = truth(game)
        rnd = state["round"]
        if state["status"] != "playing" or rnd["number"] != number:
            return
        seat = rnd["turn"]
        page = pages[seat]
        version = game.version
        if rnd["phase"] == "declare":
            page.wait_for_selector(f"[data-key=trumps-{TRUMPS}]")
            for other in pages:
                other.wait_for_selector(".tc-trumps.ds")
            shot(page, artifacts, f"{tag}-declare-ds")
            shot(pages[(seat + 1) % 4], artifacts, f"{tag}-declare-waiting")
            assert page.is_disabled("[data-key=declare]")
            page.click(f"[data-key=trumps-{TRUMPS}]")
            page.click(f"[data-key=memo-{MEMO}]")
            assert in_view(page, "[data-key=declare]")
            page.click("[data-key=declare]")
        elif tag == "h1" and BY_SERVICE_H1[0] <= len(rnd["tricks"]) < BY_SERVICE_H1[1]:
            # The middle of hand 1 from "another device": the same card the page would play.
            legal = [a.card for a in tc.legal_actions(tc.GameState.from_json(state), seat, 0)]
            card = display_order(legal, rnd["trumps"])[0]
            services.game_act(
                game=game.pk, user=game.seats.get(number=seat).user,
                action=tc.Action.play(card).to_wire(), expected_version=version,
            )  # fmt: skip
        else:
            hand = rnd["hands"][seat]
            legal = [a.card for a in tc.legal_actions(tc.GameState.from_json(state), seat, 0)]
            # The page offers exactly the legal cards once it has the new state.
            page.wait_for_function(
                "want => JSON.stringify(Array.from(document.querySelectorAll("
                "'.tc-card.playable'), e => e.dataset.card).sort()) === JSON.stringify(want)",
                arg=sorted(legal),
            )
            playable = page.eval_on_selector_all(
                ".tc-card.playable", "els => els.map(e => e.dataset.card)"
            )
            assert sorted(playable) == sorted(legal), (playable, legal)
            shown = page.eval_on_selector_all(".tc-card", "els => els.map(e => e.dataset.card)")
            assert sorted(shown) == sorted(hand)
            card = playable[0]
            page.evaluate("() => window.scrollTo(0, 0)")
            assert in_view(page, f"[data-key=card-{card}]"), page.eval_on_selector(
                f"[data-key=card-{card}]",
                "e => JSON.stringify([e.getBoundingClientRect(), innerHeight, innerWidth,"
                " document.documentElement.scrollHeight])",
            )
            # A fanned card shows its left edge: that is where a player taps it.
            page.click(f"[data-key=card-{card}]", position=TAP)
            page.wait_for_selector(f"[data-key=card-{card}].lifted")
            assert in_view(page, f"[data-key=card-{card}]")
            if moves in (1, 6):
                shot(page, artifacts, f"{tag}-lifted-seat{seat}")
            page.click(f"[data-key=card-{card}]", position=TAP)
        moves += 1
        deadline = time.monotonic() + 60  # a ceiling for the event, generous on a busy machine
        while game.version == version:
            assert time.monotonic() < deadline, "the move was not applied"
            time.sleep(0.05)
            game.refresh_from_db()
        rnd_now = truth(game)["round"]
        if tag == "h1" and len(rnd_now["tricks"]) == 2 and not rnd_now["trick"] and not listed:
            listed = True  # the trick history, viewable by all (T27d)
            for p in (pages[0], pages[3]):
                p.wait_for_function(
                    "() => !document.getElementById('tc-tricks-button').disabled"
                    " && document.getElementById('tc-tricks-button').textContent.includes('2')"
                )
                p.click("#tc-tricks-button")
                p.wait_for_selector("#tricks-dialog[open] .tc-trick-row >> nth=1")
                assert p.locator(".tc-trick-row").count() == 2
                assert p.locator(".tc-trick-row .pcard").count() == 8
                shot(p, artifacts, f"h1-tricks-dialog-{p.viewport_size['width']}")
                p.click("#tricks-dialog button[type=submit]")
        if len(rnd_now["trick"]) == 3 and not shots:
            shots = True
            for s, p in enumerate(pages):
                p.wait_for_function(
                    "n => document.querySelectorAll('#tc-trick .pcard').length === n", arg=3
                )
                shot(p, artifacts, f"{tag}-trick-seat{s}")


@pytest.mark.django_db(transaction=True)
@pytest.mark.timeout(400)
def test_four_players_play_triple_crown_to_the_end(
    chromium: Any, live_site: Any, artifacts: Path
) -> None:
    site = live_site.url
    hands = plan(SEED)
    assert [h["kind"] for h in hands] == ["crown", "double_stakes"]
    target = max(hands[1]["scores"])
    assert max(hands[0]["scores"]) < target  # hand 2 ends the game, hand 1 does not
    users = [UserFactory(username=u, display_name=n, language=lang) for u, n, lang, _ in PEOPLE]
    game = services.game_create(host=users[0], kind="triple_crown", settings={"move_seconds": 60})
    for u in users[1:]:
        services.game_join(game=game, user=u)
    services.game_start(game=game, user=users[0], seed=SEED, timers={"target_score": target})
    pages = [log_in(chromium, site, u, vp) for u, _, _, vp in PEOPLE]
    try:
        _play(pages, game, hands, artifacts, live_site)
    except BaseException:
        for seat, page in enumerate(pages):
            shot(page, artifacts, f"failure-seat{seat}")
            print(f"seat {seat} errors: {page.errors}")
        raise


def _play(
    pages: list[Any], game: Game, hands: list[dict[str, Any]], artifacts: Path, live_site: Any
) -> None:
    site = live_site.url
    for page in pages:
        page.goto(f"{site}/games/{game.pk}/")
        page.wait_for_selector("#conn[data-state=online]")
        page.wait_for_selector(".tc-card, .tc-backs")
    # Ready for a strict CSP: the table's and the rules' HTML have no inline script, handler
    # or style attribute (the table module sets its few layout variables through the CSSOM).
    for path in (f"/games/{game.pk}/", "/rules/triple_crown/"):
        html = pages[0].request.get(site + path).text()
        start = html.index('id="table-app"') if "table-app" in html else html.index("rules-article")
        part = html[start : html.index("</main>")]
        assert not re.search(r"\sstyle=|\son[a-z]+=|<script(?![^>]*\bsrc=)(?![^>]*json)", part)
    assert pages[1].locator("html").get_attribute("lang") == "ru"
    assert pages[2].locator("html").get_attribute("lang") == "ja"
    check_badges(pages, game)
    for seat, page in enumerate(pages):
        shot(page, artifacts, f"h1-start-seat{seat}")
        assert page.locator(".tc-card").count() == 13
        # Everything fits the width: nothing to scroll sideways, even on a 360 px phone.
        assert page.evaluate("document.documentElement.scrollWidth") <= PEOPLE[seat][3]["width"]
        assert in_view(page, "#status-bar") and in_view(page, "#actions")
        assert page.locator(".tc-trumps.ds").count() == 0
    badge = pages[0].inner_text("#role-badge")
    assert ROLE_WORDS[truth(game)["round"]["roles"][0]] in badge

    # A spectator sees the table, but no hand and no role at all.
    eve = UserFactory(username="eve", display_name="Eve", language="en")
    watcher = log_in(pages[0].context.browser, site, eve.username, DESKTOP)
    watcher.goto(f"{site}/games/{game.pk}/")
    watcher.wait_for_selector("#conn[data-state=online]")
    watcher.wait_for_selector(".tc-seat >> nth=2")
    assert watcher.locator(".tc-card").count() == 0
    assert watcher.locator(".tc-role, [data-role]").count() == 0
    assert "You are watching this game." in watcher.inner_text("#actions")
    shot(watcher, artifacts, "h1-spectator")

    # "?" shows the rules over the table, in the player's language, without leaving the game.
    phone = pages[1]
    # (The page's one rules dialog, shared by every kind: a second element with its id used
    # to sit in this table's template.)
    assert phone.locator("#rules-dialog").count() == 1
    phone.click("#tc-help")
    frame = phone.frame_locator("#rules-frame")
    frame.locator(".rules-article h2 >> nth=0").wait_for()
    assert "Двойная ставка" in frame.locator(".rules-article").inner_text()
    shot(phone, artifacts, "rules-dialog-phone-ru")
    phone.click("[data-key=rules-close]")
    phone.wait_for_selector("#rules-dialog", state="hidden")
    assert phone.url.endswith(f"/games/{game.pk}/")
    pages[2].goto(f"{site}/rules/triple_crown/")
    assert "ダブルステークス" in pages[2].inner_text("main")
    shot(pages[2], artifacts, "rules-page-desktop-ja")
    pages[2].go_back()
    pages[2].wait_for_selector("#conn[data-state=online]")
    pages[2].wait_for_selector("#role-badge")

    # Hand 1: a Crown hand, all 13 tricks.
    play_hand(pages, game, artifacts, "h1")
    for seat, page in enumerate(pages):
        page.wait_for_selector("#reveal:not([hidden]) .tc-results")
        assert page.locator(".tc-result").count() == 4
        roles = page.eval_on_selector_all(".tc-result", "els => els.map(e => e.dataset.role)")
        assert roles == hands[0]["roles"]
        shot(page, artifacts, f"h1-reveal-seat{seat}")
    text = pages[0].inner_text("#reveal")
    for points in hands[0]["points"]:
        assert f"+{points}" in text
    assert "High Crown" in text and "Low Crown" in text and "Team Crown" in text
    # Hand 2 is a Double Stakes hand, announced to everybody at once.
    state = truth(game)
    ds = state["round"]["ds_seat"]
    assert ds is not None and state["round"]["number"] == 2
    for page in pages:
        page.click("[data-key=reveal-close]")
        page.wait_for_selector("#reveal", state="hidden")
    for seat, page in enumerate(pages):
        page.wait_for_selector(".tc-trumps.ds")
        if seat != ds:
            assert page.locator(f".tc-seat[data-seat='{ds}'] .tc-ds").count() == 1
            assert page.locator("[data-key=declare]").count() == 0
    check_badges(pages, game)
    assert pages[ds].get_attribute("#role-badge", "data-role") == "double"

    # The server goes away and comes back: every table says so, reconnects and carries on.
    live_site.stop_daphne()
    for page in pages:
        page.wait_for_selector("#conn[data-state=offline]")
    shot(pages[1], artifacts, "h2-offline-phone")
    live_site.start_daphne()
    for page in pages:
        page.wait_for_selector("#conn[data-state=online]", timeout=30_000)
    check_badges(pages, game)

    # Hand 2: the declaration, then play until Double Stakes is sure of success.
    play_hand(pages, game, artifacts, "h2")
    game.refresh_from_db()
    assert game.status == "finished"
    assert truth(game)["scores"] == hands[1]["scores"]
    for seat, page in enumerate(pages):
        page.wait_for_selector("#reveal:not([hidden]) .winners")
        shot(page, artifacts, f"h2-game-over-seat{seat}")
        roles = page.eval_on_selector_all(".tc-result", "els => els.map(e => e.dataset.role)")
        assert roles == hands[1]["roles"]
    final = pages[0].inner_text("#reveal")
    assert "Game over" in final
    if hands[1]["early_end"]:
        assert "stopped there" in final
    winners = [s for s, v in enumerate(hands[1]["scores"]) if v == max(hands[1]["scores"])]
    assert truth(game)["winners"] == winners
    for seat in winners:
        if people_lang(seat) == "en":
            assert "You win!" in pages[seat].inner_text("#reveal")
    # The memo is public now, in the reveal.
    assert "High Crown" in pages[0].inner_text(".tc-reveal-kind")
    # Scores, and the log that survives a reload.
    pages[0].click("[data-key=reveal-close]")
    totals = pages[0].eval_on_selector_all(
        ".scores tbody .total", "els => els.map(e => Number(e.textContent))"
    )
    assert totals == hands[1]["scores"]
    pages[0].reload()
    pages[0].wait_for_selector("#log li.log-hand_over")
    log = pages[0].inner_text("#log")
    assert "Double Stakes" in log and "Hand 1 is over" in log
    shot(pages[0], artifacts, "h2-after-reload-seat0")
    watcher.wait_for_selector("#reveal:not([hidden]) .winners")
    roles = watcher.eval_on_selector_all(".tc-result", "els => els.map(e => e.dataset.role)")
    assert roles == hands[1]["roles"]  # everything is public at the reveal
    for seat, page in enumerate([*pages, watcher]):
        assert page.errors == [], (seat, page.errors)


@pytest.mark.django_db(transaction=True)
@pytest.mark.timeout(120)
def test_a_move_that_runs_out_of_time(chromium: Any, site: str, artifacts: Path) -> None:
    """With a (test-short) move clock, the countdown runs and the server plays for the seat that
    ran out of time (T24); every table marks that seat and logs it."""
    users = [UserFactory(username=f"clock{i}", display_name=f"Clock {i}") for i in range(4)]
    game = services.game_create(host=users[0], kind="triple_crown", settings={"move_seconds": 30})
    for u in users[1:]:
        services.game_join(game=game, user=u)
    services.game_start(game=game, user=users[0], seed="tc-e2e-clock", timers={"move_seconds": 3})
    waiting = truth(game)["round"]["turn"]
    watcher = (waiting + 1) % 4
    page = log_in(chromium, site, users[watcher].username, PHONE)
    page.goto(f"{site}/games/{game.pk}/")
    page.wait_for_selector("#conn[data-state=online]")
    page.wait_for_selector("#table-clock")
    shot(page, artifacts, "clock-running-phone")
    page.wait_for_selector(f".tc-seat[data-seat='{waiting}'] .tc-timeout", timeout=60_000)
    assert "ran out of time" in page.inner_text("#log")
    shot(page, artifacts, "clock-timed-out-phone")
    moved = Event.objects.filter(game=game, type__in=["card_played", "declared"])
    assert any(e.data["timeout"] and e.data["seat"] == waiting for e in moved)  # T24
    assert page.errors == []
