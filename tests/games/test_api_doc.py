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


def worked_session() -> str:
    blocks = re.findall(r"```python\n(.*?)```", DOC.read_text(), flags=re.S)
    code = "\n".join(b for b in blocks if b.startswith("# worked session"))
    assert code.count("# worked session") >= 4
    return code


@pytest.mark.timeout(120)
def test_worked_session_runs(live_server, transactional_db, capsys):
    users = [
        get_user_model().objects.create_user(username=n, password="pw-not-secret-123")
        for n in ("alice", "bob")
    ]
    keys = [token_create(user=u, name="doc")[1] for u in users]
    code = worked_session()
    code = re.sub(r"^BASE = .*$", f"BASE = {live_server.url!r}", code, flags=re.M)
    code = re.sub(r"^ALICE_TOKEN = .*$", f"ALICE_TOKEN = {keys[0]!r}", code, flags=re.M)
    code = re.sub(r"^BOB_TOKEN = .*$", f"BOB_TOKEN = {keys[1]!r}", code, flags=re.M)
    namespace: dict = {}
    try:
        exec(compile(code, str(DOC), "exec"), namespace)  # noqa: S102 - our own documentation
    except Exception:
        from games.models import Event

        log = Event.objects.order_by("game", "seq").values_list("version", "type", "data")
        pytest.fail("worked session failed; the log:\n" + "\n".join(map(str, log)))

    game = Game.objects.get(pk=namespace["game"]["id"])
    assert game.rounds.get(number=1).result is not None  # the round was revealed
    assert namespace["reveal"]["totals"] and all(namespace["final"]["state"]["hands"][0])
    out = capsys.readouterr().out
    assert "Alice sees" in out and "totals" in out
