"""Input validation and (for the OpenAPI schema) output shapes of the games API.

Input serializers only check shape and types; every rule of the game or the lobby is checked by
the service layer, which is the one place that knows them.  Output bodies are built by
``games.selectors`` (the redaction point); the output serializers here document them.
"""

from __future__ import annotations

from rest_framework import serializers

from games.models import DRAW_SECONDS, MAX_SEATS, TARGET_SCORES


class ErrorSerializer(serializers.Serializer):
    code = serializers.CharField(help_text="Stable, machine-readable error code.")
    detail = serializers.CharField(help_text="Readable explanation.")


class GameCreateInput(serializers.Serializer):
    target_score = serializers.ChoiceField(choices=TARGET_SCORES, default=100)
    draw_seconds = serializers.ChoiceField(
        choices=DRAW_SECONDS, allow_null=True, default=None, help_text="null: no limit."
    )
    pile_draw = serializers.BooleanField(default=False)
    private = serializers.BooleanField(default=False)


class JoinInput(serializers.Serializer):
    invite_code = serializers.CharField(required=False, allow_blank=True, max_length=16)


class JoinByCodeInput(serializers.Serializer):
    invite_code = serializers.CharField(max_length=16)


class KickInput(serializers.Serializer):
    seat = serializers.IntegerField(min_value=0, max_value=MAX_SEATS - 1)


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
    idempotency_key = serializers.CharField(
        required=False,
        max_length=100,
        help_text="Retry key (or the Idempotency-Key header): a retry returns the first result.",
    )


class EventsQuery(serializers.Serializer):
    since = serializers.IntegerField(min_value=0, default=0)
    limit = serializers.IntegerField(min_value=1, max_value=500, default=500)


class ListQuery(serializers.Serializer):
    scope = serializers.ChoiceField(choices=["open", "mine"], default="open")


class InviteQuery(serializers.Serializer):
    invite_code = serializers.CharField(required=False, max_length=16)


# --- Outputs (documentation of what selectors return) -------------------------------------
class SeatOutput(serializers.Serializer):
    seat = serializers.IntegerField()
    user_id = serializers.IntegerField()
    name = serializers.CharField()
    score = serializers.IntegerField()


class SettingsOutput(serializers.Serializer):
    target_score = serializers.IntegerField()
    draw_seconds = serializers.IntegerField(allow_null=True)
    pile_draw = serializers.BooleanField()


class HostOutput(serializers.Serializer):
    id = serializers.IntegerField()
    name = serializers.CharField()


class GameOutput(serializers.Serializer):
    id = serializers.IntegerField()
    status = serializers.ChoiceField(choices=["lobby", "playing", "finished", "abandoned"])
    version = serializers.IntegerField()
    host = HostOutput()
    settings = SettingsOutput()
    private = serializers.BooleanField()
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
