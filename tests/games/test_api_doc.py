"""docs/API.md's worked session, run as written against a live server (real HTTP, real time).

The "# worked session" blocks of the doc are one program; only the server address and the two
tokens are filled in.  If the API and the doc disagree, this fails.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from django.conf import settings
from django.contrib.auth import get_user_model

from accounts.services import token_create
from games.models import Game

DOC = Path(settings.BASE_DIR) / "docs" / "API.md"


def session(tag: str, at_least: int) -> str:
    """The doc's code blocks that start with ``# <tag>``, as one program."""
    blocks = re.findall(r"```python\n(.*?)```", DOC.read_text(), flags=re.S)
    code = "\n".join(b for b in blocks if b.startswith(f"# {tag}"))
    assert code.count(f"# {tag}") >= at_least
    return code


def run(code: str, fill: dict[str, object]) -> dict:
    """Run a session with its ``NAME = …`` lines set to ``fill`` (the server, the tokens); on
    failure, the game log says where it went wrong."""
    for name, value in fill.items():
        code = re.sub(rf"^{name} = .*$", f"{name} = {value!r}", code, flags=re.M)
    namespace: dict = {}
    try:
        exec(compile(code, str(DOC), "exec"), namespace)  # noqa: S102 - our own documentation
    except Exception:
        from games.models import Event

        log = Event.objects.order_by("game", "seq").values_list("version", "type", "data")
        pytest.fail("the session failed; the log:\n" + "\n".join(map(str, log)))
    return namespace


def worked_session() -> str:
    return session("worked session", 4)


@pytest.mark.timeout(120)
def test_worked_session_runs(live_server, transactional_db, capsys):
    users = [
        get_user_model().objects.create_user(username=n, password="pw-not-secret-123")
        for n in ("alice", "bob")
    ]
    keys = [token_create(user=u, name="doc")[1] for u in users]
    fill = {"BASE": live_server.url, "ALICE_TOKEN": keys[0], "BOB_TOKEN": keys[1]}
    namespace = run(worked_session(), fill)

    game = Game.objects.get(pk=namespace["game"]["id"])
    assert game.rounds.get(number=1).result is not None  # the round was revealed
    assert namespace["reveal"]["totals"] and all(namespace["final"]["state"]["hands"][0])
    out = capsys.readouterr().out
    assert "Alice sees" in out and "totals" in out


# --- Cribbage ----------------------------------------------------------------------------------
def cribbage_session() -> str:
    return session("cribbage session", 5)


@pytest.mark.timeout(120)
def test_cribbage_session_runs(live_server, transactional_db, capsys):
    """docs/API.md's Cribbage session, as written: one hand laid away, played and shown."""
    users = [
        get_user_model().objects.create_user(username=n, password="pw-not-secret-123")
        for n in ("alice", "bob")
    ]
    keys = [token_create(user=u, name="doc")[1] for u in users]
    fill = {"BASE": live_server.url, "ALICE_TOKEN": keys[0], "BOB_TOKEN": keys[1]}
    namespace = run(cribbage_session(), fill)

    game = Game.objects.get(pk=namespace["game"]["id"])
    assert game.kind == "cribbage"
    assert game.rounds.get(number=1).result is not None  # the hand was played and shown
    assert namespace["state"]["round"] == 2 and len(namespace["state"]["you"]["hand"]) == 6
    assert namespace["state"]["hands"][0] is None  # Bob never sees Alice's new hand
    out = capsys.readouterr().out
    assert "starter" in out and out.count("plays") == 8
    assert "pone" in out and "dealer" in out and "crib" in out
    assert f"hand 1 points {namespace['over']['points']}" in out


# --- Triple Crown's worked session (docs/API.md, "A worked session: Triple Crown") ----------------
def triple_crown_session() -> str:
    return session("triple crown session", 4)


@pytest.mark.timeout(180)
def test_triple_crown_session_runs(live_server, transactional_db, capsys):
    """Four players through the API play a whole hand; the reveal names every role."""
    names = ("Alice", "Bob", "Carol", "Dave")
    users = [
        get_user_model().objects.create_user(username=n.lower(), password="pw-not-secret-123")
        for n in names
    ]
    tokens = {n: token_create(user=u, name="doc")[1] for n, u in zip(names, users, strict=True)}
    namespace = run(triple_crown_session(), {"BASE": live_server.url, "TOKENS": tokens})

    game = Game.objects.get(pk=namespace["game"]["id"])
    assert game.kind == "triple_crown"
    result = game.rounds.get(number=1).result
    assert result == namespace["hand_over"]
    assert sorted(result["roles"]) in (
        ["high", "low", "team", "team"],
        ["double", "opponent", "opponent", "opponent"],
    )
    assert sum(result["tricks"]) == result["tricks_played"]
    out = capsys.readouterr().out
    for name in names:
        assert f"{name} holds" in out
    assert "trick 1 to" in out and "scores" in out
