"""A third-party bot for Crisp online: it plays a whole game against the site's computer players.

Standard library only (urllib + json), plain REST polling as docs/API.md describes. It knows no
game's rules: every turn it asks the server what its seat may do now (``GET …/actions/``, each
legal action complete, in wire form) and picks one at random, so the same loop plays Crisp,
Cribbage and Triple Crown. A real bot would replace ``choose``.

    python examples/bot_client.py --base http://localhost:8000 --token crisp_... --kind cribbage
"""

from __future__ import annotations

import argparse
import json
import random
import time
import urllib.error
import urllib.request
import uuid
from typing import Any


class ApiError(Exception):
    """A refusal from the API: its HTTP status and its machine ``code`` (docs/API.md, Errors)."""

    def __init__(self, status: int, body: dict[str, Any]) -> None:
        super().__init__(f"{status} {body.get('code')}: {body.get('detail')}")
        self.status, self.code, self.body = status, body.get("code"), body


class Api:
    """JSON over HTTP with a personal API token (``Authorization: Token <key>``)."""

    def __init__(self, base: str, token: str) -> None:
        if not base.startswith(("http://", "https://")):
            raise ValueError(f"not an http(s) address: {base!r}")
        self.base, self.token = base.rstrip("/"), token

    def call(self, method: str, path: str, body: dict[str, Any] | None = None) -> dict[str, Any]:
        data = None if body is None else json.dumps(body).encode()
        headers = {"Authorization": f"Token {self.token}", "Accept": "application/json"}
        if data is not None:
            headers["Content-Type"] = "application/json"
        while True:
            # The scheme is http(s), checked above (ruff's S310 guards against file: URLs).
            request = urllib.request.Request(self.base + path, data, headers, method=method)  # noqa: S310
            try:
                with urllib.request.urlopen(request, timeout=30) as response:  # noqa: S310
                    return json.load(response)
            except urllib.error.HTTPError as error:
                if error.code in (429, 503):  # throttled / busy: nothing changed, wait and retry
                    time.sleep(float(error.headers.get("Retry-After") or 1))
                    continue
                raise ApiError(error.code, json.load(error)) from None


def choose(actions: list[dict[str, Any]], rng: random.Random) -> dict[str, Any]:
    """The move to make: any legal one. Swap in a strategy here."""
    return rng.choice(actions)


def open_game(
    api: Api,
    kind: str,
    *,
    level: str = "easy",
    opponents: int | None = None,
    settings: dict[str, Any] | None = None,
) -> int:
    """Open a game against the computer (started at once, we sit at seat 0); its id."""
    order = {"kind": kind, "level": level, "settings": settings or {}}
    if opponents is not None:  # else the game's usual number
        order["opponents"] = opponents
    game = api.call("POST", "/api/v1/games/vs-computer/", order)
    print(
        f"game {game['id']}: {kind} against",
        ", ".join(f"{s['name']} ({s['bot']})" for s in game["seats"] if s["bot"]),
    )
    return game["id"]


def play(api: Api, game_id: int, *, rng: random.Random | None = None, poll: float = 0.3) -> dict:
    """Play our seat of a started game until it is over; the game's card, with our move count.

    The loop reads the legal actions and the ``version`` they were computed at, posts one with
    that ``expected_version``, and on ``409`` re-reads: the game moved on meanwhile (a computer
    player moved, a timer fired), so the action was decided on a stale view. An empty list means
    it is not our move (or not yet: a memorise period, a start delay); the state's ``status``
    says whether the game is still on.
    """
    rng = rng or random.Random()  # noqa: S311 - a game move, not a secret
    url = f"/api/v1/games/{game_id}"
    moves = 0
    while True:
        legal = api.call("GET", f"{url}/actions/")
        if not legal["actions"]:
            if api.call("GET", f"{url}/state/")["status"] != "playing":
                break
            time.sleep(poll)
            continue
        action = choose(legal["actions"], rng)
        try:
            api.call(
                "POST",
                f"{url}/actions/",
                {
                    "action": action,
                    "expected_version": legal["version"],
                    "idempotency_key": str(uuid.uuid4()),  # a retried request is applied once
                },
            )
        except ApiError as error:
            if error.status != 409:  # a 400 here would be a bug in this client
                raise
            continue  # stale_version or too late (e.g. a window closed): read again
        moves += 1
    card = api.call("GET", f"{url}/")
    scores = ", ".join(f"{s['name']} {s['score']}" for s in card["seats"])
    result = ("we won" if card["you"] in card["winners"] else "we lost") if card["winners"] else ""
    print(f"game {card['id']} {card['status']} after {moves} moves of ours: {scores} {result}")
    return {**card, "moves": moves}


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", default="http://localhost:8000", help="the site's address")
    parser.add_argument("--token", required=True, help="an API token (your name → API tokens)")
    parser.add_argument("--kind", default="crisp", choices=["crisp", "cribbage", "triple_crown"])
    parser.add_argument("--level", default="easy", choices=["easy", "medium", "hard"])
    args = parser.parse_args()
    api = Api(args.base, args.token)
    play(api, open_game(api, args.kind, level=args.level))
