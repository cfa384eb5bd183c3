"""The notifications' pages (crisp_site/urls.py mounts them; the API route is there too)."""

from django.urls import path

from notifications import views

app_name = "notifications"

urlpatterns = [
    path("accounts/notifications/", views.settings_page, name="settings"),
    path("notifications/unsubscribe/<str:token>/", views.unsubscribe, name="unsubscribe"),
    path("manifest.webmanifest", views.manifest, name="manifest"),
    path("sw.js", views.service_worker, name="service-worker"),
]
