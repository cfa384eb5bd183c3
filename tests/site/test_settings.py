"""Settings come from the environment; production settings pass Django's deploy checks."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from django.core.management import call_command

from tests.processes import BASE_DIR


def _manage(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    full_env = {k: v for k, v in os.environ.items() if k not in {"DEBUG", "SECRET_KEY"}}
    full_env.update(DJANGO_SETTINGS_MODULE="crisp_site.settings", **env)
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=BASE_DIR,
        env=full_env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_production_settings_pass_check_deploy() -> None:
    result = _manage(
        "check",
        "--deploy",
        "--fail-level",
        "WARNING",
        DEBUG="0",
        SECRET_KEY="x" * 20 + "a-long-random-production-secret-key-0123456789",
        ALLOWED_HOSTS="crisp.example",
        CSRF_TRUSTED_ORIGINS="https://crisp.example",
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "no issues" in result.stdout


def test_production_refuses_to_start_without_a_secret_key() -> None:
    result = _manage("check", DEBUG="0", ALLOWED_HOSTS="crisp.example")
    assert result.returncode != 0
    assert "SECRET_KEY must be set" in result.stderr


def test_production_refuses_to_start_without_allowed_hosts() -> None:
    result = _manage("check", DEBUG="0", SECRET_KEY="k" * 60)
    assert result.returncode != 0
    assert "ALLOWED_HOSTS must be set" in result.stderr


@pytest.mark.django_db
def test_no_model_change_lacks_a_migration() -> None:
    call_command("makemigrations", "--check", "--dry-run", verbosity=0)


@pytest.mark.django_db(transaction=True)
def test_migrations_apply_backwards_and_forwards() -> None:
    """The test database was built by running every migration; unapplying and reapplying works."""
    call_command("migrate", "accounts", "zero", verbosity=0)
    call_command("migrate", verbosity=0)
