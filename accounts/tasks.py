"""Accounts' periodic work, run by Celery beat (crisp_site/settings.py, CELERY_BEAT_SCHEDULE).

Thin: the service (``accounts.services.guests_clean_idle``) decides and writes.
"""

from __future__ import annotations

from celery import shared_task

from accounts import services


@shared_task(name="accounts.guests_clean", ignore_result=True)
def guests_clean() -> dict:
    """Delete or anonymise guests idle longer than settings.CRISP_GUEST_IDLE_DAYS."""
    return services.guests_clean_idle()
