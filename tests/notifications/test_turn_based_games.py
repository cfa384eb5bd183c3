"""Issue 26, done when: two people play a whole Cribbage game, and a Triple Crown game with two
computer players, in turn-based mode, each learning of their move ONLY through what the site
tells them -- the "your move" list (``GET /api/v1/me/turns/``), the mail digest and the push.

The driver below never asks the engine whose move it is: each round it reads every person's
list through the API, and the person whose list holds the game moves (a random legal move);
whenever a game enters a person's list, a push for it must have reached their browser (a local
push service, decrypted with the browser's keys) and a mail must have listed it, unless one did
within the hour (the digest's limit). The fake clock lets hours pass between people's moves;
computer players move within their think time on the real bot path. What the driver is told is
cross-checked against the engine's ``awaiting`` after the fact (the list is never wrong).
"""

from __future__ import annotations

import random
from typing import Any

import pytest
from django.core import mail
from django.test import Client

from games import services as game_services
from games.engines import engine_for
from games.models import Game, Seat
from notifications import services
from tests.notifications.push_endpoint import Browser

#: The API's async view reads on the database thread pool: rows must be committed.
pytestmark = pytest.mark.django_db(transaction=True)

HOUR_MS = 3_600_000
TURN_BASED = {"pace": "turn_based", "turn_seconds": 86_400}


class Person:
    """One player as the site reaches them: a session for the API, a subscribed browser and a
    mailbox address."""

    def __init__(self, user: Any, push_service: Any) -> None:
        self.user = user
        self.client = Client()
        self.client.force_login(user)
        self.browser = Browser()
        self.path = f"/push/{user.pk}"
        services.subscribe(
            user, push_service.url(self.path), self.browser.p256dh, self.browser.auth
        )

    def listed(self) -> set[int]:
        """The games in this person's "your move" list, as the API says."""
        r = self.client.get("/api/v1/me/turns/")
        assert r.status_code == 200, r.content
        return {t["game"] for t in r.json()["turns"]}


class Site:
    """The notification tasks the service layer queued, run as the worker would, and what each
    person received from them."""

    def __init__(self, people: list[Person], queued: list[Any], push_service: Any) -> None:
        self.people = {p.user.pk: p for p in people}
        self.queued = queued
        self.push_service = push_service
        self.pushed: dict[int, list[str]] = {pk: [] for pk in self.people}
        self.mailed: dict[int, list[str]] = {pk: [] for pk in self.people}

    def deliver(self) -> None:
        while self.queued:
            task, args, _countdown = self.queued.pop(0)
            task(*args)
        for request in self.push_service.received:
            pk = int(request.path.rsplit("/", 1)[1])
            self.pushed[pk].append(self.people[pk].browser.decrypt(request.body)["url"])
        self.push_service.received.clear()
        for message in mail.outbox:
            (pk,) = [pk for pk, p in self.people.items() if [p.user.email] == message.to]
            self.mailed[pk].append(message.body)
        mail.outbox.clear()


def _awaited(game: Game, now: int) -> set[int]:
    game.refresh_from_db()
    engine = engine_for(game.kind)
    return set(engine.awaiting(engine.GameState.from_json(game.state), now)["seats"])


