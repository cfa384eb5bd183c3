"""Input validation and (for the OpenAPI schema) output shapes of the games API.

Input serializers only check shape and types; every rule of the game or the lobby is checked by
the service layer, which is the one place that knows them.  Output bodies are built by
``games.selectors`` (the redaction point); the output serializers here document them.
"""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from games.engines import DEFAULT_KIND, KINDS, engine_for
from games.services import BOT_LEVELS  # the schema names it once (ENUM_NAME_OVERRIDES)

#: The most seats any game has (seat numbers in requests are checked against it here, and
#: against the game's own engine by the service layer).
_MAX_SEATS = max(engine_for(k).MAX_SEATS for k in KINDS)


def _openapi(schema: dict[str, Any]) -> dict[str, Any]:
    """An engine's JSON Schema in OpenAPI 3.0's dialect: ``type: [X, "null"]`` becomes
    ``type: X, nullable: true`` (engines write plain JSON Schema; the API publishes 3.0)."""
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key == "type" and isinstance(value, list):
            kinds = [v for v in value if v != "null"]
            out["type"] = kinds[0]
            if "null" in value:
                out["nullable"] = True
        elif key == "properties":
            out[key] = {name: _openapi(prop) for name, prop in value.items()}
        else:
            out[key] = value
    return out


def settings_schema() -> dict[str, Any]:
    """The ``settings`` of a new game: one object per kind, each its engine's host menu.

    ``anyOf``, not ``oneOf``: the menus share option names (``{"move_seconds": null}`` is both
    a Cribbage and a Triple Crown menu), so a value may match several branches, and ``oneOf``
    would call every such answer of the site's own invalid (issue 21). Which menu applies is
    the game's ``kind``."""
    return {
        "anyOf": [
            {**_openapi(engine_for(k).SETTINGS_SCHEMA), "title": f"{engine_for(k).NAME} ({k})"}
            for k in KINDS
        ],
        "description": "The host's choices for the game's `kind` (its engine's menu; missing "
        "ones take the defaults). Validated by that game's engine: `bad_settings` otherwise.",
    }


@extend_schema_field(settings_schema())
class KindSettingsField(serializers.JSONField):
    """A JSON object whose shape depends on ``kind``; the service layer has it checked by the
    kind's engine (``host_settings``), the one place that knows each game's menu."""

    def to_internal_value(self, data: Any) -> Any:
        if not isinstance(data, dict):
            raise serializers.ValidationError("settings must be an object.")
        return super().to_internal_value(data)


class ErrorSerializer(serializers.Serializer):
    code = serializers.CharField(help_text="Stable, machine-readable error code.")
    detail = serializers.CharField(help_text="Readable explanation.")


class GameCreateInput(serializers.Serializer):
    kind = serializers.ChoiceField(
        choices=list(KINDS), default=DEFAULT_KIND, help_text="Which game: " + ", ".join(KINDS) + "."
    )
    settings = KindSettingsField(required=False, default=dict)
    private = serializers.BooleanField(default=False)

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        # A field this body does not have (say Crisp's `target_score` at the top level, where
        # it lived before there were several games) is refused, not silently dropped: the
        # client would otherwise get a game with settings it did not ask for.
        unknown = sorted(set(getattr(self, "initial_data", {}) or {}) - set(self.fields))
        if unknown:
            raise serializers.ValidationError(
                {name: ["Unknown field; game settings go in `settings`."] for name in unknown}
            )
        return attrs


class BotInput(serializers.Serializer):
    level = serializers.ChoiceField(choices=BOT_LEVELS, default="medium")


class VsComputerInput(serializers.Serializer):
    kind = serializers.ChoiceField(choices=list(KINDS), default=DEFAULT_KIND)
    level = serializers.ChoiceField(choices=BOT_LEVELS, default="medium")
    opponents = serializers.IntegerField(
        required=False, min_value=1, help_text="Computer players (default: the game's usual)."
    )
    settings = KindSettingsField(required=False, default=dict)


class JoinInput(serializers.Serializer):
    invite_code = serializers.CharField(required=False, allow_blank=True, max_length=16)


class JoinByCodeInput(serializers.Serializer):
    invite_code = serializers.CharField(max_length=16)


class KickInput(serializers.Serializer):
    seat = serializers.IntegerField(min_value=0, max_value=_MAX_SEATS - 1)


class _IdempotencyKeyField(serializers.CharField):
    """A 1-100 character string; anything else is the service layer's ``bad_idempotency_key``
    (what a too-long ``Idempotency-Key`` header and a WebSocket ``act`` get), not a generic
    ``invalid``: one rule, one code on every channel."""

    def run_validation(self, data: Any = serializers.empty) -> Any:
        try:
            return super().run_validation(data)
        except serializers.ValidationError:
            from games.errors import ServiceError

            raise ServiceError(
                "bad_idempotency_key", "An idempotency key is 1 to 100 characters."
            ) from None


