"""Every write to accounts data. Views, API views and admin call these; nothing else writes.

Errors are `django.core.exceptions.ValidationError` with translated, readable messages: forms show
them next to their fields, API views turn them into 400 responses.
"""

from __future__ import annotations

import secrets
from datetime import datetime, timedelta

from django.contrib.auth.password_validation import validate_password
from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Q
from django.utils import timezone, translation
from django.utils.translation import gettext as _

from accounts.keys import key_generate, key_hash
from accounts.models import ApiToken, User

# A person rarely needs more; a cap keeps a runaway script from minting tokens forever.
MAX_ACTIVE_TOKENS = 20

# last_used_at is written at most once per interval: a busy bot must not turn reads into writes.
LAST_USED_RESOLUTION = timedelta(minutes=1)


def user_create(
    *,
    username: str,
    password: str,
    email: str = "",
    language: str = User.Language.ENGLISH,
    display_name: str = "",
) -> User:
    """Register a person. Usernames are unique regardless of case ("Alice" blocks "alice").

    The password is validated and hashed *before* the write transaction opens: hashing is
    deliberately slow (PBKDF2, about a second on a busy core), and on the embedded SQLite
    default a write transaction holds the database's one write lock (IMMEDIATE, settings).
    Hashing inside it made a burst of sign-ups queue behind each other's hashing until one
    waited past the busy timeout: a 500 "database is locked" (issue 21, item 7). Only the
    name check and the insert hold the lock, and the check is repeated under it.
    """
    user = User(username=username, email=email, language=language, display_name=display_name)
    taken = ValidationError({"username": _("A user with that username already exists.")})
    _check_username(username)
    if User.objects.filter(username__iexact=username).exists():
        raise taken
    user.full_clean(exclude=["password"], validate_unique=False)
    validate_password(password, user)
    user.set_password(password)
    with transaction.atomic():
        if User.objects.filter(username__iexact=username).exists():
            raise taken
        user.validate_unique()
        user.save()
    return user


@transaction.atomic
def user_profile_update(
    *,
    user: User,
    display_name: str | None = None,
    language: str | None = None,
    email: str | None = None,
) -> User:
    """Change the given profile fields (None leaves a field as it is)."""
    fields = {"display_name": display_name, "language": language, "email": email}
    changes = {name: value for name, value in fields.items() if value is not None}
    if not changes:
        return user
    for name, value in changes.items():
        setattr(user, name, value)
    user.full_clean(exclude=["password", "username"])
    user.save(update_fields=list(changes))
    return user


@transaction.atomic
def token_create(*, user: User, name: str) -> tuple[ApiToken, str]:
    """Mint a token; returns it and its key. The key is never stored: show it now or never."""
    if user.is_guest:
        # A token outlives the browser session a guest lives in: sign up first.
        raise ValidationError(_("Guests cannot create API tokens: sign up first."))
    name = name.strip()
    if not name:
        raise ValidationError({"name": _("Give the token a name.")})
    # Lock the user's row so two concurrent creations cannot both slip under the cap.
    User.objects.select_for_update().filter(pk=user.pk).first()
    if ApiToken.objects.filter(user=user, revoked_at__isnull=True).count() >= MAX_ACTIVE_TOKENS:
        raise ValidationError(
            _("You already have %(count)d active tokens. Revoke one before creating another.")
            % {"count": MAX_ACTIVE_TOKENS}
        )
    prefix, key = key_generate()
    token = ApiToken(user=user, name=name, prefix=prefix, key_hash=key_hash(key))
    token.full_clean()
    token.save()
    return token, key


@transaction.atomic
def token_revoke(*, token: ApiToken) -> ApiToken:
    """Revoke a token for good. Revoking a revoked token changes nothing (keeps its time)."""
    ApiToken.objects.filter(pk=token.pk, revoked_at__isnull=True).update(revoked_at=timezone.now())
    token.refresh_from_db(fields=["revoked_at"])
    return token


def token_mark_used(*, token: ApiToken, now: datetime | None = None) -> None:
    """Record that the token was used, at most once per LAST_USED_RESOLUTION.

    One conditional UPDATE (atomic by itself): concurrent requests of a client write it once.
    """
    now = now or timezone.now()
    if token.last_used_at is not None and now - token.last_used_at < LAST_USED_RESOLUTION:
        return
    ApiToken.objects.filter(pk=token.pk).filter(
        Q(last_used_at__isnull=True) | Q(last_used_at__lt=now - LAST_USED_RESOLUTION)
    ).update(last_used_at=now)
    token.last_used_at = now


# --- Guests (issue 24) ---------------------------------------------------------------------------

#: Generated guest usernames start with this; nobody may sign up with such a name.
GUEST_PREFIX = "guest-"


