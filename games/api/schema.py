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


#: Answers any API operation may give, whatever its own: a throttled request (every request
#: presenting an invite code counts, crisp_site/throttles.py), a database that cannot be
#: reached or a busy game (503, games/exceptions.py), a server fault (500, still JSON).
_ALWAYS = {
    "429": "Too many requests: `throttled`, wait `Retry-After` seconds.",
    "500": "A server fault: `server_error`.",
    "503": "Try again after `Retry-After` seconds: `busy`, `unavailable`.",
}
#: Answers of an operation that takes a body.
_WITH_BODY = {
    "400": (
        "Malformed or invalid input: `malformed_json`, `malformed_body`, `invalid`, a `bad_…` code."
    ),
    "413": "The body is over 2.5 MB: `too_large`.",
    "415": "A body type the API does not read: `unsupported_media_type`.",
}
_RETRY_AFTER = {"Retry-After": {"schema": {"type": "integer"}, "description": "Seconds to wait."}}


def document_common_errors(
    result: dict[str, Any], generator: Any, request: Any, public: bool
) -> dict[str, Any]:
    """drf-spectacular post-processing hook: every API operation documents the statuses it can
    answer whatever the view (issue 21: a 429 was an undocumented answer, so the schema was
    untrue). Each is the `Error` body, `{code, detail}`; the views' own docs are kept."""

    def error(description: str) -> dict[str, Any]:
        return {
            "description": description,
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}},
        }

    for path, item in result.get("paths", {}).items():
        if not path.startswith("/api/"):
            continue
        for operation in item.values():
            if not isinstance(operation, dict) or "responses" not in operation:
                continue
            responses = operation["responses"]
            extra = dict(_ALWAYS)
            if operation.get("requestBody") or operation.get("parameters"):
                extra["400"] = _WITH_BODY["400"]
            if operation.get("requestBody"):
                extra.update(_WITH_BODY)
            if {} not in operation.get("security", [{}]):  # sign-in needed
                extra["401"] = "Not signed in, or a bad token: `not_authenticated`, …"
                extra["403"] = "Not allowed: `permission_denied`, `not_host`, …"
            if "{" in path:
                extra["404"] = "No such resource: `not_found`, …"
            for status, description in extra.items():
                responses.setdefault(status, error(description))
            for status in ("429", "503"):
                responses[status].setdefault("headers", dict(_RETRY_AFTER))
    return result
