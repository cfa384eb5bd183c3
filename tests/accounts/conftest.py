from __future__ import annotations

import pytest
from django.core.cache import cache
from rest_framework.test import APIClient

from accounts import services
from tests.factories import UserFactory


@pytest.fixture(autouse=True)
def _fresh_state(settings):
    cache.clear()
    # Every test starts in English, whatever a previous test activated.
    from django.utils import translation

    translation.activate("en")
    yield
    translation.deactivate()


@pytest.fixture
def user(db):
    return UserFactory()


@pytest.fixture
def api_client() -> APIClient:
    return APIClient()


@pytest.fixture
def token_and_key(user):
    return services.token_create(user=user, name="my bot")
