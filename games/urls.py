"""The games' web pages, mounted at /games/ (crisp_site/urls.py)."""

from django.urls import path
from django.views.i18n import JavaScriptCatalog

from games import views

app_name = "games"

urlpatterns = [
    path("", views.lobby, name="lobby"),
    path("watch/", views.watch, name="watch"),
    path("new/", views.create, name="create"),
    path("join/", views.join_by_code, name="join-by-code"),
    path("computer/", views.vs_computer, name="vs-computer"),
    path("your-move/", views.your_move, name="your-move"),
    path("jsi18n/", JavaScriptCatalog.as_view(), name="jsi18n"),
    path("<int:game_id>/", views.table, name="table"),
    path("<int:game_id>/join/", views.join, name="join"),
    path("<int:game_id>/leave/", views.leave, name="leave"),
    path("<int:game_id>/kick/", views.kick, name="kick"),
    path("<int:game_id>/start/", views.start, name="start"),
    path("<int:game_id>/bots/", views.add_bot, name="add-bot"),
    path("<int:game_id>/back/", views.back, name="back"),
    path("<int:game_id>/rematch/", views.rematch, name="rematch"),
    path("<int:game_id>/quit/", views.quit_game, name="quit"),
]
