"""The `/api/v1/me/` API: the caller's profile and personal API tokens.

One small view per action, each with its own nested input/output serializers (HackSoft style).
Where REST puts two actions on one URL (GET and PATCH `/me/`, GET and POST `/me/tokens/`), the URL
is served by a class that only combines the two action views.
"""

from __future__ import annotations

from django.core.exceptions import ValidationError as DjangoValidationError
from django.http import Http404
from drf_spectacular.utils import extend_schema, extend_schema_serializer
from rest_framework import serializers, status
from rest_framework.exceptions import PermissionDenied, ValidationError
from rest_framework.response import Response
from rest_framework.views import APIView

from accounts import selectors, services
from accounts.models import ApiToken, User
from crisp_site import throttles


def _as_drf_error(error: DjangoValidationError) -> ValidationError:
    """A service's ValidationError as DRF's, so it answers 400 with readable messages."""
    if hasattr(error, "error_dict"):
        return ValidationError(error.message_dict)
    return ValidationError(error.messages)


@extend_schema_serializer(component_name="Profile")
class _ProfileOutput(serializers.ModelSerializer):
    class Meta:
        model = User
        fields = (
            "id",
            "username",
            "display_name",
            "public_name",
            "email",
            "language",
            "date_joined",
            "is_guest",
        )


@extend_schema_serializer(component_name="ApiToken")
class _TokenOutput(serializers.ModelSerializer):
    active = serializers.BooleanField(source="is_active")

    class Meta:
        model = ApiToken
        fields = ("id", "name", "prefix", "created_at", "last_used_at", "revoked_at", "active")


# --- Profile -------------------------------------------------------------------------------------


class ProfileGetApi(APIView):
    OutputSerializer = _ProfileOutput

    @extend_schema(
        operation_id="me_get",
        tags=["me"],
        description="The caller's own profile.",
        responses=_ProfileOutput,
    )
    def get(self, request):
        return Response(ProfileGetApi.OutputSerializer(request.user).data)


class ProfileUpdateApi(APIView):
    @extend_schema_serializer(component_name="ProfileUpdate")
    class InputSerializer(serializers.Serializer):
        display_name = serializers.CharField(max_length=40, required=False, allow_blank=True)
        language = serializers.ChoiceField(choices=User.Language.choices, required=False)
        email = serializers.EmailField(required=False, allow_blank=True)

    OutputSerializer = _ProfileOutput

    @extend_schema(
        operation_id="me_update",
        tags=["me"],
        description="Change the display name, preferred language (en, ja, ru) or email.",
        request=InputSerializer,
        responses=_ProfileOutput,
    )
    def patch(self, request):
        serializer = ProfileUpdateApi.InputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        try:
            user = services.user_profile_update(user=request.user, **serializer.validated_data)
        except DjangoValidationError as error:
            raise _as_drf_error(error) from error
        return Response(ProfileUpdateApi.OutputSerializer(user).data)


class ProfileApi(ProfileGetApi, ProfileUpdateApi):
    """GET and PATCH /api/v1/me/."""


# --- Tokens --------------------------------------------------------------------------------------


class TokenListApi(APIView):
    OutputSerializer = _TokenOutput

    @extend_schema(
        operation_id="me_tokens_list",
        tags=["me"],
        description="The caller's API tokens, active first. Keys are never shown again.",
        responses=_TokenOutput(many=True),
    )
    def get(self, request):
        tokens = selectors.token_list(user=request.user)
        return Response(TokenListApi.OutputSerializer(tokens, many=True).data)


class TokenCreateApi(APIView):
    throttle_classes = [throttles.TokenCreateThrottle, throttles.InviteCodeThrottle]

    @extend_schema_serializer(component_name="ApiTokenCreate")
    class InputSerializer(serializers.Serializer):
        name = serializers.CharField(max_length=60)

    @extend_schema_serializer(component_name="NewApiToken")
    class OutputSerializer(_TokenOutput):
        key = serializers.SerializerMethodField(
            help_text="The secret key. Shown only in this response: store it now."
        )

        class Meta(_TokenOutput.Meta):
            fields = (*_TokenOutput.Meta.fields, "key")

        def get_key(self, token) -> str:
            return self.context["key"]

    @extend_schema(
        operation_id="me_tokens_create",
        tags=["me"],
        description="Create a token. The response carries its `key`, the only time it is shown.",
        request=InputSerializer,
        responses={201: OutputSerializer},
    )
    def post(self, request):
        if request.user.is_guest:
            raise PermissionDenied("Guests cannot create API tokens: sign up first.")
        serializer = TokenCreateApi.InputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        try:
            token, key = services.token_create(user=request.user, **serializer.validated_data)
        except DjangoValidationError as error:
            raise _as_drf_error(error) from error
        output = TokenCreateApi.OutputSerializer(token, context={"key": key})
        response = Response(output.data, status=status.HTTP_201_CREATED)
        response["Cache-Control"] = "no-store"
        return response


class TokenCollectionApi(TokenListApi, TokenCreateApi):
    """GET and POST /api/v1/me/tokens/."""


class TokenRevokeApi(APIView):
    OutputSerializer = _TokenOutput

    @extend_schema(
        operation_id="me_tokens_revoke",
        tags=["me"],
        description="Revoke one of the caller's tokens, for good. Revoking twice is harmless.",
        request=None,
        responses=_TokenOutput,
    )
    def post(self, request, token_id: int):
        token = selectors.token_get(user=request.user, token_id=token_id)
        if token is None:
            raise Http404
        token = services.token_revoke(token=token)
        return Response(TokenRevokeApi.OutputSerializer(token).data)
