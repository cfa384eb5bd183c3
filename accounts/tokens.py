"""The hook other layers use to turn a personal API token key into its user.

The WebSocket layer calls `user_for_token(key)`; the DRF authentication class
(`accounts.authentication.ApiTokenAuthentication`) follows the same rules but tells a revoked
token apart from an unknown one, so that its 401 can say which.
"""

from __future__ import annotations

from accounts.models import User
from accounts.selectors import token_for_key
from accounts.services import token_mark_used


def user_for_token(key: str) -> User | None:
    """The active user whose live (not revoked) token this key is, else None. Marks it used.

    Synchronous (it queries the database): call it through `database_sync_to_async` from async
    code.
    """
    if not isinstance(key, str):
        return None
    token = token_for_key(key=key.strip())
    if token is None or token.revoked_at is not None or not token.user.is_active:
        return None
    token_mark_used(token=token)
    return token.user
