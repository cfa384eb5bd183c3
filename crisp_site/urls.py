"""The site's URLs. Each app owns its own list; this one only includes them."""

from django.contrib import admin
from django.shortcuts import redirect
from django.templatetags.static import static
from django.urls import include, path
from django.views.generic import TemplateView
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView

from crisp_site.health import healthz

urlpatterns = [
    path("", TemplateView.as_view(template_name="home.html"), name="home"),
    path("healthz", healthz, name="healthz"),
    # Browsers ask for /favicon.ico whatever the page says; the page links the SVG itself.
    path("favicon.ico", lambda request: redirect(static("favicon.svg"), permanent=True)),
    path("i18n/", include("django.conf.urls.i18n")),
    path("admin/", admin.site.urls),
    path("accounts/", include("accounts.urls")),
    path("games/", include("games.urls")),
    path("rules/", include("games.rules_urls")),
    path("", include("games.history_urls")),  # players/, leaderboards/, games/<id>/replay/
    path("api/v1/me/", include("accounts.api_urls")),
    path("api/v1/", include("games.api.urls")),
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
