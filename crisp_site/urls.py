"""The site's URLs. Each app owns its own list; this one only includes them (the games and history
apps' API lists under one namespace)."""

from django.contrib import admin
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.templatetags.static import static
from django.urls import include, path, re_path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView

from crisp_site.health import healthz
from games import views as games_views
from games.api import urls as games_api_urls
from history import api_urls as history_api_urls
from notifications import api as notifications_api

# The site's one API namespace (``games_api``) holds both apps' /api/v1/ routes; the games
# app's list ends with the catch-all JSON 404, so it comes last.
api_v1 = ([*history_api_urls.urlpatterns, *games_api_urls.urlpatterns], games_api_urls.app_name)


def moved_admin_page(request: HttpRequest, model: str, rest: str) -> HttpResponse:
    """The after-game models' admin pages moved with their app (games -> history, issue 23):
    a staff member's old link lands on the same page."""
    query = request.META.get("QUERY_STRING", "")
    return redirect(
        f"/admin/history/{model}/{rest}" + (f"?{query}" if query else ""), permanent=True
    )


urlpatterns = [
    path("", games_views.home, name="home"),
    path("healthz", healthz, name="healthz"),
    # Browsers ask for /favicon.ico whatever the page says; the page links the SVG itself.
    path("favicon.ico", lambda request: redirect(static("favicon.svg"), permanent=True)),
    path("i18n/", include("django.conf.urls.i18n")),
    re_path(
        r"^admin/games/(?P<model>gamerecord|rating|playerstats)/(?P<rest>.*)$", moved_admin_page
    ),
    path("admin/", admin.site.urls),
    path("accounts/", include("accounts.urls")),
    path("games/", include("games.urls")),
    path("rules/", include("games.rules_urls")),
    path("", include("history.urls")),  # players/, leaderboards/, games/<id>/replay/
    # Issue 26: settings, unsubscribe, /manifest.webmanifest and /sw.js (at the root: its scope).
    path("", include("notifications.urls")),
    path(
        "api/v1/me/push-subscriptions/",
        notifications_api.PushSubscriptionsApi.as_view(),
        name="me-push-subscriptions",
    ),
    path("api/v1/me/", include("accounts.api_urls")),
    path("api/v1/", include(api_v1)),
    path("api/schema/", SpectacularAPIView.as_view(), name="schema"),
    # The split view serves Swagger UI's start-up script as a file (?script), and our template
    # moves its inline <style> to a static file: the Content-Security-Policy allows neither inline.
    path(
        "api/docs/",
        SpectacularSwaggerSplitView.as_view(url_name="schema", template_name="api_docs.html"),
        name="api-docs",
    ),
]

# An uncaught exception under /api/ is answered in the API JSON error shape (crisp_site/errors.py)
handler500 = "crisp_site.errors.server_error"
