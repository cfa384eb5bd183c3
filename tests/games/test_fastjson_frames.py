"""Frames and JSON columns through `crisp_site.fastjson` are the stdlib's, in real games.

Random games of the three games played through the service layer by players named in
Japanese and Russian, with chat lines in both and emoji: every frame the live layer builds
(from what each change's author committed, and from the table read back) is the text the
stdlib wrote before, character for character; a JSON column written and read back through
orjson holds what the stdlib's write and read give (the stored `jsonb` text too, on PostgreSQL).
"""

from __future__ import annotations

import json
import random
import sys
from typing import Any

import pytest
from django.db import connection
from django.db.models import JSONField

from crisp_site import fastjson
from games import broadcast as real_broadcast
from games import services
from games.models import Game
from tests.games.conftest import new_user
from tests.history.conftest import play, seats_for

KINDS = ("crisp", "cribbage", "triple_crown")
ENCODE = real_broadcast.encode
NAMES = ["ゲーマー花子", "Игрок_Ёжик", "山田太郎", "Светлана", "😀smile", "x" * 30]
CHAT = [
    "こんにちは、皆さん！",  # noqa: RUF001 - Japanese punctuation
    "Привет, как дела?",
    "emoji 😀🃏♠♥",
    'quotes "\\ </script>',
]


def stdlib_compact(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


@pytest.fixture
def frames(monkeypatch: pytest.MonkeyPatch) -> list[tuple[Any, str]]:
    """Every frame `games.broadcast` encodes, with its text (checked as it is made)."""
    seen: list[tuple[Any, str]] = []
    encode = real_broadcast.encode

    def recording(frame: dict[str, Any]) -> str:
        text = encode(frame)
        assert text == stdlib_compact(frame)
        seen.append((frame, text))
        return text

    monkeypatch.setattr(real_broadcast, "encode", recording)
    return seen


def test_django_json_columns_go_through_fastjson() -> None:
    """Installed by `CrispSiteConfig.ready()`: the write's dumps (PostgreSQL) and every JSON
    column's read."""
    assert JSONField.from_db_value.__module__ == "crisp_site.fastjson"
    if connection.vendor == "postgresql":
        adapted = connection.ops.adapt_json_value({"a": 1}, None)
        assert adapted.dumps is fastjson.dumps_db
        assert connection.ops.adapt_json_value({"a": 1}, json.JSONEncoder).dumps is not (
            fastjson.dumps_db
        )


@pytest.mark.django_db
@pytest.mark.parametrize("kind", KINDS)
def test_random_games_frames_are_the_stdlibs_text(
    kind: str,
    fake_clock: Any,
    frames: list[tuple[Any, str]],
    live_calls: Any,
    monkeypatch: pytest.MonkeyPatch,
    django_capture_on_commit_callbacks: Any,
) -> None:
    committed: list[Any] = []
    stub = sys.modules["games.broadcast"]  # the live layer's stand-in (tests/games/conftest)
    monkeypatch.setattr(
        stub, "game_changed", lambda game_id, version, change=None: committed.append(change)
    )
    monkeypatch.setattr(stub, "chat_posted", lambda game_id, message_id: None, raising=False)
    players = [new_user(f"{name}-{kind}") for name in NAMES]
    for seed in range(2):
        n = seats_for(kind, seed + 2)
        with django_capture_on_commit_callbacks(execute=True):
            game = services.game_create(host=players[0], kind=kind, settings={})
            for p in players[1:n]:
                services.game_join(game=game, user=p, invite_code=game.invite_code)
            services.game_start(game=game, user=players[0], seed=f"json-{kind}-{seed}")
            for i, line in enumerate(CHAT):
                message = services.game_chat_post(game=game.pk, user=players[i % n], text=line)
                real_broadcast.encode(real_broadcast.chat_frame(message))
            game.refresh_from_db()

            def observe(g: Game) -> None:
                real_broadcast.change_messages(g.pk, g.version)  # the table read back

            play(game, fake_clock, random.Random(seed), steps=150, observe=observe)
        authored = [change for change in committed if change is not None]
        assert len(authored) > 20  # the hot path's frames: from what the author committed
        for change in authored:
            assert real_broadcast.committed_messages([change])
        committed.clear()
    texts = [text for _, text in frames]
    assert len(texts) > 200
    assert any("ゲーマー花子" in t for t in texts) and any("Привет" in t for t in texts)

    def refused(*args: Any, **kwargs: Any) -> str:
        raise AssertionError("the stdlib's json.dumps")

    # And they are orjson's: the stdlib's encoder is not called for any of them.
    monkeypatch.setattr(json, "dumps", refused)
    assert [ENCODE(frame) for frame, _ in frames] == texts


TRICKY: dict[str, Any] = {
    "ja": "名前 ゲーム", "ru": "Имя Ёжик", "emoji": "😀🃏", "escapes": "\" \\ / \b\f\n\r\t \x1f",
    "line separators": "\u2028\u2029", "empty": [{}, [], "", {"": []}],
    "ints": [0, -1, 2**31, 2**53 + 1, 2**63 - 1, -(2**63), 2**64 - 1, 10**30, -(10**30)],
    "floats": [1.5, -0.0, 1e-7, 1e16, 3.141592653589793, 0.1],
    "nested": {"a": [None, True, False, [[]], {"b": {}}]}, "quote'": "it's %s $1 ?",
}  # fmt: skip


@pytest.mark.django_db
@pytest.mark.parametrize(
    "value", [TRICKY, {"ints": TRICKY["ints"]}, {"plain": TRICKY["ja"], "n": [1, 2]}, [], {}]
)
def test_a_json_column_reads_back_as_with_the_stdlib(
    value: Any, users: list[Any], start_game: Any
) -> None:
    game = start_game(users[:2])
    stored: dict[bool, tuple[Any, str | None]] = {}
    try:
        for fast in (False, True):
            fastjson.install_django(fast)
            Game.objects.filter(pk=game.pk).update(state=value, settings=value)
            fresh = Game.objects.get(pk=game.pk)
            text = None
            if connection.vendor == "postgresql":
                with connection.cursor() as cursor:
                    cursor.execute("SELECT state::text FROM games_game WHERE id = %s", [game.pk])
                    (text,) = cursor.fetchone()
            assert fresh.settings == fresh.state
            stored[fast] = (fresh.state, text)
    finally:
        fastjson.install_django(True)
    (slow_value, slow_text), (fast_value, fast_text) = stored[False], stored[True]
    assert json.dumps(fast_value) == json.dumps(slow_value)  # floats by repr, keys in order
    assert type(fast_value) is type(slow_value)
    assert fast_text == slow_text
