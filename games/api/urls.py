"""/api/v1/ routes of the games API (included from crisp_site/urls.py)."""

from django.urls import path, re_path

from games.api import (  # noqa: F401 - schema registers the token scheme
    game_night,
    match,
    schema,
    turns,
    views,
)

app_name = "games_api"

urlpatterns = [
    path("games/", views.GameListCreateApi.as_view(), name="games"),
    path("games/join/", views.GameJoinByCodeApi.as_view(), name="join-by-code"),
    path("games/vs-computer/", views.GameVsComputerApi.as_view(), name="vs-computer"),
    path("match/", match.MatchApi.as_view(), name="match"),
    # /api/v1/me/ is the accounts app's; this one route of it is the games' (issue 26).
    path("me/turns/", turns.turns_view, name="me-turns"),
    path("games/<int:game_id>/", views.GameDetailApi.as_view(), name="detail"),
    path("games/<int:game_id>/join/", views.GameJoinApi.as_view(), name="join"),
    path("games/<int:game_id>/leave/", views.GameLeaveApi.as_view(), name="leave"),
    path("games/<int:game_id>/kick/", views.GameKickApi.as_view(), name="kick"),
    path("games/<int:game_id>/start/", views.GameStartApi.as_view(), name="start"),
    path("games/<int:game_id>/abandon/", views.GameAbandonApi.as_view(), name="abandon"),
    path("games/<int:game_id>/bots/", views.GameBotsApi.as_view(), name="bots"),
    path("games/<int:game_id>/back/", views.GameBackApi.as_view(), name="back"),
    path("games/<int:game_id>/state/", views.GameStateApi.as_view(), name="state"),
    path("games/<int:game_id>/actions/", views.GameActionsApi.as_view(), name="actions"),
    path("games/<int:game_id>/events/", views.GameEventsApi.as_view(), name="events"),
    path("games/<int:game_id>/chat/", game_night.GameChatApi.as_view(), name="chat"),
    path("games/<int:game_id>/rematch/", game_night.GameRematchApi.as_view(), name="rematch"),
    path("games/<int:game_id>/quit/", game_night.GameQuitApi.as_view(), name="quit"),
    path("games/<int:game_id>/name/", game_night.GameNameApi.as_view(), name="name"),
    # Anything else under /api/v1/ (e.g. /games/-1/) is a JSON 404 too, never an HTML page.
    # [\s\S], not ".": a path with a newline in it (/games/%0A/) too.
    re_path(r"^[\s\S]*$", views.api_not_found, name="not-found"),
]
