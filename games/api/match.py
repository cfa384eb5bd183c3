"""REST endpoints of quick match (issue 24): "Find me a game", leave the queue, where it stands.

The same shape as games.api.views: parse, call a service, return what it built; refusals are
``ServiceError`` (games.exceptions renders them as ``{code, detail}``).  The page's "Find me a
game" button polls ``GET`` until ``state`` is ``matched``, then opens ``game_id``'s table.
"""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from crisp_site import throttles
from games import services
from games.api.views import _errors, _valid
from games.engines import KINDS


class MatchInput(serializers.Serializer):
    kind = serializers.ChoiceField(choices=list(KINDS), help_text="Which game.")
    seats = serializers.IntegerField(
        required=False,
        min_value=1,
        help_text="Players at the table, within the game's range (default: as few as the game "
        "allows, Crisp four).",
    )
    fill_with_computers = serializers.BooleanField(
        default=True,
        help_text="Once the wait is over (`fill_at`), seat computer players in the empty seats "
        "at your next status request.",
    )


class MatchStatusOutput(serializers.Serializer):
    state = serializers.ChoiceField(choices=["idle", "waiting", "matched"])
    kind = serializers.ChoiceField(choices=list(KINDS), allow_null=True)
    seats = serializers.IntegerField(allow_null=True)
    waited_ms = serializers.IntegerField(help_text="How long you have been waiting.")
    fill_with_computers = serializers.BooleanField()
    fill_at = serializers.IntegerField(
        allow_null=True, help_text="When computer players may fill the empty seats (ms epoch)."
    )
    game_id = serializers.IntegerField(allow_null=True, help_text="Your table once matched.")


class MatchApi(APIView):
    throttle_classes = [throttles.JoinThrottle]

    @extend_schema(
        operation_id="match_status",
        request=None,
        responses={200: MatchStatusOutput, **_errors(401, 403)},
        description="Where your quick match stands. Once the wait is over and you chose "
        "`fill_with_computers`, this request seats you with whoever waits and computer players.",
    )
    def get(self, request: Request) -> Response:
        return Response(services.match_status(user=request.user).to_json())

    @extend_schema(
        operation_id="match_join",
        request=MatchInput,
        responses={200: MatchStatusOutput, **_errors(400, 401, 403, 409)},
        description='"Find me a game": wait for players of the same game and seat count; you '
        "are seated with the nearest ratings first as soon as there are enough. Asking again "
        "answers the same (and may change `fill_with_computers`); `409 already_waiting` while "
        "you wait for another game.",
    )
    def post(self, request: Request) -> Response:
        data = _valid(MatchInput, request.data)
        return Response(services.match_join(user=request.user, **data).to_json())

    @extend_schema(
        operation_id="match_leave",
        request=None,
        responses={204: None, **_errors(401, 403, 404, 409)},
        description="Stop waiting. `404 not_waiting` without a request; `409 already_matched` "
        "once seated (leave the game itself instead).",
    )
    def delete(self, request: Request) -> Response:
        services.match_leave(user=request.user)
        return Response(status=status.HTTP_204_NO_CONTENT)
