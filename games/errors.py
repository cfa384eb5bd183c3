"""The one application error type of the games app, and the engine-code → HTTP mapping.

Every refusal from the service layer is a ``ServiceError`` with a stable ``code``; the REST API
(``games.exceptions.api_exception_handler``) and the WebSocket consumer map it to the same
``{"code": ..., "detail": ...}`` shape.  A ``detail`` never carries a card value the caller may
not see: it is built from public facts only (the engine guarantees the same for its reasons).
"""

from __future__ import annotations

from typing import Any

from games.engines.base import IllegalAction

#: Engine refusal codes that mean "the request itself is malformed" (400) all start with
#: ``bad_`` (``bad_action``, ``bad_seat``, ``bad_settings``, Crisp's ``bad_target`` …), in
#: every engine: a convention of docs/ENGINE.md, so this mapping needs no list per game.
#: Every other engine code means "not allowed in the game's current state" (409).  403 is
#: reserved for "you are not allowed at all" (not seated, not the host), which the service
#: layer decides itself.
_BAD_REQUEST_PREFIX = "bad_"


class ServiceError(Exception):
    """A refused request.  Nothing was changed when this is raised (the transaction rolls back).

    ``code`` is machine-readable and never renamed; ``status`` is the HTTP status the API uses;
    ``extra`` is merged into the error body (e.g. ``{"version": 12}`` for ``stale_version``).
    """

    def __init__(
        self, code: str, detail: str, *, status: int = 400, extra: dict[str, Any] | None = None
    ) -> None:
        super().__init__(f"{code}: {detail}")
        self.code = code
        self.detail = detail
        self.status = status
        self.extra = extra or {}

    def to_json(self) -> dict[str, Any]:
        return {"code": self.code, "detail": self.detail, **self.extra}

    @classmethod
    def from_illegal(cls, exc: IllegalAction, **extra: Any) -> ServiceError:
        """The engine's refusal, unchanged in code and reason, with an HTTP status."""
        status = 400 if exc.code.startswith(_BAD_REQUEST_PREFIX) else 409
        return cls(exc.code, exc.reason, status=status, extra=extra)
