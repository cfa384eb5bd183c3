"""Web Push (issue 26) against a local push service: the real encrypted, VAPID-signed request
pywebpush sends, decrypted with the subscribed browser's keys; dead subscriptions deleted; the
subscribe / unsubscribe API."""

from __future__ import annotations

import base64
import json

import pytest
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import encode_dss_signature
from django.test import Client
from django.urls import reverse

from notifications import services
from notifications.models import NotificationSettings, PushSubscription
from tests.notifications.push_endpoint import Browser

pytestmark = pytest.mark.django_db

API = "/api/v1/me/push-subscriptions/"
GOOD_KEYS = {"p256dh": "A" * 87, "auth": "A" * 22}


@pytest.fixture
def people(make_user):
    return [make_user(f"p{i}", email=f"p{i}@example.com") for i in range(4)]


@pytest.fixture
def tc_game(people, start_game, notify_live):
    """A Triple Crown game whose first move is seat 0's (people[0])."""
    return start_game(people, kind="triple_crown")


def subscribe(user, push_service, path="/push/1"):
    browser = Browser()
    services.subscribe(user, push_service.url(path), browser.p256dh, browser.auth)
    return browser


def b64d(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def test_a_push_says_your_move_the_game_and_its_address_only(
    tc_game, people, push_service, settings
):
    browser = subscribe(people[0], push_service)
    assert services.push_your_move(people[0].pk, tc_game.pk) == 1
    [request] = push_service.received
    assert request.path == "/push/1"
    assert request.headers["content-encoding"] == "aes128gcm"
    assert browser.decrypt(request.body) == {
        "title": "Your move",
        "body": "Triple Crown · p0's table",
        "url": f"/games/{tc_game.pk}/",
    }
    # VAPID (RFC 8292): signed by the site's key for the push service's origin.
    scheme, _, params = request.headers["authorization"].partition(" ")
    assert scheme == "vapid"
    fields = dict(part.strip().split("=", 1) for part in params.split(","))
    assert fields["k"] == settings.VAPID_PUBLIC_KEY
    header, claims, signature = fields["t"].split(".")
    assert json.loads(b64d(claims))["aud"] == push_service.url("")
    raw = b64d(signature)
    public = ec.EllipticCurvePublicKey.from_encoded_point(ec.SECP256R1(), b64d(fields["k"]))
    public.verify(
        encode_dss_signature(int.from_bytes(raw[:32], "big"), int.from_bytes(raw[32:], "big")),
        f"{header}.{claims}".encode(),
        ec.ECDSA(hashes.SHA256()),
    )
    sub = PushSubscription.objects.get()
    assert sub.last_ok_at is not None and sub.failures == 0


def test_a_push_speaks_the_recipient_s_language(tc_game, people, push_service):
    people[0].language = "ru"
    people[0].save()
    browser = subscribe(people[0], push_service)
    services.push_your_move(people[0].pk, tc_game.pk)
    assert browser.decrypt(push_service.received[0].body)["title"] == "Ваш ход"


def test_every_browser_of_the_person_gets_it(tc_game, people, push_service):
    one = subscribe(people[0], push_service, "/push/1")
    two = subscribe(people[0], push_service, "/push/2")
    subscribe(people[1], push_service, "/push/3")
    assert services.push_your_move(people[0].pk, tc_game.pk) == 2
    by_path = {r.path: r for r in push_service.received}
    assert set(by_path) == {"/push/1", "/push/2"}
    assert one.decrypt(by_path["/push/1"].body) == two.decrypt(by_path["/push/2"].body)


@pytest.mark.parametrize("gone", [404, 410])
def test_a_subscription_the_push_service_dropped_is_deleted(tc_game, people, push_service, gone):
    subscribe(people[0], push_service, "/push/gone")
    subscribe(people[0], push_service, "/push/ok")
    push_service.statuses["/push/gone"] = gone
    assert services.push_your_move(people[0].pk, tc_game.pk) == 1
    assert [s.endpoint for s in PushSubscription.objects.all()] == [push_service.url("/push/ok")]


def test_other_failures_are_counted_then_the_subscription_goes(tc_game, people, push_service):
    subscribe(people[0], push_service, "/push/sick")
    push_service.statuses["/push/sick"] = 500
    for failures in range(1, PushSubscription.MAX_FAILURES):
        assert services.push_your_move(people[0].pk, tc_game.pk) == 0
        assert PushSubscription.objects.get().failures == failures
    services.push_your_move(people[0].pk, tc_game.pk)
    assert not PushSubscription.objects.exists()


def test_no_push_once_the_move_is_made(tc_game, people, push_service, move):
    subscribe(people[0], push_service)
    move(tc_game, people[0])
    assert services.push_your_move(people[0].pk, tc_game.pk) == 0
    assert push_service.received == []


def test_no_push_with_push_off_or_without_vapid_keys(tc_game, people, push_service, settings):
    subscribe(people[0], push_service)
    NotificationSettings.objects.create(user=people[0], push=False)
    assert services.push_your_move(people[0].pk, tc_game.pk) == 0
    NotificationSettings.objects.filter(user=people[0]).update(push=True)
    settings.VAPID_PRIVATE_KEY = ""
    assert services.push_your_move(people[0].pk, tc_game.pk) == 0
    assert push_service.received == []


def test_no_push_for_a_live_game_by_default(people, start_game, push_service):
    game = start_game(people, kind="triple_crown")
    subscribe(people[0], push_service)
    assert services.push_your_move(people[0].pk, game.pk) == 0


# --- The API --------------------------------------------------------------------------------
def test_subscribe_and_unsubscribe_through_the_api(people, api, push_service, settings):
    browser = Browser()
    body = {
        "endpoint": push_service.url("/push/9"),
        "keys": {"p256dh": browser.p256dh, "auth": browser.auth},
    }
    client = api(people[0])
    status = client.get(API)
    assert status.json() == {
        "enabled": True,
        "vapid_public_key": settings.VAPID_PUBLIC_KEY,
        "subscriptions": 0,
    }
    answer = client.post(API, body, format="json")
    assert answer.status_code == 201, answer.content
    assert answer.json()["subscriptions"] == 1
    assert client.post(API, body, format="json").json()["subscriptions"] == 1  # same browser
    sub = PushSubscription.objects.get()
    assert (sub.user, sub.p256dh, sub.auth) == (people[0], browser.p256dh, browser.auth)
    # Somebody else cannot remove it.
    assert (
        api(people[1]).delete(API, {"endpoint": body["endpoint"]}, format="json").status_code == 204
    )
    assert PushSubscription.objects.count() == 1
    assert client.delete(API, {"endpoint": body["endpoint"]}, format="json").status_code == 204
    assert not PushSubscription.objects.exists()


@pytest.mark.parametrize(
    "body",
    [
        {},
        {"endpoint": "not a url", "keys": {"p256dh": "x", "auth": "y"}},
        {
            "endpoint": "https://push.example/1",
            "keys": {"p256dh": "short", "auth": "AAAAAAAAAAAAAAAAAAAAAA"},
        },
        {"endpoint": "https://push.example/1", "keys": "nope"},
        {
            "endpoint": "https://push.example/" + "x" * 1000,
            "keys": GOOD_KEYS,
        },
        [1, 2],
    ],
)
def test_bad_subscriptions_are_refused(people, api, push_service, body):
    answer = api(people[0]).post(API, body, format="json")
    assert answer.status_code == 400
    assert "code" in answer.json()
    assert not PushSubscription.objects.exists()


def test_plain_http_and_local_endpoints_are_refused_in_production(
    people, api, push_service, settings
):
    settings.CRISP_PUSH_ALLOW_HTTP = False
    body = {"endpoint": push_service.url("/p"), "keys": GOOD_KEYS}
    assert api(people[0]).post(API, body, format="json").status_code == 400
    for inside in (
        "https://127.0.0.1/p",
        "https://[::1]/p",
        "https://localhost/p",
        "https://10.0.0.2/p",
    ):
        body["endpoint"] = inside
        assert api(people[0]).post(API, body, format="json").status_code == 400, inside
    assert not PushSubscription.objects.exists()
    body["endpoint"] = "https://push.example/p"
    assert api(people[0]).post(API, body, format="json").status_code == 201


def test_subscribing_needs_push_on_the_site(people, api):
    body = {"endpoint": "https://push.example/p", "keys": GOOD_KEYS}
    answer = api(people[0]).post(API, body, format="json")
    assert answer.status_code == 409
    assert answer.json()["code"] == "push_disabled"


def test_the_api_needs_a_signed_in_person_and_csrf(people, push_service):
    body = json.dumps({"endpoint": "https://push.example/p", "keys": GOOD_KEYS})
    anonymous = Client(enforce_csrf_checks=True)
    assert anonymous.post(API, body, content_type="application/json").status_code in (401, 403)
    session = Client(enforce_csrf_checks=True)
    session.force_login(people[0])
    assert session.post(API, body, content_type="application/json").status_code == 403
    assert not PushSubscription.objects.exists()
    session.get(reverse("notifications:settings"))  # sets the CSRF cookie
    token = session.cookies["csrftoken"].value
    answer = session.post(API, body, content_type="application/json", HTTP_X_CSRFTOKEN=token)
    assert answer.status_code == 201


def test_the_settings_page_shows_the_push_switch_with_vapid_keys(people, client, push_service):
    client.force_login(people[0])
    page = client.get(reverse("notifications:settings")).content.decode()
    assert 'name="push"' in page
    assert "js/push.js" in page


def test_vapid_keys_prints_a_pair_the_site_can_sign_with(tc_game, people, push_service, settings):
    from io import StringIO

    from django.core.management import call_command

    out = StringIO()
    call_command("vapid_keys", stdout=out)
    pair = dict(line.split("=", 1) for line in out.getvalue().split())
    settings.VAPID_PUBLIC_KEY = pair["VAPID_PUBLIC_KEY"]
    settings.VAPID_PRIVATE_KEY = pair["VAPID_PRIVATE_KEY"]
    subscribe(people[0], push_service)
    assert services.push_your_move(people[0].pk, tc_game.pk) == 1
    fields = push_service.received[0].headers["authorization"].split("k=", 1)[1]
    assert fields.strip() == pair["VAPID_PUBLIC_KEY"]
