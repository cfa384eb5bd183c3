"""The shape of personal API token keys, and their hash. Pure: no database.

A key looks like `crisp_<prefix>_<secret>`: `crisp_` makes a leaked key easy to recognise (secret
scanners, logs), the 8-character prefix is public and names the token in lists, and the secret is
43 URL-safe characters (256 random bits). Only `sha256(key)` is stored: with that much entropy a
fast unsalted hash is safe, and it lets a request find its token with one indexed lookup.
"""

from __future__ import annotations

import hashlib
import re
import secrets
import string

KEY_START = "crisp_"
PREFIX_LENGTH = 8
_PREFIX_ALPHABET = string.ascii_lowercase + string.digits
_KEY_RE = re.compile(r"^crisp_[a-z0-9]{8}_[A-Za-z0-9_-]{43}$")


def key_generate() -> tuple[str, str]:
    """A fresh `(prefix, key)` pair."""
    prefix = "".join(secrets.choice(_PREFIX_ALPHABET) for _ in range(PREFIX_LENGTH))
    return prefix, f"{KEY_START}{prefix}_{secrets.token_urlsafe(32)}"


def key_hash(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


def key_is_well_formed(key: str) -> bool:
    return bool(_KEY_RE.fullmatch(key))
