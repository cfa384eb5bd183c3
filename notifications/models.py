"""What the notifications app stores: each person's choices, their browsers' push
subscriptions, and the log of mails sent (which enforces the digest's limit)."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils import timezone
from django.utils.translation import gettext_lazy as _


class NotificationSettings(models.Model):
    """One person's choices. A person without a row has the defaults (``for_user`` reads them
    without writing): mail on -- it is sent for turn-based games only, where nobody sits at
    the table waiting -- and push on, which does something only once a browser subscribed."""

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL,
        on_delete=models.CASCADE,
        related_name="notification_settings",
        verbose_name=_("user"),
    )
    mail = models.BooleanField(_("e-mail when it is my move"), default=True)
    push = models.BooleanField(_("push notifications when it is my move"), default=True)
    updated_at = models.DateTimeField(_("updated"), auto_now=True)

    class Meta:
        verbose_name = _("notification settings")
        verbose_name_plural = _("notification settings")

    def __str__(self) -> str:
        return (
            f"{self.user}: mail {'on' if self.mail else 'off'}, push {'on' if self.push else 'off'}"
        )

    @classmethod
    def for_user(cls, user_id: int) -> NotificationSettings:
        """The person's row, or an unsaved one holding the defaults."""
        return cls.objects.filter(user_id=user_id).first() or cls(user_id=user_id)


class PushSubscription(models.Model):
    """One browser's Web Push subscription (the ``PushSubscription.toJSON()`` of the Push API):
    where to post (``endpoint``, the push service's URL) and the keys to encrypt for.

    A push service answering 404 or 410 has dropped the subscription: the row is deleted then.
    Other failures are counted; ``MAX_FAILURES`` in a row delete it too."""

    MAX_FAILURES = 5

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.CASCADE,
        related_name="push_subscriptions",
        verbose_name=_("user"),
    )
    endpoint = models.URLField(_("endpoint"), max_length=1000, unique=True)
    p256dh = models.CharField(_("public key (p256dh)"), max_length=200)
    auth = models.CharField(_("auth secret"), max_length=100)
    created_at = models.DateTimeField(_("created"), default=timezone.now)
    last_ok_at = models.DateTimeField(_("last delivered"), null=True, blank=True)
    failures = models.PositiveSmallIntegerField(_("failures in a row"), default=0)

    class Meta:
        ordering = ["-created_at", "-id"]
        verbose_name = _("push subscription")
        verbose_name_plural = _("push subscriptions")

    def __str__(self) -> str:
        return f"{self.user}: {self.endpoint[:60]}"

    def info(self) -> dict[str, object]:
        """The subscription as pywebpush takes it."""
        return {"endpoint": self.endpoint, "keys": {"p256dh": self.p256dh, "auth": self.auth}}


class MailSent(models.Model):
    """A game listed in a "your move" mail to a person, and when: the digest never lists a
    game again to the same person within ``CRISP_MAIL_GAME_INTERVAL_SECONDS`` (an hour)."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.CASCADE,
        related_name="+",
        verbose_name=_("user"),
    )
    game = models.ForeignKey(
        "games.Game", on_delete=models.CASCADE, related_name="+", verbose_name=_("game")
    )
    sent_at = models.DateTimeField(_("sent"), default=timezone.now)

    class Meta:
        ordering = ["-sent_at"]
        indexes = [models.Index(fields=["user", "game", "sent_at"])]
        verbose_name = _("mail sent")
        verbose_name_plural = _("mails sent")

    def __str__(self) -> str:
        return f"{self.user} · game {self.game_id} · {self.sent_at:%Y-%m-%d %H:%M}"
