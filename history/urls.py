"""The after-game pages (included from crisp_site/urls.py at the site's root)."""

from django.urls import path

from history import views

app_name = "history"

urlpatterns = [
    path("players/<str:username>/", views.profile, name="profile"),
    path("leaderboards/", views.leaderboard, name="leaderboards"),
    path("leaderboards/<str:kind>/", views.leaderboard, name="leaderboard"),
    path("games/<int:game_id>/replay/", views.replay_page, name="replay"),
]