class ActInput(serializers.Serializer):
    action = serializers.JSONField(
        help_text='The action in wire form, e.g. {"type": "draw", "source": "deck"} '
        "(docs/ENGINE.md)."
    )
    expected_version = serializers.IntegerField(
        min_value=0,
        required=False,
        allow_null=True,
        help_text="The game version the client acted on; a mismatch is refused (stale_version).",
    )
    idempotency_key = _IdempotencyKeyField(
        required=False,
        min_length=1,
        max_length=100,
        help_text="Retry key (or the Idempotency-Key header): a retry returns the first result.",
    )


class EventsQuery(serializers.Serializer):
    since = serializers.IntegerField(min_value=0, default=0)
    limit = serializers.IntegerField(min_value=1, max_value=500, default=500)


class ListQuery(serializers.Serializer):
    scope = serializers.ChoiceField(choices=["open", "mine"], default="open")
    kind = serializers.ChoiceField(choices=list(KINDS), required=False)


class InviteQuery(serializers.Serializer):
    invite_code = serializers.CharField(required=False, max_length=16)


# --- Outputs (documentation of what selectors return) -------------------------------------
class SeatOutput(serializers.Serializer):
    seat = serializers.IntegerField()
    user_id = serializers.IntegerField()
    name = serializers.CharField()
    score = serializers.IntegerField()
    bot = serializers.ChoiceField(
        choices=BOT_LEVELS,
        allow_null=True,
        help_text="A computer player's level; null for a person.",
    )
    is_guest = serializers.BooleanField(
        help_text="A guest account (no sign-up; never rated): shown with a “guest” badge."
    )
    sitting_in = serializers.BooleanField(
        help_text="A computer is playing this person's seat while they are away "
        "(two timeouts in a row); they take it back with POST …/back/."
    )
    left = serializers.BooleanField(
        help_text="The player left this game in progress for good: a computer plays the seat "
        "to the end, and there is no coming back."
    )


class HostOutput(serializers.Serializer):
    id = serializers.IntegerField()
    name = serializers.CharField()


class GameOutput(serializers.Serializer):
    id = serializers.IntegerField()
    kind = serializers.ChoiceField(choices=list(KINDS))
    status = serializers.ChoiceField(choices=["lobby", "playing", "finished", "abandoned"])
    version = serializers.IntegerField()
    host = HostOutput()
    settings = KindSettingsField()
    min_seats = serializers.IntegerField()
    max_seats = serializers.IntegerField()
    private = serializers.BooleanField()
    name = serializers.CharField(help_text="The host's name for the game; may be empty.")
    seats = SeatOutput(many=True)
    winners = serializers.ListField(child=serializers.IntegerField())
    created_at = serializers.DateTimeField()
    started_at = serializers.DateTimeField(allow_null=True)
    ended_at = serializers.DateTimeField(allow_null=True)
    invite_code = serializers.CharField(
        allow_null=True, help_text="Shown to seated players and staff only."
    )
    you = serializers.IntegerField(allow_null=True, help_text="Your seat number, if seated.")


class StateOutput(serializers.Serializer):
    game_id = serializers.IntegerField()
    kind = serializers.ChoiceField(choices=list(KINDS))
    version = serializers.IntegerField()
    status = serializers.CharField()
    state = serializers.JSONField(
        allow_null=True,
        help_text="The engine's view for your seat (spectator view if not seated); "
        "null in the lobby.",
    )


class EventOutput(serializers.Serializer):
    seq = serializers.IntegerField()
    version = serializers.IntegerField()
    type = serializers.CharField()
    data = serializers.JSONField()
    at = serializers.IntegerField(help_text="Server time, ms since the epoch.")


class EventsOutput(serializers.Serializer):
    version = serializers.IntegerField()
    events = EventOutput(many=True)


class LegalActionsOutput(serializers.Serializer):
    version = serializers.IntegerField()
    seat = serializers.IntegerField(allow_null=True)
    now = serializers.IntegerField()
    actions = serializers.ListField(child=serializers.JSONField())


class ActOutput(serializers.Serializer):
    version = serializers.IntegerField()
    replayed = serializers.BooleanField()
    events = EventOutput(many=True)
    state = StateOutput()


# --- Game night: chat, rematch, leaving a game in progress, naming -------------------------
class ChatInput(serializers.Serializer):
    text = serializers.CharField(
        max_length=200, trim_whitespace=False, allow_blank=True, help_text="One line, 1-200."
    )
    invite_code = serializers.CharField(required=False, allow_blank=True)


class ChatLineOutput(serializers.Serializer):
    id = serializers.IntegerField()
    user_id = serializers.IntegerField()
    name = serializers.CharField()
    seat = serializers.IntegerField(allow_null=True, help_text="Null: a spectator said it.")
    text = serializers.CharField(help_text="As typed: escape it wherever you show it.")
    at = serializers.IntegerField(help_text="Server time, ms since the epoch.")


class ChatOutput(serializers.Serializer):
    messages = ChatLineOutput(many=True)


class NameInput(serializers.Serializer):
    name = serializers.CharField(max_length=60, allow_blank=True, trim_whitespace=False)
