"""A mail backend whose server is down (tests/notifications/test_mail.py)."""

from django.core.mail.backends.base import BaseEmailBackend


class Backend(BaseEmailBackend):
    def send_messages(self, email_messages):
        raise OSError("the mail server is down")
