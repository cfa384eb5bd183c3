"""Web pages of accounts: thin views over forms, selectors and services."""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps

from django.conf import settings
from django.contrib import messages
from django.contrib.auth import login
from django.contrib.auth import views as auth_views
from django.contrib.auth.decorators import login_required
from django.contrib.auth.forms import AuthenticationForm
from django.contrib.auth.views import redirect_to_login
from django.core.exceptions import ValidationError
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect, JsonResponse
from django.shortcuts import redirect, render
from django.urls import reverse, reverse_lazy
from django.utils import translation
from django.utils.http import url_has_allowed_host_and_scheme
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST
from django.views.i18n import set_language as django_set_language

from accounts import selectors, services
from accounts.forms import ProfileForm, SignUpForm, TokenCreateForm
from accounts.models import User
from crisp_site import throttles
from crisp_site.throttles import throttled_message

_MODEL_BACKEND = "django.contrib.auth.backends.ModelBackend"


def remember_language(response: HttpResponse, language: str) -> HttpResponse:
    """Make `language` the browser's site language from the next request on.

    LocaleMiddleware reads the language cookie; setting it when a person logs in (or changes the
    preference) is what makes their profile's language follow them from browser to browser.
    """
    translation.activate(language)  # the rest of this request (e.g. messages) speaks it too
    response.set_cookie(
        settings.LANGUAGE_COOKIE_NAME,
        language,
        max_age=settings.LANGUAGE_COOKIE_AGE,
        path=settings.LANGUAGE_COOKIE_PATH,
        domain=settings.LANGUAGE_COOKIE_DOMAIN,
        secure=settings.LANGUAGE_COOKIE_SECURE,
        httponly=settings.LANGUAGE_COOKIE_HTTPONLY,
        samesite=settings.LANGUAGE_COOKIE_SAMESITE,
    )
    return response


def _add_errors(form, error: ValidationError) -> None:
    if hasattr(error, "error_dict"):
        for field, errors in error.error_dict.items():
            form.add_error(field if field in form.fields else None, errors)
    else:
        form.add_error(None, error)


def _throttled(response: HttpResponse, seconds: int) -> HttpResponse:
    """The page re-rendered with the refusal: 429 with `Retry-After`, as the API answers."""
    response.status_code = 429
    response["Retry-After"] = str(seconds)
    return response


# --- Sign-up, log-in ---------------------------------------------------------------------------


def _next_url(request: HttpRequest) -> str | None:
    """The page a visitor was on their way to (``?next=``, e.g. a game's invite link), if it is
    on this site; the same rule as Django's log-in view."""
    target = request.POST.get("next") or request.GET.get("next")
    if target and url_has_allowed_host_and_scheme(
        target, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    ):
        return target
    return None


def _language(request: HttpRequest) -> str:
    """The site language of this request, if it is one a profile may hold."""
    language = translation.get_language() or settings.LANGUAGE_CODE
    return language if language in User.Language.values else settings.LANGUAGE_CODE


def signup(request: HttpRequest) -> HttpResponse:
    """Create an account and sign in. A new player lands where they were going (an invite
    link's game) or else in the games lobby: the place to start playing.

    A signed-in GUEST gets the same one form, and it converts their guest account in place
    (``services.guest_convert``: same row, so their games, statistics and history stay)."""
    next_url = _next_url(request)
    guest = getattr(request.user, "is_guest", False)
    if request.user.is_authenticated and not guest:
        return redirect(next_url or settings.LOGIN_REDIRECT_URL)
    form = SignUpForm(request.POST or None)
    context = {"form": form, "next": next_url, "guest": guest}
    if request.method == "POST" and (wait := throttles.check(request, throttles.SignupThrottle)):
        form.add_error(None, throttled_message(wait))
        return _throttled(render(request, "accounts/signup.html", context), wait)
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        try:
            if guest:
                user = services.guest_convert(
                    user=request.user,
                    username=data["username"],
                    password=data["password1"],
                    email=data.get("email") or "",
                )
            else:
                user = services.user_create(
                    username=data["username"],
                    password=data["password1"],
                    email=data.get("email") or "",
                    language=_language(request),
                )
        except ValidationError as error:
            _add_errors(form, error)
        else:
            login(request, user, backend=_MODEL_BACKEND)  # a new password: a fresh session
            response = redirect(next_url or "games:lobby")
            remember_language(response, user.language)
            if guest:
                messages.success(
                    request,
                    _("Welcome, %(name)s! Your games as a guest are in your account now.")
                    % {"name": user.public_name},
                )
            else:
                messages.success(
                    request, _("Welcome to Crisp online, %(name)s!") % {"name": user.public_name}
                )
            return response
    return render(request, "accounts/signup.html", context)


