"""The REST leak harness (``leak_kit.play_and_check``) on turn-based Crisp games (R28): the same
tracker (``leak_crisp.Knowledge``, written from the rules over the unredacted record) checks
every response of random turn-based games -- the look taken whenever a seat chooses, the
"Call crisp?" step, its timeouts."""

from __future__ import annotations

import random
from typing import Any

import pytest

from games import services
from games.models import Event

from .leak_crisp import CrispTable
from .leak_kit import leak_games, play_and_check


class TurnBasedCrispTable(CrispTable):
    """Crisp's leak table, dealt turn-based (the move clock shortened to 30 s, so the
    harness's clock jumps reach its timeouts)."""

    @classmethod
    def start(cls, users: list[Any], rng: random.Random, seed: str) -> CrispTable:
        players = users[: rng.randint(2, 5)]
        settings = {
            "target_score": 50,
            "pace": "turn_based",
            "turn_seconds": 86_400,
            "pile_draw": rng.random() < 0.6,
        }
        game = services.game_create(host=players[0], settings=settings)
        for p in players[1:]:
            services.game_join(game=game, user=p)
        services.game_start(
            game=game, user=players[0], seed=f"leak-tb-{seed}", timers={"turn_seconds": 30}
        )
        game.refresh_from_db()
        return cls(game, players, clocked=True)

    def bad_move(self, rng: random.Random, seat: int) -> dict[str, Any]:
        return rng.choice([{"type": "pass"}, super().bad_move(rng, seat)])


@pytest.mark.parametrize("game", range(leak_games()))
def test_no_response_of_a_turn_based_crisp_game_leaks(game, users, make_user, fake_clock):
    table = play_and_check(TurnBasedCrispTable, users, make_user(), fake_clock, seed=f"tb-{game}")
    table.coverage()
    assert table.game.settings["pace"] == "turn_based"
    # The random play went through the step (the harness acts for every seat).
    assert Event.objects.filter(game=table.game, type="call_ready").exists()
