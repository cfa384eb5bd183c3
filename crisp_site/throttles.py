"""Request throttling for the API and the sign-up / password-reset pages (docs/API.md).

DRF's throttle interface (`throttle_classes`, 429 with `Retry-After` through its exception
handling), with our own counting:

* **Atomic fixed windows in Redis**: a counter per key and window, bumped with `INCR`. DRF's
  `SimpleRateThrottle` reads a history list and writes it back, so concurrent requests (300
  parallel invite-code guesses) overwrite each other's counts and mostly get through.
* **Rates are read per request** from `settings.THROTTLE_RATES` (DRF binds its rates once at
  import, so neither tests nor operators could change them).
* **Clients are told by address** through `crisp_site.proxies.client_ip`, which believes
  `X-Forwarded-For` only from `TRUSTED_PROXIES`.
* **A cache outage lets requests through** (logged): a Redis restart must not turn every
  throttled endpoint into a 500. The log-in lockout (django-axes, in the database) does not
  depend on it.

The cache is Redis (settings `CACHES`), so the limits hold across every daphne process.
The HTML pages use the same classes through `check()`.
"""

from __future__ import annotations

import hashlib
import logging
import math
import time
from typing import Any

from django.conf import settings
from django.core.cache import cache
from rest_framework.throttling import BaseThrottle

from crisp_site.proxies import client_ip

logger = logging.getLogger(__name__)


_PERIODS = {"s": 1, "m": 60, "h": 3600, "d": 86400}

#: Wall-clock seconds: windows must agree across processes (tests may stop it).
_clock = time.time


def parse_rate(rate: str) -> tuple[int, int]:
    """`"10/hour"` -> (10, 3600): DRF's rate format (the period's first letter counts)."""
    number, _, period = rate.partition("/")
    return int(number), _PERIODS[period.strip()[0]]


class ScopedThrottle(BaseThrottle):
    """One named limit (`scope`, a key of `settings.THROTTLE_RATES`) per user, else per address.

    A rate is DRF's `"<number>/<second|minute|hour|day>"`.
    """

    scope = ""
    #: Only these HTTP methods count (a page's GET shows the form; its POST does the work).
    methods: frozenset[str] | None = frozenset({"POST"})
    _wait: float | None = None

    def ident(self, request: Any) -> str:
        user = getattr(request, "user", None)
        if user is not None and user.is_authenticated:
            return f"user:{user.pk}"
        return f"ip:{client_ip(request)}"

    def get_cache_key(self, request: Any, view: Any) -> str | None:
        if self.methods is not None and request.method not in self.methods:
            return None
        return f"throttle:{self.scope}:{self.ident(request)}"

    def allow_request(self, request: Any, view: Any) -> bool:
        rate = settings.THROTTLE_RATES.get(self.scope)
        key = self.get_cache_key(request, view) if rate else None
        if key is None:
            return True
        limit, duration = parse_rate(rate)
        now = _clock()
        window = int(now // duration)
        key = f"{key}:{window}"
        try:
            cache.add(key, 0, timeout=duration + 1)
            count = cache.incr(key)
        except Exception:  # the cache (Redis) is unreachable: fail open, loudly
            logger.warning("throttle %s unavailable; request allowed", self.scope, exc_info=True)
            return True
        if count <= limit:
            return True
        self._wait = (window + 1) * duration - now
        return False

    def wait(self) -> float | None:
        return self._wait

    def retry_after(self) -> int:
        """Whole seconds until the next request would be allowed (at least 1)."""
        return max(1, math.ceil(self._wait or 1))


class AddressThrottle(ScopedThrottle):
    """Per client address whether signed in or not (sign-up, password-reset requests)."""

    def ident(self, request: Any) -> str:
        return f"ip:{client_ip(request)}"


# --- The API's scopes ------------------------------------------------------------------------


class GameCreateThrottle(ScopedThrottle):
    scope = "game_create"


class GameActThrottle(ScopedThrottle):
    scope = "game_act"


class JoinThrottle(ScopedThrottle):
    """Joining, the one place an invite code is tried: bounds guessing codes."""

    scope = "join"


class TokenCreateThrottle(ScopedThrottle):
    scope = "token_create"


class InviteCodeThrottle(ScopedThrottle):
    """Every request that presents an invite code, on any method (a code may be tried on reads)."""

    scope = "invite_code"
    methods = None

    def get_cache_key(self, request: Any, view: Any) -> str | None:
        query = getattr(request, "query_params", request.GET)
        if "invite_code" not in query:
            return None
        return super().get_cache_key(request, view)


class AnonReadThrottle(ScopedThrottle):
    """Reads by clients with no account at all (watching a public game, issue 24), per client
    address: a signed-in user (a guest too) is not counted here.  Their page views, REST reads,
    replay frames and socket handshakes share the one `anon_read` budget."""

    scope = "anon_read"
    methods = frozenset({"GET", "HEAD"})

    def get_cache_key(self, request: Any, view: Any) -> str | None:
        user = getattr(request, "user", None)
        if user is not None and user.is_authenticated:
            return None
        return super().get_cache_key(request, view)


# --- The pages' scopes --------------------------------------------------------------------------


class SignupThrottle(AddressThrottle):
    scope = "signup"


class GuestCreateThrottle(AddressThrottle):
    """Guest accounts made from one address: each guest gets the per-user limits afresh, so
    this is what bounds one client's guests (and their rows) as a whole."""

    scope = "guest_create"


class PasswordResetThrottle(AddressThrottle):
    scope = "password_reset"


class PasswordResetEmailThrottle(ScopedThrottle):
    """Reset mails to one address, whoever asks: a mailbox is not flooded from many addresses."""

    scope = "password_reset_email"

    def get_cache_key(self, request: Any, view: Any) -> str | None:
        if request.method != "POST":
            return None
        email = (request.POST.get("email") or "").strip().lower()
        if not email:
            return None
        digest = hashlib.sha256(email.encode()).hexdigest()[:32]  # no address in the cache
        return f"throttle:{self.scope}:{digest}"


def throttled_message(seconds: int) -> str:
    """What a person reads on a page whose throttle refused them (translated, with plurals)."""
    from django.utils import translation

    minutes = max(1, math.ceil(seconds / 60))
    return translation.ngettext(
        "Too many attempts. Please try again in %(minutes)d minute.",
        "Too many attempts. Please try again in %(minutes)d minutes.",
        minutes,
    ) % {"minutes": minutes}


def check(request: Any, *throttles: type[ScopedThrottle]) -> int | None:
    """For a plain Django view: None if the request may go on, else the seconds to wait."""
    waits = []
    for throttle_class in throttles:
        throttle = throttle_class()
        if not throttle.allow_request(request, None):
            waits.append(throttle.retry_after())
    return max(waits) if waits else None
