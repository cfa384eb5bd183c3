"""The after-game pages (included from crisp_site/urls.py at the site's root)."""

from django.urls import path

from games import history_views

app_name = "history"

urlpatterns = [
    path("players/<str:username>/", history_views.profile, name="profile"),
    path("leaderboards/", history_views.leaderboard, name="leaderboards"),
    path("leaderboards/<str:kind>/", history_views.leaderboard, name="leaderboard"),
    path("games/<int:game_id>/replay/", history_views.replay_page, name="replay"),
]
