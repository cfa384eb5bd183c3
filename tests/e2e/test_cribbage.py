"""Two people play a whole game of Cribbage in two real browsers, through the real site.

Aiko (Japanese, a phone 360x740) and Boris (Russian, a desktop 1366x800) sit at a game started
through the service layer with a test-only short target (``timers={"target_score": ...}``)
and a deck chosen for the test: the seed is picked by simulating the pure engine with the
strategy the browsers follow (lay away the two lowest cards, play the lowest playable one), so
that the first hand is played and shown in full and the game ends in the second. The test then
plays by tapping cards, and checks: the peg board's pegs move to the scores, the show's count
appears in each player's language exactly as the catalog builds it, and the game ends with its
winner on both screens. Screenshots go to test-artifacts/e2e/.
"""

from __future__ import annotations

import gettext
import time
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings

from games import services
from games.engines.cribbage import Settings, apply, legal_actions, new_game, score_hand
from games.models import Game
from tests.e2e.conftest import Site
from tests.e2e.test_play import log_in, shot, wait_live
from tests.factories import UserFactory

pytestmark = [pytest.mark.browser, pytest.mark.live]

PHONE = {"width": 360, "height": 740}
DESKTOP = {"width": 1366, "height": 800}
LOCALE = Path(settings.BASE_DIR) / "locale"
NOTHING = "nineteen — nothing"
AND_LAST = "%(list)s, and %(last)s"
YOU_WIN = "You win!"


def _simulate(seed: str, target: int) -> tuple[Any, list[Any]]:
    """The game the browsers will play: lowest two laid away, lowest playable card played."""
    st, events = new_game(seats=2, settings=Settings(target_score=target), seed=seed, now=0)
    now = 0
    while st.status == "playing":
        now += 1000
        for seat in (0, 1):
            acts = legal_actions(st, seat, now)
            if acts:  # in hand order: the two lowest cards, or the lowest playable one
                st, ev = apply(st, seat, acts[0], now)
                events += ev
                break
    return st, events


def pick_game() -> tuple[str, int, list[Any]]:
    """A seed and target: hand 1 shown in full (a fifteen in a hand), the end in hand 2."""
    for i in range(400):
        seed = f"e2e-cribbage-{i}"
        _, events = _simulate(seed, 121)
        first = next(e for e in events if e.type == "hand_over" and e.data["round"] == 1)
        after_one = max(first.data["scores"])
        if after_one < 10 or not any(s["breakdown"]["fifteens"] for s in first.data["shows"]):
            continue
        target = after_one + 6
        st, events = _simulate(seed, target)
        over = next(e for e in events if e.type == "game_over")
        if over.data["round"] == 2 and min(st.scores) > 0:
            return seed, target, events
    raise AssertionError("no seed gives a short game")


def tr(language: str, msgid: str, context: str | None = None) -> str:
    """A table string in ``language``, from the compiled JavaScript catalog the page uses.

    (Called with variables only, so makemessages does not take the test's strings for
    the site's.)"""
    with (LOCALE / language / "LC_MESSAGES" / "djangojs.mo").open("rb") as mo:
        cat = gettext.GNUTranslations(mo)
    return cat.gettext(msgid) if context is None else cat.pgettext(context, msgid)


def spoken(breakdown: dict[str, Any], language: str) -> str:
    """The show's count as static/js/games/cribbage/spoken.js builds it, from the catalog."""
    items = [*breakdown["fifteens"], *breakdown["pairs"], *breakdown["runs"]]
    items += [i for i in (breakdown["flush"], breakdown["nobs"]) if i]
    if not items:
        return tr(language, NOTHING)
    units = ["one", "two", "three", "four", "five", "six", "seven", "eight", "nine"]
    teens = ["ten", "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen"]
    teens += ["seventeen", "eighteen", "nineteen"]
    words = ["zero", *units, *teens, "twenty", *(f"twenty-{w}" for w in units)]
    parts, running = [], 0
    for it in items:
        running += it["points"]
        n = tr(language, words[running], "count aloud")
        kind = it["kind"]
        if kind == "fifteen":
            msg = "fifteen %(n)s"
        elif kind == "pair":
            msg = "a pair is %(n)s"
        elif kind == "run":
            msg = "a run of " + ["three", "four", "five"][len(it["cards"]) - 3] + " is %(n)s"
        elif kind == "flush":
            msg = "a flush of five is %(n)s" if it["points"] == 5 else "a flush of four is %(n)s"
        else:
            msg = "one for his nob is %(n)s"
        parts.append(tr(language, msg).replace("%(n)s", n))
    if len(parts) == 1:
        return parts[0]
    head = tr(language, ", ").join(parts[:-1])
    return tr(language, AND_LAST).replace("%(list)s", head).replace("%(last)s", parts[-1])


