"""No mail and no push carries a card or a role (issue 26).

Random games of every registered kind (the REST leak harness, ``tests/games/leak_kit.py``, with
its per-kind tables, without its per-step reads: ``tests/games/test_leak.py`` checks those) are
played through the API; after every ``EVERY``-th step every player whose move it is gets a
digest (the hour's limit lifted) and a push to a browser subscribed at a local push
service, and every mail subject, text and HTML body and every decrypted push payload is checked:
no card code (``leak_kit.cards_in``), no role (``leak_triple_crown.role_marks``) -- not even the
receiver's own: a notification says whose move it is, in which game, until when, and nothing of
the table.

The games are live (some with a move clock, as each kind's table picks) with live games
notifying (``notify_live``): a notification's words do not depend on the pace, and the live
tables reach every phase of every kind (``test_integration.py`` follows a turn-based game).
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.core import mail

from games.engines import KINDS
from notifications import services
from notifications.models import MailSent
from tests.games.leak_kit import LeakTable, cards_in, leak_games, play_and_check
from tests.games.leak_triple_crown import role_marks
from tests.games.test_leak import TABLES
from tests.notifications.push_endpoint import Browser

pytestmark = pytest.mark.django_db

#: Notifications are checked after every EVERY-th step (each check mails and pushes to every
#: player: every step made the Triple Crown game a minute of CPU).
EVERY = 3

URL = re.compile(r"https?://[^\s\"<>]+")


def leaks(text: str, allowed_urls: set[str]) -> set[str]:
    """The cards and roles in a notification's text, and any address it links that is not one
    it may link (a game's page, the settings page, the person's unsubscribe link): the links'
    signed tokens are random letters, checked whole instead of as words."""
    urls = set(URL.findall(text))
    found = {f"url:{u}" for u in urls - allowed_urls}
    plain = URL.sub(" ", text)
    return found | cards_in(plain) | role_marks(plain)


class Outbox:
    """What the notifications sent during a game, and the checks."""

    def __init__(self, push_service: Any) -> None:
        self.push_service = push_service
        self.browsers: dict[int, Browser] = {}
        self.mails = 0
        self.pushes = 0

    def subscribe(self, user: Any) -> None:
        if user.pk not in self.browsers:
            browser = Browser()
            path = f"/push/{user.pk}"
            services.subscribe(user, self.push_service.url(path), browser.p256dh, browser.auth)
            self.browsers[user.pk] = browser

    def check(self, table: LeakTable) -> None:
        game = table.game
        MailSent.objects.all().delete()  # every step's digest, not one an hour
        for user in table.players:
            self.subscribe(user)
            sent = len(mail.outbox)
            services.send_digest(user.pk)
            services.push_your_move(user.pk, game.pk)
            allowed = {
                services.site_url(services.game_path(game)),
                services.site_url("/"),
                services.unsubscribe_url(user.pk),
                services.site_url("/accounts/notifications/"),
            }
            for message in mail.outbox[sent:]:
                for part in (message.subject, message.body, message.alternatives[0][0]):
                    assert not leaks(part, allowed), (leaks(part, allowed), part)
                self.mails += 1
        for request in self.push_service.received:
            user_pk = int(request.path.rsplit("/", 1)[1])
            payload = self.browsers[user_pk].decrypt(request.body)
            assert set(payload) == {"title", "body", "url"}
            assert payload["url"] == services.game_path(game)
            text = f"{payload['title']} {payload['body']}"
            assert not leaks(text, set()), (leaks(text, set()), payload)
            self.pushes += 1
        self.push_service.received.clear()


def notifying(table_cls: type[LeakTable], outbox: Outbox) -> type[LeakTable]:
    """The kind's table, with the notifications checked after every step."""

    class Table(table_cls):  # type: ignore[valid-type, misc]
        def after_step(self, step: int) -> None:
            super().after_step(step)
            if step % EVERY == 0:
                outbox.check(self)

    return Table


@pytest.mark.parametrize("game", range(max(1, leak_games() // 4)))
@pytest.mark.parametrize("kind", sorted(KINDS))
def test_no_notification_leaks(
    kind, game, users, make_user, fake_clock, notify_live, push_service, mailoutbox
):
    for i, user in enumerate(users):
        user.email = f"u{i}@example.com"
        user.language = ("en", "ja", "ru")[i % 3]
        user.save()
    outbox = Outbox(push_service)
    # The REST reads (state, events, the spectators) are tests/games/test_leak.py's: here only
    # the moves and their answers are checked beside the notifications.
    table = play_and_check(
        notifying(TABLES[kind], outbox),
        users,
        make_user(),
        fake_clock,
        seed=f"{kind}-n{game}",
        reads=False,
    )
    assert outbox.mails > 0 and outbox.pushes > 0, table.stats
    print(kind, "mails", outbox.mails, "pushes", outbox.pushes, dict(table.stats))


def test_the_check_catches_a_card_or_a_role():
    assert leaks("Your move: AS in hand", set()) == {"AS"}
    assert leaks("Вы — High Crown", set()) == {"high"}
    assert leaks("see https://evil.example/KH", set()) == {"url:https://evil.example/KH"}
    assert leaks("see https://x.example/a-QS-b", {"https://x.example/a-QS-b"}) == set()
