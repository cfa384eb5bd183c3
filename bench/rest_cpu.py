"""CPU per REST read, the way it was against the way it is, beside a bare DRF view (issue 25).

    .venv/bin/python bench/rest_cpu.py --database-url postgres://postgres@127.0.0.1:5432/crisp_rest
    .venv/bin/python bench/rest_cpu.py --database-url sqlite:///var/bench_rest.sqlite3

One process, one started 3-seat Crisp game, a seat's client with a real API token
(``Authorization: Token``, as a third-party client reads), every request through Django's whole
handler (the site's middleware, DRF's authentication, throttles, content negotiation, the
renderer). Each read is made alternately the old way (``before``: ``selectors.game_for_user``
and the events' queryset, the ORM building their SQL on every request) and the current way
(``after``: the same reads compiled once, ``games.api.views``), ``--calls`` times each; and a
bare DRF ``APIView`` on the same stack (same authentication and default throttle, answers
``{}``), so what the game's own work costs above the stack is seen. Session 16: ``before`` also
looks the API token up with the ORM's query built per request (``after``: compiled once,
``accounts.selectors.token_for_key``), which the bare view's row measures alone; and the
detail's seats the same way (``selectors.game_detail``); ``--old token,seats`` takes back
only those two, so ``before`` is session 15's tree; and the games list's seats with their users
in one prefetch (``list``; one game in the seat's list). CPU of this thread per
request (``time.thread_time``), median and p90; alternating in one process is the A/B least
moved by a loaded machine (bench/RESULTS.md, session 8).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
import types
from collections.abc import Callable
from pathlib import Path
from typing import Any

BASE_DIR = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(BASE_DIR))
sys.path.insert(1, str(BASE_DIR / "bench"))


def _urls() -> str:
    """The site's URLs with the bare view in front (a module made here, for ROOT_URLCONF)."""
    from django.urls import include, path
    from rest_framework.response import Response
    from rest_framework.views import APIView

    class Bare(APIView):
        def get(self, request: Any) -> Response:
            return Response({})

    module = types.ModuleType("bench_rest_urls")
    module.urlpatterns = [  # type: ignore[attr-defined]
        path("bench/bare/", Bare.as_view()),
        path("", include("crisp_site.urls")),
    ]
    sys.modules[module.__name__] = module
    return module.__name__


#: The levers ``before`` takes back (``--old``): the game's and the events' reads (session 15's
#: branch), the API token's lookup and the detail's seats (session 16's).
LEVERS = ("game", "events", "token", "seats", "list")


