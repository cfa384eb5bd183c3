"""``/api/v1/me/push-subscriptions/``: a browser's Web Push subscription, saved or forgotten.

JSON, signed in (the site's session with its CSRF token, or an API token): the site's own
settings page calls it after ``PushManager.subscribe``; an app may too.
"""

from __future__ import annotations

import ipaddress
from urllib.parse import urlsplit

from django.conf import settings
from drf_spectacular.utils import extend_schema, extend_schema_serializer
from rest_framework import serializers, status
from rest_framework.exceptions import ValidationError
from rest_framework.response import Response
from rest_framework.views import APIView

from games.errors import ServiceError
from notifications import services


def _is_ip(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True


class _Keys(serializers.Serializer):
    p256dh = serializers.RegexField(r"^[A-Za-z0-9_-]{80,100}={0,2}$", max_length=200)
    auth = serializers.RegexField(r"^[A-Za-z0-9_-]{16,30}={0,2}$", max_length=100)


@extend_schema_serializer(component_name="PushSubscriptionInput")
class _SubscribeInput(serializers.Serializer):
    endpoint = serializers.URLField(max_length=1000)
    keys = _Keys()

    def validate_endpoint(self, value: str) -> str:
        """A push service's https URL. The server posts to it, so neither an address on this
        machine nor a bare IP is taken (push services have names), unless the site allows
        a local stand-in (``CRISP_PUSH_ALLOW_HTTP``)."""
        if settings.CRISP_PUSH_ALLOW_HTTP:
            return value
        parts = urlsplit(value)
        host = (parts.hostname or "").lower()
        if parts.scheme != "https":
            raise ValidationError("a push endpoint is an https URL")
        if host == "localhost" or host.endswith(".localhost") or _is_ip(host):
            raise ValidationError("a push endpoint is a push service's URL, not an address")
        return value


@extend_schema_serializer(component_name="PushUnsubscribeInput")
class _UnsubscribeInput(serializers.Serializer):
    endpoint = serializers.URLField(max_length=1000)


@extend_schema_serializer(component_name="PushStatus")
class _StatusOutput(serializers.Serializer):
    enabled = serializers.BooleanField(help_text="Whether the site sends pushes (VAPID keys set).")
    vapid_public_key = serializers.CharField(
        allow_blank=True, help_text="The applicationServerKey to subscribe with."
    )
    subscriptions = serializers.IntegerField(help_text="The caller's subscribed browsers.")


def _refuse_when_off() -> None:
    if not services.push_configured():
        raise ServiceError("push_disabled", "this site sends no push notifications", status=409)


class PushSubscriptionsApi(APIView):
    @extend_schema(
        operation_id="me_push_status",
        tags=["me"],
        description="Whether the site sends Web Push, its VAPID public key, and how many "
        "browsers the caller subscribed.",
        responses=_StatusOutput,
    )
    def get(self, request):
        return Response(
            _StatusOutput(
                {
                    "enabled": services.push_configured(),
                    "vapid_public_key": settings.VAPID_PUBLIC_KEY,
                    "subscriptions": request.user.push_subscriptions.count(),
                }
            ).data
        )

    @extend_schema(
        operation_id="me_push_subscribe",
        tags=["me"],
        description="Save a browser's push subscription (its PushSubscription.toJSON()); "
        "the same endpoint again replaces its keys. 409 push_disabled when the site has "
        "no VAPID keys.",
        request=_SubscribeInput,
        responses={201: _StatusOutput},
    )
    def post(self, request):
        _refuse_when_off()
        data = _SubscribeInput(data=request.data)
        data.is_valid(raise_exception=True)
        services.subscribe(
            request.user,
            data.validated_data["endpoint"],
            data.validated_data["keys"]["p256dh"],
            data.validated_data["keys"]["auth"],
        )
        return Response(
            _StatusOutput(
                {
                    "enabled": True,
                    "vapid_public_key": settings.VAPID_PUBLIC_KEY,
                    "subscriptions": request.user.push_subscriptions.count(),
                }
            ).data,
            status=status.HTTP_201_CREATED,
        )

    @extend_schema(
        operation_id="me_push_unsubscribe",
        tags=["me"],
        description="Forget a browser's push subscription of the caller (204 whether or not "
        "it was saved).",
        request=_UnsubscribeInput,
        responses={204: None},
    )
    def delete(self, request):
        data = _UnsubscribeInput(data=request.data)
        data.is_valid(raise_exception=True)
        services.unsubscribe(request.user, data.validated_data["endpoint"])
        return Response(status=status.HTTP_204_NO_CONTENT)
