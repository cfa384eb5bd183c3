"""``manage.py vapid_keys``: a new VAPID key pair for Web Push, as the environment lines the
site reads (README.md, "Configuration")."""

from __future__ import annotations

import base64

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec
from django.core.management.base import BaseCommand


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


class Command(BaseCommand):
    help = "Print a new VAPID key pair (VAPID_PUBLIC_KEY / VAPID_PRIVATE_KEY) for Web Push."

    def handle(self, *args: object, **options: object) -> None:
        key = ec.generate_private_key(ec.SECP256R1())
        private = key.private_numbers().private_value.to_bytes(32, "big")
        public = key.public_key().public_bytes(
            serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint
        )
        self.stdout.write(
            f"VAPID_PUBLIC_KEY={b64url(public)}\nVAPID_PRIVATE_KEY={b64url(private)}\n"
        )