def _old_way(levers: tuple[str, ...] = LEVERS) -> Callable[[bool], None]:
    """A switch between the old reads (True) and the current ones (False), for ``levers``."""
    from accounts import authentication
    from accounts.keys import key_hash, key_is_well_formed
    from accounts.models import ApiToken
    from games import selectors
    from games.api import views

    current_game, current_events = views._game, views._events
    current_token = authentication.token_for_key
    current_seats = selectors._detail_seats
    current_list = selectors.game_list

    def old_game(request: Any, game_id: int, state: bool = True) -> Any:
        return selectors.game_for_user(
            game_id=game_id, user=request.user, invite_code=views._invite(request)
        )

    def old_events(game: Any, since: int, limit: int) -> list[Any]:
        return list(selectors.events_query(game_id=game.pk, seq=since, limit=limit))

    def old_token(*, key: str) -> Any:
        """``token_for_key`` as it was: the ORM builds the query per request."""
        if not key_is_well_formed(key):
            return None
        return ApiToken.objects.select_related("user").filter(key_hash=key_hash(key)).first()

    def old_seats(game: Any) -> list[Any]:
        return list(game.seats.select_related("user").order_by("number"))

    def old_list(*, user: Any, scope: str = "open", kind: str | None = None) -> Any:
        """``game_list``'s seats as they were prefetched: the seats, then their users."""
        return (
            current_list(user=user, scope=scope, kind=kind)
            .prefetch_related(None)
            .prefetch_related("seats__user")
        )

    def switch(old: bool) -> None:
        if "list" in levers:
            selectors.game_list = old_list if old else current_list  # type: ignore[assignment]
        if "seats" in levers:
            selectors._detail_seats = old_seats if old else current_seats  # type: ignore[assignment]
        if "token" in levers:
            authentication.token_for_key = old_token if old else current_token  # type: ignore[assignment]
        if "game" in levers:
            views._game = old_game if old else current_game  # type: ignore[assignment]
        if "events" in levers:
            views._events = old_events if old else current_events  # type: ignore[assignment]

    return switch


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--database-url", required=True)
    parser.add_argument("--calls", type=int, default=1000)
    parser.add_argument(
        "--profile", metavar="READ", help="instead: cProfile the current way of one read (its name)"
    )
    parser.add_argument(
        "--old",
        default=",".join(LEVERS),
        help=f"the levers 'before' takes back, of {','.join(LEVERS)} (default: all)",
    )
    args = parser.parse_args()
    if not set(args.old.split(",")) <= set(LEVERS):
        parser.error(f"--old takes some of {','.join(LEVERS)}")
    os.environ.update(
        DJANGO_SETTINGS_MODULE="crisp_site.settings",
        DATABASE_URL=args.database_url,
        REDIS_URL=os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/9"),
        DEBUG="0",
        LOG_LEVEL="WARNING",
        CONN_MAX_AGE="0",
        ALLOWED_HOSTS="testserver",
        SECRET_KEY="bench-rest-not-secret",  # noqa: S106 - a throwaway bench key
        # High limits: the throttles still count every request (a cache round trip each).
        THROTTLE_RATES="anon_read=1000000/minute,game_act=1000000/second",
    )
    subprocess.run(
        [sys.executable, "manage.py", "migrate", "--noinput", "-v", "0"], cwd=BASE_DIR, check=True
    )
    import django

    django.setup()
    from django.conf import settings
    from django.test import Client
    from live import make_tables

    from games import services
    from games.models import Game

    settings.ROOT_URLCONF = _urls()
    ((game_id, tokens),) = make_tables(1)
    game = Game.objects.get(pk=game_id)
    services.game_start(
        game=game_id, user=game.host, timers={"memorise_ms": 0, "start_delay_ms": 0}
    )
    seat = Client(HTTP_AUTHORIZATION=f"Token {tokens[0]}")
    anonymous = Client()
    base = f"/api/v1/games/{game_id}/"
    reads: list[tuple[str, Client, str]] = [
        ("bare DRF view", seat, "/bench/bare/"),
        ("state (seat)", seat, base + "state/"),
        ("actions (seat)", seat, base + "actions/"),
        ("events (seat)", seat, base + "events/?since=0"),
        ("detail (seat)", seat, base),
        ("state (anonymous)", anonymous, base + "state/"),
        ("list mine (seat)", seat, "/api/v1/games/?scope=mine"),
    ]
    switch = _old_way(tuple(args.old.split(",")))
    if args.profile:
        _profile(next(r for r in reads if r[0] == args.profile), args.calls)
        return
    print(f"{args.calls} requests of each, alternating, CPU of this thread per request (ms)")
    print(f"  {'':<20}{'before p50':>11}{'p90':>8}{'after p50':>11}{'p90':>8}{'saved':>8}")
    for name, client, url in reads:
        times: dict[bool, list[float]] = {True: [], False: []}
        for i in range(args.calls + 50):  # the first 50 of each warm both
            for old in (True, False):
                switch(old)
                t0 = time.thread_time()
                response = client.get(url, secure=True)
                spent = (time.thread_time() - t0) * 1000
                assert response.status_code == 200, (url, response.status_code)
                if i >= 50:
                    times[old].append(spent)
        b, a = sorted(times[True]), sorted(times[False])
        p90 = int(0.9 * (len(b) - 1))
        print(
            f"  {name:<20}{statistics.median(b):11.3f}{b[p90]:8.3f}"
            f"{statistics.median(a):11.3f}{a[p90]:8.3f}"
            f"{statistics.median(b) - statistics.median(a):8.3f}"
        )
    switch(False)


def _profile(read: tuple[str, Any, str], calls: int) -> None:
    """Where one read's CPU goes (the current way), by cumulative time."""
    import cProfile
    import pstats

    _, client, url = read
    for _ in range(50):
        client.get(url, secure=True)
    profiler = cProfile.Profile()
    profiler.enable()
    for _ in range(calls):
        client.get(url, secure=True)
    profiler.disable()
    pstats.Stats(profiler).sort_stats("cumulative").print_stats(60)


if __name__ == "__main__":
    main()
