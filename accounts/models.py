"""The user model, custom from day one so profile fields never need a painful migration."""

from django.conf import settings
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
    # A computer player's account (it plays through the same seats and service layer as
    # people, so every page and API shows it like a person -- plus this flag). It has no
    # usable password and never signs in.
    is_bot = models.BooleanField(_("computer player"), default=False, editable=False)
    # A guest (issue 24): a real account made in one click by "Play as guest", signed in
    # through the session only (no usable password), with a generated username and a
    # display name like "Guest 4821". Every page, the socket and the API treat it as a user;
    # it is marked as a guest wherever players are shown, never rated, and cleaned up when idle
    # (accounts.services.guests_clean_idle). Signing up converts this same row in place.
    is_guest = models.BooleanField(_("guest"), default=False, editable=False)

    def __str__(self) -> str:
        return self.display_name or self.username

    @property
    def public_name(self) -> str:
        """The name shown to other players: the display name, else the username."""
        return self.display_name or self.username


class ApiToken(models.Model):
    """A personal API token for a third-party client (bot, app) acting as its user.

    Only a SHA-256 hash of the key is stored: the key itself is shown once, when it is created.
    Keys carry 256 bits of randomness, so a fast unsalted hash is enough (nothing to brute-force).
    `prefix` is the public start of the key, so a person can tell their tokens apart.
    """

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.CASCADE,
        related_name="api_tokens",
        verbose_name=_("user"),
    )
    name = models.CharField(_("name"), max_length=60)
    prefix = models.CharField(_("prefix"), max_length=16, db_index=True)
    key_hash = models.CharField(_("key hash"), max_length=64, unique=True, editable=False)
    created_at = models.DateTimeField(_("created"), auto_now_add=True)
    last_used_at = models.DateTimeField(_("last used"), null=True, blank=True)
    revoked_at = models.DateTimeField(_("revoked"), null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        verbose_name = _("API token")
        verbose_name_plural = _("API tokens")

    def __str__(self) -> str:
        return f"{self.name} ({self.prefix}…)"

    @property
    def is_active(self) -> bool:
        return self.revoked_at is None
