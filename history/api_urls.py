"""/api/v1/ routes of the after-game API (``history.api``; docs/API.md, "After the game").

They share the site's one API namespace, ``games_api``, with the games app's routes, so their
names (``games_api:replay``, ``games_api:export``, …) stayed the same when history became its
own app: ``crisp_site/urls.py`` puts this list before the games app's, which ends with the
catch-all JSON 404.
"""

from django.urls import path

from history import api

urlpatterns = [
    path("games/<int:game_id>/rounds/", api.GameRoundsApi.as_view(), name="rounds"),
    path("games/<int:game_id>/replay/", api.GameReplayApi.as_view(), name="replay"),
    path("games/<int:game_id>/export/", api.GameExportApi.as_view(), name="export"),
    path("players/<str:username>/", api.PlayerProfileApi.as_view(), name="player"),
    path("players/<str:username>/games/", api.PlayerGamesApi.as_view(), name="player-games"),
    path("leaderboards/<str:kind>/", api.LeaderboardApi.as_view(), name="leaderboard"),
]