def guest_create(*, language: str = User.Language.ENGLISH) -> User:
    """A new guest: a real user row (so every page, the socket and the API work unchanged) with
    an unusable password, a generated unique username and the display name "Guest NNNN" in the
    language of the person who pressed "Play as guest".

    The number is only for people to tell guests apart at a table; the username (random, 12
    hex digits) is what is unique, so two guests may share a number without harm.
    """
    with translation.override(language):
        word = _("Guest")
    for _attempt in range(5):
        username = GUEST_PREFIX + secrets.token_hex(6)
        if User.objects.filter(username__iexact=username).exists():
            continue  # 48 random bits: practically never
        user = User(
            username=username,
            display_name=f"{word} {secrets.randbelow(9000) + 1000}",
            language=language,
            is_guest=True,
        )
        user.set_unusable_password()
        user.save()
        return user
    raise RuntimeError("could not find a free guest username")  # pragma: no cover


def guest_convert(
    *, user: User, username: str, password: str, email: str = "", display_name: str = ""
) -> User:
    """Sign up from a guest: the SAME row becomes a registered account (username, password,
    e-mail, display name; ``is_guest`` off), so every seat, game, statistic and record that
    points at it stays the new account's -- nothing is copied, nothing can be lost.

    The same rules as ``user_create`` (unique username regardless of case, password
    validators), and the same order: hash before the write transaction (SQLite's one lock).
    """
    if not user.is_guest:
        raise ValidationError(_("This account is not a guest."))
    taken = ValidationError({"username": _("A user with that username already exists.")})
    _check_username(username)
    if User.objects.filter(username__iexact=username).exclude(pk=user.pk).exists():
        raise taken
    user.username, user.email, user.display_name = username, email, display_name
    user.full_clean(exclude=["password"], validate_unique=False)
    validate_password(password, user)
    user.set_password(password)
    with transaction.atomic():
        locked = User.objects.select_for_update().get(pk=user.pk)
        if not locked.is_guest:
            raise ValidationError(_("This account is not a guest."))
        if User.objects.filter(username__iexact=username).exclude(pk=user.pk).exists():
            raise taken
        user.validate_unique()
        user.is_guest = False
        user.save(update_fields=["username", "email", "display_name", "password", "is_guest"])
    return user


def _check_username(username: str) -> None:
    """Generated guest names are reserved: a person's chosen name never looks like a guest's."""
    if username.lower().startswith(GUEST_PREFIX):
        raise ValidationError(
            {"username": _("Usernames starting with “guest-” are reserved for guests.")}
        )


def guests_clean_idle(*, now: datetime | None = None, idle_days: int | None = None) -> dict:
    """Clean up guests idle longer than ``settings.CRISP_GUEST_IDLE_DAYS`` (default 7).

    Idle: no log-in, no seat taken and no move of theirs (``Game.last_played_at`` of a game they
    sat at) since the cut-off. A guest with a game in the lobby or in progress is left alone.
    Then:

    * a guest who never sat at a game and hosts none is **deleted** (nothing points at them);
    * a guest who did play is **anonymised** instead: seats and hosted games protect the row
      (``Seat.user``, ``Game.host`` are ``PROTECT``), and deleting it would cascade away other
      players' finished games and history. The row stays, marked inactive (Django then refuses
      its session: signed out everywhere), named plainly "Guest", its e-mail and API tokens gone.

    Returns the counts ``{"deleted": n, "anonymised": m}``.
    """
    from django.conf import settings
    from django.db.models import Max

    now = now or timezone.now()
    days = settings.CRISP_GUEST_IDLE_DAYS if idle_days is None else idle_days
    cutoff = now - timedelta(days=days)
    idle = (
        User.objects.filter(is_guest=True, is_active=True)
        .filter(Q(last_login__lt=cutoff) | Q(last_login__isnull=True, date_joined__lt=cutoff))
        .annotate(last_seat=Max("seats__joined_at"), last_move=Max("seats__game__last_played_at"))
        .filter(Q(last_seat__isnull=True) | Q(last_seat__lt=cutoff))
        .filter(Q(last_move__isnull=True) | Q(last_move__lt=cutoff))
        .exclude(seats__game__status__in=["lobby", "playing"])
    )
    deleted = anonymised = 0
    for user in idle.iterator():
        with transaction.atomic():
            if not user.seats.exists() and not user.hosted_games.exists():
                user.delete()
                deleted += 1
                continue
            User.objects.filter(pk=user.pk).update(
                is_active=False, display_name="Guest", email="", first_name="", last_name=""
            )
            ApiToken.objects.filter(user=user).delete()
            anonymised += 1
    return {"deleted": deleted, "anonymised": anonymised}
