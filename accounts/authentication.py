"""DRF authentication by personal API token: `Authorization: Token <key>` (or `Bearer <key>`)."""

from __future__ import annotations

from django.utils.translation import gettext_lazy as _
from rest_framework import exceptions
from rest_framework.authentication import BaseAuthentication, get_authorization_header

from accounts.selectors import token_for_key
from accounts.services import token_mark_used

KEYWORDS = ("token", "bearer")


class ApiTokenAuthentication(BaseAuthentication):
    """Authenticates third-party clients by their personal API token.

    No header, or another scheme (e.g. Basic): not ours, so the next class (session) is tried.
    A malformed, unknown or revoked token: 401 with a detail saying which (codes
    `token_malformed`, `token_invalid`, `token_revoked`, `user_inactive`). Token requests need
    no CSRF token (a browser never sends this header by itself), and django-axes does not see
    them: a lock-out of the password log-in leaves a person's bots running.
    """

    keyword = "Token"

    def authenticate(self, request):
        parts = get_authorization_header(request).split()
        if not parts or parts[0].decode(errors="replace").lower() not in KEYWORDS:
            return None
        if len(parts) != 2:
            raise exceptions.AuthenticationFailed(
                _(
                    "Invalid Authorization header: expected “Token <key>”, "
                    "with no spaces in the key."
                ),
                code="token_malformed",
            )
        try:
            key = parts[1].decode("ascii")
        except UnicodeDecodeError as exc:
            raise exceptions.AuthenticationFailed(
                _("Invalid token: it contains characters a token never has."),
                code="token_malformed",
            ) from exc
        token = token_for_key(key=key)
        if token is None:
            raise exceptions.AuthenticationFailed(_("Invalid token."), code="token_invalid")
        if token.revoked_at is not None:
            raise exceptions.AuthenticationFailed(
                _("This token has been revoked."), code="token_revoked"
            )
        if not token.user.is_active:
            raise exceptions.AuthenticationFailed(
                _("This account is inactive."), code="user_inactive"
            )
        token_mark_used(token=token)
        return token.user, token

    def authenticate_header(self, request) -> str:
        # Makes DRF answer unauthenticated requests 401 (with this challenge), not 403.
        return self.keyword
