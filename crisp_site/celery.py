"""The Celery app. Tasks live in each app's `tasks.py`; settings are the `CELERY_*` Django ones."""

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "crisp_site.settings")

app = Celery("crisp_site")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
