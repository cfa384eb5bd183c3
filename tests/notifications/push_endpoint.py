"""A stand-in push service for the tests: a real HTTP server on 127.0.0.1 that receives what
pywebpush really sends (encrypted, VAPID-signed), and a browser's subscription keys to decrypt
it with -- nothing of pywebpush is mocked.

Why decrypt: it is the only way to check what a push says (RFC 8291's aes128gcm, the keys the
browser would hold), so the leak test reads the very bytes a browser would show.
"""

from __future__ import annotations

import base64
import json
import os
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import http_ece
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def vapid_pair() -> tuple[str, str]:
    """A VAPID key pair as the environment gives it: (public, private), base64url raw."""
    key = ec.generate_private_key(ec.SECP256R1())
    public = key.public_key().public_bytes(
        serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint
    )
    return b64url(public), b64url(key.private_numbers().private_value.to_bytes(32, "big"))


@dataclass
class Browser:
    """A subscribed browser's keys (what ``PushManager.subscribe`` makes in a real one)."""

    key: ec.EllipticCurvePrivateKey = field(
        default_factory=lambda: ec.generate_private_key(ec.SECP256R1())
    )
    auth_secret: bytes = field(default_factory=lambda: os.urandom(16))

    @property
    def p256dh(self) -> str:
        return b64url(
            self.key.public_key().public_bytes(
                serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint
            )
        )

    @property
    def auth(self) -> str:
        return b64url(self.auth_secret)

    def decrypt(self, body: bytes) -> dict[str, Any]:
        plain = http_ece.decrypt(
            body, private_key=self.key, auth_secret=self.auth_secret, version="aes128gcm"
        )
        return json.loads(plain.decode())


@dataclass
class Received:
    path: str
    headers: dict[str, str]
    body: bytes


class PushService:
    """The HTTP server: ``statuses[path]`` answers a path (201 unless set); ``received`` lists
    every request in order."""

    def __init__(self) -> None:
        self.received: list[Received] = []
        self.statuses: dict[str, int] = {}
        service = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", "0"))
                body = self.rfile.read(length)
                headers = {k.lower(): v for k, v in self.headers.items()}
                service.received.append(Received(self.path, headers, body))
                self.send_response(service.statuses.get(self.path, 201))
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}{path}"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def push_service() -> Iterator[PushService]:
    service = PushService()
    try:
        yield service
    finally:
        service.close()
