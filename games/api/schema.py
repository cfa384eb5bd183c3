"""OpenAPI extras: the token scheme of ``accounts.authentication.ApiTokenAuthentication``.

Registered by import path (no import of ``accounts`` needed): drf-spectacular matches the
authentication class by its dotted name and documents ``Authorization: Token <key>``, so the
interactive docs and generated clients know how to authenticate.
"""

from __future__ import annotations

from typing import Any

from drf_spectacular.extensions import OpenApiAuthenticationExtension


class ApiTokenScheme(OpenApiAuthenticationExtension):
    target_class = "accounts.authentication.ApiTokenAuthentication"
    name = "ApiToken"

    def get_security_definition(self, auto_schema: Any) -> dict[str, Any]:
        return {
            "type": "apiKey",
            "in": "header",
            "name": "Authorization",
            "description": 'Personal API token: "Token <key>" (create one at /api/v1/me/tokens/).',
        }
