"""/api/v1/ routes of the games API (included from crisp_site/urls.py)."""

from django.urls import path, re_path

from games.api import schema, views  # noqa: F401 - schema registers the token scheme

app_name = "games_api"

urlpatterns = [
    path("games/", views.GameListCreateApi.as_view(), name="games"),
    path("games/join/", views.GameJoinByCodeApi.as_view(), name="join-by-code"),
    path("games/<int:game_id>/", views.GameDetailApi.as_view(), name="detail"),
    path("games/<int:game_id>/join/", views.GameJoinApi.as_view(), name="join"),
    path("games/<int:game_id>/leave/", views.GameLeaveApi.as_view(), name="leave"),
    path("games/<int:game_id>/kick/", views.GameKickApi.as_view(), name="kick"),
    path("games/<int:game_id>/start/", views.GameStartApi.as_view(), name="start"),
    path("games/<int:game_id>/abandon/", views.GameAbandonApi.as_view(), name="abandon"),
    path("games/<int:game_id>/state/", views.GameStateApi.as_view(), name="state"),
    path("games/<int:game_id>/actions/", views.GameActionsApi.as_view(), name="actions"),
    path("games/<int:game_id>/events/", views.GameEventsApi.as_view(), name="events"),
    # Anything else under /api/v1/ (e.g. /games/-1/) is a JSON 404 too, never an HTML page.
    re_path(r"^.*$", views.api_not_found, name="not-found"),
]
