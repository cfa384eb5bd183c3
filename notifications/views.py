"""The notifications' pages: a person's settings, the one-click unsubscribe, and the installable
web app's manifest and service worker (served at the site's root so its scope is the site)."""

from __future__ import annotations

from django import forms
from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.contrib.staticfiles.storage import staticfiles_storage
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.templatetags.static import static
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django.views.decorators.cache import cache_control
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_GET, require_http_methods

from notifications import services
from notifications.models import NotificationSettings


class SettingsForm(forms.ModelForm):
    class Meta:
        model = NotificationSettings
        fields = ("mail", "push")
        labels = {
            "mail": gettext_lazy("E-mail me when it is my move in a turn-based game"),
            "push": gettext_lazy("Push notifications to the browsers I switch them on in"),
        }


@login_required
def settings_page(request: HttpRequest) -> HttpResponse:
    """/accounts/notifications/: mail and push on or off, and this browser's push switch."""
    row = NotificationSettings.for_user(request.user.pk)
    form = SettingsForm(request.POST or None, instance=row)
    if request.method == "POST" and form.is_valid():
        form.save()
        messages.success(request, _("Your notification settings are saved."))
        return redirect("notifications:settings")
    return render(
        request,
        "notifications/settings.html",
        {
            "form": form,
            "push_configured": services.push_configured(),
            "vapid_public_key": settings.VAPID_PUBLIC_KEY,
            "has_email": bool(request.user.email),
            "subscriptions": request.user.push_subscriptions.count(),
        },
    )


@csrf_exempt  # the signed token is the credential; RFC 8058's POST comes from a mail client
@require_http_methods(["GET", "POST"])
def unsubscribe(request: HttpRequest, token: str) -> HttpResponse:
    """The link in every "your move" mail. GET asks for confirmation (a mail scanner that
    follows links unsubscribes nobody); POST -- the page's button, or a mail client's RFC 8058
    one-click ``List-Unsubscribe=One-Click`` -- switches that person's mails off, no log-in."""
    user = services.user_for_token(token)
    if user is None:
        return render(request, "notifications/unsubscribe.html", {"bad": True}, status=400)
    if request.method == "POST":
        services.set_mail(user.pk, False)
        return render(request, "notifications/unsubscribe.html", {"done": True})
    return render(request, "notifications/unsubscribe.html", {"token": token})


@require_GET
@cache_control(max_age=3600)
def manifest(request: HttpRequest) -> JsonResponse:
    """/manifest.webmanifest: what makes the site installable (name, icons, start page)."""
    data = {
        "name": "Crisp online",
        "short_name": "Crisp",
        "description": _("Crisp, Cribbage and Triple Crown, live or turn-based, in the browser."),
        "start_url": "/",
        "scope": "/",
        "display": "standalone",
        "background_color": "#0f5132",
        "theme_color": "#0f5132",
        "icons": [
            {
                "src": static(f"icons/icon-{size}.png"),
                "sizes": f"{size}x{size}",
                "type": "image/png",
            }
            for size in (192, 512)
        ]
        + [{"src": static("favicon.svg"), "sizes": "any", "type": "image/svg+xml"}],
    }
    return JsonResponse(data, content_type="application/manifest+json")


@require_GET
@cache_control(no_cache=True)
def service_worker(request: HttpRequest) -> HttpResponse:
    """/sw.js: the service worker, at the root so that its scope is the whole site (a worker
    under /static/ could control /static/ only). ``no-cache`` so a new worker is seen at once."""
    version = getattr(staticfiles_storage, "manifest_hash", "") or "dev"
    response = render(
        request,
        "notifications/sw.js",
        {"static_prefix": settings.STATIC_URL, "cache_name": f"crisp-static-{version}"},
        content_type="text/javascript; charset=utf-8",
    )
    response["Service-Worker-Allowed"] = "/"
    return response
