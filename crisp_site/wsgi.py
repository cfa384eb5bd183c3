"""WSGI entry point, for management tools only: the site itself is served over ASGI by daphne."""

import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "crisp_site.settings")
application = get_wsgi_application()
