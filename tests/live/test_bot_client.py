"""docs/API.md's third-party bot (examples/bot_client.py) plays whole games against ours.

Real daphne and a real Celery worker (the computer players move through it), real HTTP from the
client's own urllib. The computer players' think time is shortened (``CRISP_BOT_THINK_MS``) for
both processes; the games' rules are the product's, with no per-move time limit, and so are
their timers -- but for Crisp's pauses after its first round (``LATER_ROUNDS``): the first round
meets the product's memorise period, start delays and crisp windows; the later ones the same
phases, shorter (issue 20: the Crisp game spent most of its 40 s waiting on them).
"""

from __future__ import annotations

import importlib.util
import random
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings
from django.db import transaction

from accounts.services import token_create
from games.models import EngineCall, Game, Seat
from tests import processes as live
from tests.live.conftest import make_user

pytestmark = [pytest.mark.live, pytest.mark.django_db(transaction=True)]

CLIENT = Path(settings.BASE_DIR) / "examples" / "bot_client.py"
DOC = Path(settings.BASE_DIR) / "docs" / "API.md"
#: Each game against easy computer players, shortest settings the host's menu allows, no clock.
GAMES = {
    "crisp": {"opponents": 1, "settings": {"target_score": 50, "draw_seconds": None}},
    "cribbage": {"settings": {"move_seconds": None}},
    "triple_crown": {"settings": {"move_seconds": None}},
}


#: Crisp's pauses from round 2 on, written in the stored snapshot's settings once the game is
#: open (tests only; a round is dealt with the settings in force then): memorise period, start
#: delay and the pause between rounds, each far shorter than the product's 5 s, 2 s and 8 s.
LATER_ROUNDS = {"memorise_ms": 1000, "start_delay_ms": 300, "between_rounds_ms": 1000}


def quicken_later_rounds(game_id: int) -> None:
    with transaction.atomic():
        game = Game.objects.select_for_update().get(pk=game_id)
        game.state["settings"].update(LATER_ROUNDS)
        game.save(update_fields=["state"])


def load_client() -> Any:
    spec = importlib.util.spec_from_file_location("bot_client", CLIENT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_doc_shows_the_client_as_it_is() -> None:
    """The code docs/API.md shows is the file, to the character: one of them cannot drift."""
    blocks = re.findall(r"```python\n(.*?)```", DOC.read_text(), flags=re.S)
    assert CLIENT.read_text() in blocks


@pytest.fixture(scope="module")
def site(django_db_setup: None, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """daphne and a worker, computer players thinking 20 to 80 ms; the site's address.

    One for the module's three games (each game's rows are its own; the database is emptied
    after each test): a start per game cost seconds and proved nothing more."""
    env = {"CRISP_BOT_THINK_MS": "20,80"}
    port = live.free_port()
    log_dir = tmp_path_factory.mktemp("bot-client") / "logs"
    worker = live.celery_worker(log_dir, **env)
    with live.running(live.daphne(log_dir, port, **env), worker):
        live.wait_until(lambda: live.port_open(port), 60, "daphne to listen")
        live.wait_until(lambda: "ready." in worker.log(), 60, "the worker to be ready")
        yield f"http://127.0.0.1:{port}"


@pytest.fixture
def server(site: str, transactional_db: None) -> str:
    """The module's site, for a test whose rows are committed (the site's processes see them)."""
    return site


@pytest.mark.timeout(420)
@pytest.mark.parametrize("kind", list(GAMES))
def test_the_client_plays_a_whole_game(server: str, kind: str, capsys: Any) -> None:
    client = load_client()
    user = make_user(display_name="Visitor")
    key = token_create(user=user, name="bot client")[1]

    api = client.Api(server, key)
    game_id = client.open_game(api, kind, level="easy", **GAMES[kind])
    if kind == "crisp":
        quicken_later_rounds(game_id)
    card = client.play(api, game_id, rng=random.Random(11), poll=0.1)

    game = Game.objects.get(pk=card["id"])
    assert (game.kind, game.status, game.private) == (kind, Game.Status.FINISHED, True)
    seats = list(Seat.objects.filter(game=game).order_by("number").select_related("user"))
    assert seats[0].user == user and not seats[0].sitting_in and seats[0].bot_level == ""
    assert all(s.user.is_bot and s.bot_level == "easy" for s in seats[1:])
    # Our seat's moves went through the API (never a timeout or a computer sitting in for us).
    ours = EngineCall.objects.filter(game=game, call="apply", seat=0).count()
    assert ours == card["moves"] > 0
    assert EngineCall.objects.filter(game=game, call="apply", seat__gte=1).exists()
    assert game.winners == card["winners"] and card["winners"]
    out = capsys.readouterr().out
    assert f"game {game.pk} finished after {ours} moves of ours" in out
    with capsys.disabled():
        print(f"{kind}: a whole game of {game.rounds.count()} rounds")
