"""Every write to accounts data. Views, API views and admin call these; nothing else writes.

Errors are `django.core.exceptions.ValidationError` with translated, readable messages: forms show
them next to their fields, API views turn them into 400 responses.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from django.contrib.auth.password_validation import validate_password
from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Q
from django.utils import timezone
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