# --- Guests ------------------------------------------------------------------------------------


def _guest_throttled(request: HttpRequest, wait: int) -> HttpResponse:
    """429 for a refused guest: JSON for a client that asks for it, else a page saying why."""
    message = throttled_message(wait)
    if "application/json" in request.headers.get("Accept", ""):
        response: HttpResponse = JsonResponse(
            {"code": "throttled", "detail": message, "retry_after": wait}, status=429
        )
    else:
        response = render(request, "accounts/guest_throttled.html", {"message": message})
    return _throttled(response, wait)


def guest_sign_in(request: HttpRequest) -> HttpResponse | None:
    """Make a guest account and sign this browser in as it (Django's session). None when done,
    else the 429 response (guests made from one address are throttled: ``guest_create``)."""
    if wait := throttles.check(request, throttles.GuestCreateThrottle):
        return _guest_throttled(request, wait)
    user = services.guest_create(language=_language(request))
    login(request, user, backend=_MODEL_BACKEND)
    return None


@require_POST
def guest(request: HttpRequest) -> HttpResponse:
    """ "Play as guest": one POST (CSRF-protected) makes the guest, signs it in and goes on to
    ``next`` (a page on this site, e.g. an invite link's game), else to the games lobby. A
    visitor already signed in just goes on: no second account."""
    next_url = _next_url(request) or reverse("games:lobby")
    if not request.user.is_authenticated and (refused := guest_sign_in(request)):
        return refused
    return HttpResponseRedirect(next_url)