def _play(
    kind: str, people: list[Person], site: Site, fake_clock: Any, live_calls: Any, bots: int
) -> tuple[Game, dict[str, int]]:
    host = people[0].user
    game = game_services.game_create(host=host, kind=kind, settings=TURN_BASED)
    for p in people[1:]:
        game_services.game_join(game=game, user=p.user, invite_code=game.invite_code)
    for _ in range(bots):
        game_services.game_add_bot(game=game, host=host, level="easy")
    game_services.game_start(game=game, user=host, seed=f"told-{kind}")
    game.refresh_from_db()
    url = f"/games/{game.pk}/"
    seat_of = {s.user_id: s.number for s in Seat.objects.filter(game=game, user__is_bot=False)}
    rng = random.Random(kind)
    told = {p.user.pk: False for p in people}  # in their list at the last look
    last_mail: dict[int, int] = {}
    figures = {"moves": 0, "bot_moves": 0, "pushes": 0, "mails": 0, "limited": 0}
    while game.status == Game.Status.PLAYING:
        assert figures["moves"] + figures["bot_moves"] < 4000
        # Computer players: the wake-ups the commits asked for, within their think time.
        woken = [(v, w) for g, v, w in live_calls.bots if g == game.pk]
        live_calls.bots.clear()
        moved = False
        for version, wake in woken:
            for seat, think in wake:
                fake_clock.advance(think)
                moved |= game_services.game_bot_move(
                    game_id=game.pk, seat_number=seat, version=version
                )
        figures["bot_moves"] += moved
        site.deliver()
        game.refresh_from_db()
        if moved or game.status != Game.Status.PLAYING:
            continue
        # The people: who is told it is their move, by the list, the push and the mail.
        listed = {pk: game.pk in p.listed() for pk, p in site.people.items()}
        assert {seat_of[pk] for pk, on in listed.items() if on} == _awaited(game, fake_clock.ms) - {
            s.number for s in Seat.objects.filter(game=game, user__is_bot=True)
        }
        for pk, on in listed.items():
            if on and not told[pk]:
                assert site.pushed[pk][-1:] == [url], f"no push for {site.people[pk].user}"
                site.pushed[pk].clear()
                figures["pushes"] += 1
                if fake_clock.ms - last_mail.get(pk, -10 * HOUR_MS) >= HOUR_MS:
                    assert len(site.mailed[pk]) == 1 and url in site.mailed[pk][0]
                    last_mail[pk] = fake_clock.ms
                    figures["mails"] += 1
                else:
                    assert site.mailed[pk] == []  # one mail per game per hour at most
                    figures["limited"] += 1
                site.mailed[pk].clear()
            told[pk] = on
        movers = [pk for pk, on in listed.items() if on]
        assert movers, "nobody told of a move, and no computer woken"
        fake_clock.advance(rng.randrange(1, 8) * HOUR_MS)  # hours later: two such within a day
        mover = site.people[movers[0]]
        engine = engine_for(game.kind)
        state = engine.GameState.from_json(game.state)
        action = rng.choice(engine.legal_actions(state, seat_of[mover.user.pk], fake_clock.ms))
        game_services.game_act(
            game=game, user=mover.user, action=action.to_wire(), expected_version=game.version
        )
        figures["moves"] += 1
        # What the mover's list says right after their move: a seat that plays on (a trick won
        # leads the next) is still awaited, and is not told again; any other leaves the list,
        # and its next arrival there is news.
        told[mover.user.pk] = game.pk in mover.listed()
        site.deliver()
        game.refresh_from_db()
    assert game.status == Game.Status.FINISHED
    return game, figures


@pytest.mark.parametrize(("kind", "people", "bots"), [("cribbage", 2, 0), ("triple_crown", 2, 2)])
def test_people_learn_of_every_move_only_from_the_list_the_mail_and_the_push(
    kind: str,
    people: int,
    bots: int,
    make_user: Any,
    fake_clock: Any,
    live_calls: Any,
    queued: Any,
    push_service: Any,
    mailoutbox: Any,
) -> None:
    persons = [
        Person(make_user(f"told-{kind}-{i}", email=f"told{i}@example.com"), push_service)
        for i in range(people)
    ]
    site = Site(persons, queued, push_service)
    game, figures = _play(kind, persons, site, fake_clock, live_calls, bots)
    print(kind, figures)
    assert figures["moves"] > 20 and figures["pushes"] > 10 and figures["mails"] > 10
    assert bots == 0 or figures["bot_moves"] > 10
    # After the end nobody's list holds the game.
    assert all(game.pk not in p.listed() for p in persons)
