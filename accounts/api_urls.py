"""Mounted at /api/v1/me/ by crisp_site/urls.py."""

from django.urls import path

from accounts import api

app_name = "me"

urlpatterns = [
    path("", api.ProfileApi.as_view(), name="profile"),
    path("tokens/", api.TokenCollectionApi.as_view(), name="tokens"),
    path("tokens/<int:token_id>/revoke/", api.TokenRevokeApi.as_view(), name="token_revoke"),
]
