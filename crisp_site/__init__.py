"""Crisp online: project package (settings, URLs, ASGI, the Celery app, the dev supervisor)."""

from crisp_site.celery import app as celery_app

__all__ = ["celery_app"]
