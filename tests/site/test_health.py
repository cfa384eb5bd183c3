"""`/healthz` is green only when the database, Redis and a Celery worker all answer."""

from __future__ import annotations

import pytest

from tests import processes as live


@pytest.mark.django_db
def test_unhealthy_without_a_worker(client, caplog) -> None:
    with caplog.at_level("INFO"):
        response = client.get("/healthz")
    assert response.status_code == 503
    # The 503 is the answer, not a server error: no ERROR line while the services come up.
    assert [r for r in caplog.records if r.levelname == "ERROR"] == []
    body = response.json()
    assert body["database"] is True
    assert body["redis"] is True
    assert body["celery"] is False
    assert body["status"] == "unhealthy"


@pytest.mark.live
@pytest.mark.django_db(transaction=True)
def test_healthy_with_a_worker(client, log_dir) -> None:
    with live.running(live.celery_worker(log_dir)):
        live.wait_until(lambda: client.get("/healthz").status_code == 200, 60, "a green /healthz")
    body = client.get("/healthz").json()
    assert body["database"] is True and body["redis"] is True


@pytest.mark.django_db
def test_unhealthy_when_redis_is_unreachable(client, settings, tmp_path) -> None:
    settings.REDIS_URL = f"unix://{tmp_path}/nothing-here.sock"
    response = client.get("/healthz")
    assert response.status_code == 503
    assert response.json()["redis"] is False


def test_post_is_refused(client) -> None:
    assert client.post("/healthz").status_code == 405
