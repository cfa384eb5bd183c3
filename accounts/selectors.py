"""Reads of accounts data. Writes live in `accounts/services.py`."""

from __future__ import annotations

from django.db.models import QuerySet

from accounts.keys import key_hash, key_is_well_formed
from accounts.models import ApiToken, User


def token_list(*, user: User) -> QuerySet[ApiToken]:
    """The user's tokens, newest first: active ones, then revoked ones."""
    return ApiToken.objects.filter(user=user).order_by("revoked_at", "-created_at", "-id")


def token_get(*, user: User, token_id: int) -> ApiToken | None:
    """One of the user's own tokens; None for anybody else's (no information leaks)."""
    return ApiToken.objects.filter(user=user, pk=token_id).first()


def token_for_key(*, key: str) -> ApiToken | None:
    """The token (revoked or not) whose key this is, with its user; None if there is none."""
    if not key_is_well_formed(key):
        return None
    return ApiToken.objects.select_related("user").filter(key_hash=key_hash(key)).first()