def watch_toasts(page: Any) -> None:
    """Remember every message the table pops up (a refused move would show one)."""
    page.evaluate(
        "() => { window.toasts = []; const t = document.getElementById('toast');"
        " new MutationObserver(() => { if (!t.hidden && t.textContent)"
        " window.toasts.push(t.textContent); }).observe(t, {attributes: true,"
        " childList: true, characterData: true, subtree: true}); }"
    )


def peg_scores(page: Any) -> list[int]:
    return page.eval_on_selector_all(
        "#board .peg.front", "els => els.map(e => parseInt(e.dataset.score, 10))"
    )


def no_scroll_needed(page: Any) -> None:
    """Everything needed for the move is inside the viewport."""
    height = page.viewport_size["height"]
    for sel in ("#seat-bottom .crib-hand", "#actions", "#count", "#board"):
        box = page.locator(sel).bounding_box()
        assert box is not None and box["y"] >= 0 and box["y"] + box["height"] <= height + 1, sel


def step(page: Any) -> str:
    """Make this page's move if it has one: '' when it had nothing to do."""
    if page.locator("#show-overlay:not([hidden]) .winners").count():
        return "over"
    if page.locator("#show-overlay:not([hidden]) [data-key=show-close]").count():
        return "show"
    if page.locator("[data-key=lay-away]").count():
        cards = page.locator("#seat-bottom button.crib-card.pickable")
        if cards.count() == 6 and page.locator("#seat-bottom button.crib-card.chosen").count() == 0:
            cards.nth(0).click()
            cards.nth(1).click()
            page.wait_for_selector("[data-key=lay-away]:not([disabled])")
            page.click("[data-key=lay-away]")
            page.wait_for_function("() => !document.querySelector('[data-key=lay-away]')")
            return "lay_away"
        return ""
    # A tap on the first playable card, found and tapped in one step: the table re-renders on
    # every frame that arrives, so a card found in one call may be a new element by the next.
    played = page.evaluate(
        "() => { const b = document.querySelector("
        "'#seat-bottom button.crib-card.pickable:not([disabled])');"
        " if (!b || document.querySelector('[data-key=lay-away]')) return null;"
        " b.click(); return b.dataset.card; }"
    )
    if played:
        # The hand is locked while the move is on its way (the last card also deals anew).
        page.wait_for_selector("#seat-bottom button.crib-card[disabled]", state="detached")
        return "play"
    return ""


@pytest.mark.django_db(transaction=True)
def test_two_players_play_cribbage_to_the_end(
    chromium: Any, live_site: Site, artifacts: Path
) -> None:
    site = live_site.url
    started = time.monotonic()
    seed, target, expected = pick_game()
    aiko = UserFactory(username="aiko", display_name="Aiko", language="ja")
    boris = UserFactory(username="boris", display_name="Борис", language="ru")
    game = services.game_create(host=aiko, kind="cribbage", settings={"move_seconds": 60})
    services.game_join(game=game, user=boris)
    services.game_start(game=game, user=aiko, seed=seed, timers={"target_score": target})

    UserFactory(username="chen", display_name="Chen", language="en")
    # Each page opens the game at once (issue 20: the games' lobby first was a page load more).
    phone = log_in(chromium, site, "aiko", PHONE, to=f"/games/{game.pk}/")
    desk = log_in(chromium, site, "boris", DESKTOP, to=f"/games/{game.pk}/")
    watcher = log_in(chromium, site, "chen", DESKTOP, to=f"/games/{game.pk}/")
    pages = {"ja": phone, "ru": desk}
    try:
        _play(game, pages, live_site, artifacts, expected, target, watcher)
    except BaseException:
        for name, page in pages.items():
            shot(page, artifacts, f"cribbage-failed-{name}")
            print(f"----- {name}: last WebSocket frames -----")
            for direction, frame in page.frames_seen[-25:]:
                print(direction, frame)
        raise
    print(f"a cribbage game in two browsers in {time.monotonic() - started:.0f} s")


