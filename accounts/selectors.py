"""Reads of accounts data. Writes live in `accounts/services.py`."""

from __future__ import annotations

from django.db.models import QuerySet

from accounts.keys import key_hash, key_is_well_formed
from accounts.models import ApiToken, User
from crisp_site.prepared import Prepared


def token_list(*, user: User) -> QuerySet[ApiToken]:
    """The user's tokens, newest first: active ones, then revoked ones."""
    return ApiToken.objects.filter(user=user).order_by("revoked_at", "-created_at", "-id")


def token_get(*, user: User, token_id: int) -> ApiToken | None:
    """One of the user's own tokens; None for anybody else's (no information leaks)."""
    return ApiToken.objects.filter(user=user, pk=token_id).first()


def token_query(*, hashed: str) -> QuerySet[ApiToken]:
    """The read ``token_for_key`` makes: the token whose key hash this is, with its user."""
    return ApiToken.objects.select_related("user").filter(key_hash=hashed)


#: ``token_query`` compiled to SQL once per process (``crisp_site.prepared``): Django building
#: it was the largest part of every token request's bare stack, ~0.7 ms of ~1.75 ms, against
#: ~0.17 ms for the compiled read (bench/rest_cpu.py, bench/RESULTS.md "REST reads").
_TOKEN = Prepared(lambda hashed: token_query(hashed=hashed), keys=(str,))


def token_for_key(*, key: str) -> ApiToken | None:
    """The token (revoked or not) whose key this is, with its user; None if there is none.

    Read afresh on every call (a revoked token or a deactivated user is refused at once)."""
    if not key_is_well_formed(key):
        return None
    rows = _TOKEN.fetch(key_hash(key))
    return rows[0] if rows else None