def login_or_guest(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """``login_required`` for a PLAY action (a POST form), plus one-click guest play: an
    anonymous visitor's POST that carries ``as_guest=1`` first gets a guest account (throttled,
    as ``guest``) and then the action runs as that user -- the home page's "Play against the
    computer" reaches a live table in one click."""

    @wraps(view)
    def wrapped(request: HttpRequest, *args, **kwargs) -> HttpResponse:
        if not request.user.is_authenticated:
            if request.method != "POST" or request.POST.get("as_guest") != "1":
                return redirect_to_login(request.get_full_path())
            if refused := guest_sign_in(request):
                return refused
        return view(request, *args, **kwargs)

    return wrapped


class LoginView(auth_views.LoginView):
    """Django's log-in, plus: switch the site to the person's preferred language. A guest may
    open it too (to log in to an account they already have); anybody else signed in is sent on."""

    @property
    def redirect_authenticated_user(self) -> bool:  # type: ignore[override]
        return not getattr(self.request.user, "is_guest", False)

    def form_valid(self, form):
        response = super().form_valid(form)
        return remember_language(response, form.get_user().language)


def lockout_message(minutes: int | None) -> str:
    """What a locked-out person reads: how long the lockout lasts, translated with plurals."""
    if minutes is None:
        return _(
            "Too many failed log-in attempts. Log-in to this account from your address is "
            "blocked; please contact us."
        )
    return translation.ngettext(
        "Too many failed log-in attempts. For your safety, log-in to this account from "
        "your address is blocked for %(minutes)d minute. You can reset your password "
        "meanwhile.",
        "Too many failed log-in attempts. For your safety, log-in to this account from "
        "your address is blocked for %(minutes)d minutes. You can reset your password "
        "meanwhile.",
        minutes,
    ) % {"minutes": minutes}


def lockout_response(request: HttpRequest, original_response=None, credentials=None):
    """django-axes calls this (AXES_LOCKOUT_CALLABLE) instead of its plain-text lockout page:
    the log-in page again, with a translated explanation, status 429."""
    from axes.helpers import get_cool_off

    cool_off = get_cool_off(request)
    minutes = max(1, round(cool_off.total_seconds() / 60)) if cool_off else None
    message = lockout_message(minutes)
    username = request.POST.get("username", "") if request.method == "POST" else ""
    form = AuthenticationForm(request, initial={"username": username})
    return render(
        request,
        "registration/login.html",
        {"form": form, "lockout_message": message},
        status=429,
    )


# --- Password change and reset: Django's views, our templates and namespaced URLs ---------------

password_change = auth_views.PasswordChangeView.as_view(
    success_url=reverse_lazy("accounts:password_change_done")
)
password_change_done = auth_views.PasswordChangeDoneView.as_view()


class PasswordResetView(auth_views.PasswordResetView):
    """Django's, throttled per address and per e-mail: no mailbox flooded, no address spraying."""

    def post(self, request: HttpRequest, *args, **kwargs) -> HttpResponse:
        wait = throttles.check(
            request, throttles.PasswordResetThrottle, throttles.PasswordResetEmailThrottle
        )
        if wait:
            form = self.get_form()
            form.add_error(None, throttled_message(wait))
            return _throttled(self.render_to_response(self.get_context_data(form=form)), wait)
        return super().post(request, *args, **kwargs)


password_reset = PasswordResetView.as_view(
    success_url=reverse_lazy("accounts:password_reset_done"),
    email_template_name="registration/password_reset_email.txt",
    subject_template_name="registration/password_reset_subject.txt",
)
password_reset_done = auth_views.PasswordResetDoneView.as_view()
password_reset_confirm = auth_views.PasswordResetConfirmView.as_view(
    success_url=reverse_lazy("accounts:password_reset_complete")
)
password_reset_complete = auth_views.PasswordResetCompleteView.as_view()


# --- Profile and language ------------------------------------------------------------------------


@login_required
def profile(request: HttpRequest) -> HttpResponse:
    user = request.user
    initial = {"display_name": user.display_name, "language": user.language, "email": user.email}
    form = ProfileForm(request.POST or None, initial=initial)
    if request.method == "POST" and form.is_valid():
        try:
            services.user_profile_update(user=user, **form.cleaned_data)
        except ValidationError as error:
            _add_errors(form, error)
        else:
            response = redirect("accounts:profile")
            remember_language(response, user.language)
            messages.success(request, _("Your profile has been saved."))
            return response
    return render(request, "accounts/profile.html", {"form": form})


@require_POST
def set_language(request: HttpRequest) -> HttpResponse:
    """The header's language menu: Django's `set_language`, and for a logged-in person it also
    becomes their preferred language (so the next log-in does not switch it back)."""
    response = django_set_language(request)
    language = request.POST.get("language")
    if request.user.is_authenticated and language in User.Language.values:
        services.user_profile_update(user=request.user, language=language)
    return response


# --- API tokens ----------------------------------------------------------------------------------


@login_required
def tokens(request: HttpRequest) -> HttpResponse:
    """List the person's tokens; POST creates one and shows its key, this once."""
    form = TokenCreateForm(request.POST or None)
    new_key = new_token = None
    wait = request.method == "POST" and throttles.check(request, throttles.TokenCreateThrottle)
    if wait:
        form.add_error(None, throttled_message(wait))
    elif request.method == "POST" and form.is_valid():
        try:
            new_token, new_key = services.token_create(
                user=request.user, name=form.cleaned_data["name"]
            )
        except ValidationError as error:
            _add_errors(form, error)
        else:
            form = TokenCreateForm()
    response = render(
        request,
        "accounts/tokens.html",
        {
            "form": form,
            "tokens": selectors.token_list(user=request.user),
            "new_key": new_key,
            "new_token": new_token,
        },
    )
    if new_key:
        # The page holds a secret: never let a cache keep it.
        response["Cache-Control"] = "no-store"
    return _throttled(response, wait) if wait else response


@login_required
@require_POST
def token_revoke(request: HttpRequest, token_id: int) -> HttpResponseRedirect:
    token = selectors.token_get(user=request.user, token_id=token_id)
    if token is None:
        raise Http404
    services.token_revoke(token=token)
    messages.success(request, _("The token “%(name)s” has been revoked.") % {"name": token.name})
    return redirect("accounts:tokens")