def _play(
    game: Game,
    pages: dict[str, Any],
    live_site: Site,
    artifacts: Path,
    expected: list[Any],
    target: int,
    watcher: Any,
) -> None:
    # A spectator (English) watches the whole game: face-down hands, no moves.
    wait_live(watcher)
    watcher.wait_for_selector("#seat-top .crib-hand .pcard.back >> nth=5")
    assert watcher.locator("#seat-bottom .crib-hand .pcard.back").count() == 6
    assert watcher.locator(".crib-card.pickable, .pcard.face").count() == 0
    assert "You are watching this game." in watcher.inner_text("#actions")
    for lang, page in pages.items():
        wait_live(page)
        assert page.locator("html").get_attribute("lang") == lang
        page.wait_for_selector("#seat-bottom button.crib-card.pickable >> nth=5")
        watch_toasts(page)
        assert page.locator("#seat-top .crib-hand .pcard.back").count() == 6
        assert page.locator("#seat-top .pcard.face").count() == 0
        assert peg_scores(page) == [0, 0]
        assert page.locator("#table-clock").count() == 1  # the host's 60 s per move
        no_scroll_needed(page)
    shot(pages["ja"], artifacts, "cribbage-01-lay-away-phone-ja")
    shot(pages["ru"], artifacts, "cribbage-02-lay-away-desktop-ru")

    # The "?" opens the rules in a new tab, without leaving the table.
    rules = pages["ru"].locator("a[data-key=rules]")
    assert rules.get_attribute("target") == "_blank"
    assert rules.get_attribute("href") == "/rules/cribbage/"
    for lang, page in pages.items():
        form = "phone" if page is pages["ja"] else "desktop"
        with page.context.expect_page() as opened:
            page.click("a[data-key=rules]")
        rules_page = opened.value
        rules_page.wait_for_load_state()
        assert rules_page.locator("html").get_attribute("lang") == lang
        assert rules_page.locator(".crib-rules section.card").count() == 6
        assert rules_page.evaluate("() => document.documentElement.scrollWidth <= innerWidth")
        shot(rules_page, artifacts, f"cribbage-00-rules-{form}-{lang}", full=True)
        rules_page.close()
        assert page.url.endswith(f"/games/{game.pk}/")  # the table is still there

    shows = [e for e in expected if e.type == "show" and e.data["round"] == 1]
    seen_show = {lang: False for lang in pages}
    shots = set()
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if all(p.locator(".winners").count() for p in pages.values()):
            break
        moved = False
        for lang, page in pages.items():
            if page.locator(".winners").count():
                continue
            did = step(page)
            mid_count = page.locator(".count-cards .pcard").count() >= 2
            if did == "play" and "play" not in shots and mid_count:
                shots.add("play")
                for other in pages.values():
                    no_scroll_needed(other)
                # The spectator sees the played cards, never a hand.
                watcher.wait_for_function(
                    "() => document.querySelectorAll('.count-cards .pcard.face').length >= 2"
                )
                assert watcher.locator(".crib-hand .pcard.face").count() == 0
                shot(watcher, artifacts, "cribbage-03-play-spectator-en")
                for other_lang, other in pages.items():
                    form = "phone" if other is pages["ja"] else "desktop"
                    shot(other, artifacts, f"cribbage-03-play-{form}-{other_lang}")
            if did == "show":
                # The show of hand 1: each hand counted aloud in this player's language.
                words = page.locator("#show-overlay .show-words").all_text_contents()
                # The next hand is dealt already: its lay-away clock shows over the show.
                page.wait_for_selector("#show-overlay .show-clock .countdown")
                assert words == [spoken(s.data["breakdown"], lang) for s in shows], words
                form = "phone" if page is pages["ja"] else "desktop"
                shot(page, artifacts, f"cribbage-04-show-{form}-{lang}")
                seen_show[lang] = True
                page.click("[data-key=show-close]")
                if lang == "ru":
                    # A reload keeps what happened: the log is rebuilt from the stored events
                    # and the last show stays at the side, in the player's words.
                    assert page.evaluate("() => window.toasts") == []
                    page.reload()
                    wait_live(page)
                    watch_toasts(page)
                    page.wait_for_selector("#last-hand-card:not([hidden]) .show-words")
                    side = page.locator("#last-hand .show-words").all_text_contents()
                    assert side == words
                    page.wait_for_function(
                        "(w) => document.getElementById('log').textContent.includes(w)",
                        arg=words[0],
                    )
                    # The server goes down and comes back: every table says so, reconnects
                    # on its own and carries on from where it was.
                    live_site.stop_daphne()
                    for other in (*pages.values(), watcher):
                        other.wait_for_selector("#conn[data-state=offline]")
                    shot(pages["ja"], artifacts, "cribbage-07-offline-phone-ja")
                    live_site.start_daphne()
                    for other in (*pages.values(), watcher):
                        other.wait_for_selector("#conn[data-state=online]", timeout=30_000)
            moved = moved or did not in ("", "over")
        if not moved:
            time.sleep(0.15)
    assert all(seen_show.values()), seen_show
    watcher.wait_for_selector("#show-overlay:not([hidden]) .winners")
    assert watcher.errors == [], watcher.errors

    game.refresh_from_db()
    assert game.status == "finished"
    final = [s.score for s in game.seats.order_by("number")]
    winner = game.winners[0]
    assert final[winner] == target
    names = {0: "Aiko", 1: "Борис"}
    for lang, page in pages.items():
        page.wait_for_selector("#show-overlay:not([hidden]) .winners")
        # The pegs stand on the final scores: the front pegs moved, the back pegs behind them.
        page.wait_for_function(
            "(s) => [...document.querySelectorAll('#board .peg.front')]"
            ".map(e => +e.dataset.score).join() === s",
            arg=",".join(map(str, final)),
        )
        backs = page.eval_on_selector_all(
            "#board .peg.back", "els => els.map(e => parseInt(e.dataset.score, 10))"
        )
        assert all(0 < b < f or f == 0 for b, f in zip(backs, final, strict=True)) or backs
        text = page.inner_text("#show-overlay .winners")
        you_win = (lang == "ja") == (winner == 0)
        if you_win:
            assert tr(lang, YOU_WIN) in text
        else:
            assert names[winner] in text
        form = "phone" if page is pages["ja"] else "desktop"
        shot(page, artifacts, f"cribbage-05-game-over-{form}-{lang}")
        page.click("[data-key=show-close]")
        shot(page, artifacts, f"cribbage-06-table-after-{form}-{lang}")
        log = page.inner_text("#log")
        # The log kept the show: the first hand's counts, in this player's words.
        assert spoken(shows[0].data["breakdown"], lang) in log
        assert page.errors == [], page.errors
        # Every kind of show item, counted aloud by the table's own module in this language.
        hands = [
            (["5C", "5D", "5H", "JS"], "5S", False),  # 29
            (["4H", "5H", "6H", "JH"], "5S", False),  # 20, a flush of four
            (["4H", "5H", "6H", "JH"], "5S", True),  # 16 as a crib: no flush
            (["2H", "4H", "6H", "8H"], "TH", False),  # a flush of five
            (["3C", "4D", "5H", "6S"], "KC", False),  # a run of four
            (["2C", "4D", "6H", "8S"], "KC", False),  # nothing: a "19"
            (["JD", "3C", "7H", "9S"], "4D", False),  # nobs
        ]
        breakdowns = [score_hand(h, st, is_crib=c).to_json() for h, st, c in hands]
        said = page.evaluate(
            "async (bs) => { const m = await import('/static/js/games/cribbage/spoken.js');"
            " return bs.map(m.spokenShow); }",
            breakdowns,
        )
        assert said == [spoken(b, lang) for b in breakdowns]
        # Nothing was refused: no move was made on a table that had already moved on.
        assert page.evaluate("() => window.toasts") == []
