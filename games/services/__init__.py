"""The only writer of games (docs/SERVICES.md is the contract; keep both true).

Every change of a game -- from the REST API, a WebSocket, a Celery task, the admin or a
management command -- is one call of a public function of this package, and every one of them
runs the same commit step (``commit``), after Zulip's ``check_* / do_* / notify_*``: **lock**
the game row, **check** (every refusal a ``ServiceError`` before anything is written),
**apply** (the game's engine), **persist** the snapshot, the events and the version (bumped
once), **schedule** the timers and computer players, **broadcast on commit**.

The package, by area (each module's docstring lists its functions):

* ``commit`` -- the commit step's stages and their helpers (``_lock``, ``_engine_change``,
  ``_lobby_change``, ``_announce`` ...), the sit-in count; ``ActResult`` and ``Committed``.
* ``lobby`` -- create, join, leave, kick, start, abandon, end now.
* ``play`` -- act, fire a deadline, the sweep.
* ``bots`` -- computer players: add one, play against the computer, "I'm back", a bot's move,
  waking them.
* ``night`` -- game night: rename, rematch, chat, leave a game in progress, end idle games
  and close lobbies nobody will start.
* ``match`` -- quick match: "Find me a game" (join the queue, leave it, its status).

The modules depend on one another in that order only (``commit`` on none of them, ``match``
on ``lobby`` and ``bots``), and none of them on the live layer's modules but through the
on-commit hand-over (``commit._announce``).
Every name is re-exported here: callers write ``from games import services`` and
``services.game_act(...)``, never a module of the package.
"""

from __future__ import annotations

from games.errors import ServiceError
from games.services.bots import (
    BOT_LEVELS,
    BOT_NAMES,
    BOT_WINDOW_SHARE,
    game_add_bot,
    game_back,
    game_bot_move,
    game_vs_computer,
    game_wake_bots,
)
from games.services.commit import SIT_IN_AFTER_TIMEOUTS, SIT_IN_LEVEL, ActResult, Committed
from games.services.lobby import (
    game_abandon,
    game_create,
    game_end_now,
    game_join,
    game_kick,
    game_leave,
    game_start,
)
from games.services.match import (
    MATCH_BOT_LEVEL,
    MATCH_LAPSE_MS,
    MATCH_RATING_SPAN,
    MATCH_RATING_WIDEN,
    MATCH_WAIT_MS,
    MatchStatus,
    match_default_seats,
    match_join,
    match_leave,
    match_status,
)
from games.services.night import (
    CHAT_BURST,
    CHAT_WINDOW_MS,
    IDLE_MS,
    LOBBY_HOST_AWAY_MS,
    LOBBY_IDLE_MS,
    REMATCH_LOBBY_MS,
    game_chat_post,
    game_leave_playing,
    game_reap_idle,
    game_reap_lobbies,
    game_rematch,
    game_rename,
)
from games.services.play import game_act, game_fire_deadline, game_sweep

__all__ = [
    "BOT_LEVELS",
    "BOT_NAMES",
    "BOT_WINDOW_SHARE",
    "CHAT_BURST",
    "CHAT_WINDOW_MS",
    "IDLE_MS",
    "LOBBY_HOST_AWAY_MS",
    "LOBBY_IDLE_MS",
    "MATCH_BOT_LEVEL",
    "MATCH_LAPSE_MS",
    "MATCH_RATING_SPAN",
    "MATCH_RATING_WIDEN",
    "MATCH_WAIT_MS",
    "REMATCH_LOBBY_MS",
    "SIT_IN_AFTER_TIMEOUTS",
    "SIT_IN_LEVEL",
    "ActResult",
    "Committed",
    "MatchStatus",
    "ServiceError",
    "game_abandon",
    "game_act",
    "game_add_bot",
    "game_back",
    "game_bot_move",
    "game_chat_post",
    "game_create",
    "game_end_now",
    "game_fire_deadline",
    "game_join",
    "game_kick",
    "game_leave",
    "game_leave_playing",
    "game_reap_idle",
    "game_reap_lobbies",
    "game_rematch",
    "game_rename",
    "game_start",
    "game_sweep",
    "game_vs_computer",
    "game_wake_bots",
    "match_default_seats",
    "match_join",
    "match_leave",
    "match_status",
]
