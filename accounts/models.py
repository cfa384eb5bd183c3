"""The user model, custom from day one so profile fields never need a painful migration."""

from django.contrib.auth.models import AbstractUser
from django.db import models
from django.utils.translation import gettext_lazy as _


class User(AbstractUser):
    """A registered person. `display_name` is what other players see at the table."""

    class Language(models.TextChoices):
        ENGLISH = "en", _("English")
        JAPANESE = "ja", _("Japanese")
        RUSSIAN = "ru", _("Russian")

    display_name = models.CharField(_("display name"), max_length=40, blank=True)
    language = models.CharField(
        _("preferred language"), max_length=2, choices=Language.choices, default=Language.ENGLISH
    )

    def __str__(self) -> str:
        return self.display_name or self.username

    @property
    def public_name(self) -> str:
        """The name shown to other players: the display name, else the username."""
        return self.display_name or self.username
