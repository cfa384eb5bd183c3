from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class AccountsConfig(AppConfig):
    """People: sign-up, log-in, profiles, API tokens. Never imports `games`."""

    name = "accounts"
    verbose_name = _("Accounts")
