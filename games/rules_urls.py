"""Public rules pages, one per game: ``/rules/`` and ``/rules/<kind>/`` (stable URLs that the
home page, the lobby and every table link to)."""

from django.urls import path

from games import views

app_name = "rules"

urlpatterns = [
    path("", views.rules_index, name="index"),
    path("<slug:kind>/", views.rules, name="game"),
]
