"""accounts.services, accounts.selectors and accounts.tokens.user_for_token."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.core.exceptions import ValidationError
from django.utils import timezone

from accounts import keys, selectors, services
from accounts.models import ApiToken, User
from accounts.tokens import user_for_token
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db


def test_user_create_hashes_password_and_keeps_fields():
    user = services.user_create(
        username="alice", password="a-long-enough-secret", email="a@example.com", language="ru"
    )
    user.refresh_from_db()
    assert user.check_password("a-long-enough-secret")
    assert user.password != "a-long-enough-secret"
    assert (user.email, user.language) == ("a@example.com", "ru")


def test_user_create_refuses_a_username_differing_only_in_case():
    UserFactory(username="Alice")
    with pytest.raises(ValidationError) as error:
        services.user_create(username="alice", password="a-long-enough-secret")
    assert "username" in error.value.message_dict
    assert User.objects.count() == 1


def test_user_create_runs_the_password_validators():
    with pytest.raises(ValidationError):
        services.user_create(username="bob", password="123")
    assert not User.objects.filter(username="bob").exists()


def test_user_profile_update_changes_only_given_fields():
    user = UserFactory(display_name="Old", language="en", email="x@example.com")
    services.user_profile_update(user=user, language="ja")
    user.refresh_from_db()
    assert (user.display_name, user.language, user.email) == ("Old", "ja", "x@example.com")


def test_user_profile_update_rejects_an_unknown_language():
    user = UserFactory()
    with pytest.raises(ValidationError):
        services.user_profile_update(user=user, language="xx")
    user.refresh_from_db()
    assert user.language == "en"


def test_token_create_stores_only_a_hash_and_a_public_prefix():
    user = UserFactory()
    token, key = services.token_create(user=user, name="  my bot ")
    assert keys.key_is_well_formed(key)
    assert key.startswith(f"crisp_{token.prefix}_")
    stored = ApiToken.objects.get(pk=token.pk)
    assert stored.name == "my bot"
    assert stored.key_hash == keys.key_hash(key)
    assert key not in {stored.key_hash, stored.prefix, stored.name}
    assert selectors.token_for_key(key=key) == stored


def test_two_tokens_never_share_a_key():
    user = UserFactory()
    keys_made = {services.token_create(user=user, name=f"t{i}")[1] for i in range(5)}
    assert len(keys_made) == 5


def test_token_create_needs_a_name():
    with pytest.raises(ValidationError):
        services.token_create(user=UserFactory(), name="   ")


def test_token_create_caps_the_active_tokens_but_revoked_ones_do_not_count():
    user = UserFactory()
    made = [
        services.token_create(user=user, name=f"t{i}")[0] for i in range(services.MAX_ACTIVE_TOKENS)
    ]
    with pytest.raises(ValidationError):
        services.token_create(user=user, name="one too many")
    services.token_revoke(token=made[0])
    services.token_create(user=user, name="now it fits")


def test_token_revoke_is_final_and_keeps_the_first_time():
    token, _ = services.token_create(user=UserFactory(), name="t")
    services.token_revoke(token=token)
    first = token.revoked_at
    assert first is not None
    services.token_revoke(token=token)
    token.refresh_from_db()
    assert token.revoked_at == first


def test_token_mark_used_writes_at_most_once_a_minute():
    token, _ = services.token_create(user=UserFactory(), name="t")
    t0 = timezone.now()
    services.token_mark_used(token=token, now=t0)
    services.token_mark_used(token=token, now=t0 + timedelta(seconds=30))
    token.refresh_from_db()
    assert token.last_used_at == t0
    # A stale in-memory copy must not write either: the UPDATE itself is conditional.
    stale = ApiToken.objects.get(pk=token.pk)
    stale.last_used_at = None
    services.token_mark_used(token=stale, now=t0 + timedelta(seconds=59))
    token.refresh_from_db()
    assert token.last_used_at == t0
    services.token_mark_used(token=token, now=t0 + timedelta(seconds=61))
    token.refresh_from_db()
    assert token.last_used_at == t0 + timedelta(seconds=61)


def test_token_get_returns_only_the_owners_token():
    owner, other = UserFactory(), UserFactory()
    token, _ = services.token_create(user=owner, name="t")
    assert selectors.token_get(user=owner, token_id=token.pk) == token
    assert selectors.token_get(user=other, token_id=token.pk) is None


def test_user_for_token_valid_key_gives_its_user_and_marks_it_used():
    user = UserFactory()
    token, key = services.token_create(user=user, name="ws")
    assert user_for_token(key) == user
    token.refresh_from_db()
    assert token.last_used_at is not None


@pytest.mark.parametrize(
    "mangle",
    [
        lambda key: key[:-1] + ("A" if key[-1] != "A" else "B"),  # unknown
        lambda key: key[:-3],  # malformed: too short
        lambda key: "Token " + key,  # the header, not the key
        lambda key: "",
        lambda key: None,
    ],
)
def test_user_for_token_refuses_wrong_keys(mangle):
    _, key = services.token_create(user=UserFactory(), name="ws")
    assert user_for_token(mangle(key)) is None


def test_user_for_token_refuses_revoked_tokens_and_inactive_users():
    user = UserFactory()
    token, key = services.token_create(user=user, name="ws")
    _, other_key = services.token_create(user=user, name="ws2")
    services.token_revoke(token=token)
    assert user_for_token(key) is None
    assert user_for_token(other_key) == user
    User.objects.filter(pk=user.pk).update(is_active=False)
    assert user_for_token(other_key) is None


def test_admin_revoke_action_calls_the_service(client):
    admin_user = UserFactory(is_staff=True, is_superuser=True)
    token, key = services.token_create(user=UserFactory(), name="leaked")
    client.force_login(admin_user)
    response = client.post(
        "/admin/accounts/apitoken/",
        {"action": "revoke", "_selected_action": [token.pk]},
        follow=True,
    )
    assert response.status_code == 200
    token.refresh_from_db()
    assert token.revoked_at is not None
    assert user_for_token(key) is None
    assert key not in client.get(f"/admin/accounts/apitoken/{token.pk}/change/").content.decode()
