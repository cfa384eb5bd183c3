"""Persistence for games.  The database is the source of truth; these models hold data only.

Nothing here decides anything: every write goes through ``games.services`` (which locks the
game row, asks the engine, and stores the result) and every read that reaches a player goes
through ``games.selectors`` (which redacts through the engine).  In particular no model method
ever serialises ``Game.state``, ``Game.seed``, ``Round.deck`` or ``Event.data`` for a player:
those hold every hidden card.

Snapshots (a decision, see docs/API.md "Storage"):

* ``Game.state`` is the engine's ``GameState.to_json()`` **kept current**: it is rewritten in the
  same transaction as every change, so a read never replays anything.
* ``Round.state`` is the snapshot **at the round's end** (just after its reveal, even when a late
  timer dealt the next round in the same change), kept for the admin and for audits; None until
  the reveal (and, with a test-only 0 ms between-rounds pause, if a late timer dealt the next
  round at the reveal's instant).  ``Round.deck`` is the round's deck order as dealt.
* ``Event`` rows are the append-only log of everything that happened, in order (``seq`` is
  gap-free per game because it is allocated under the game's row lock).  Replaying a game's
  engine actions from ``new_game`` reproduces ``Game.state`` exactly (a test proves it).
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

TARGET_SCORES = (50, 100, 150)
DRAW_SECONDS = (30, 45, 60)
MIN_SEATS = 2
MAX_SEATS = 8


class Game(models.Model):
    """One game, from its lobby to its end.  ``version`` grows by one with every change."""

    class Status(models.TextChoices):
        LOBBY = "lobby", _("Lobby")
        PLAYING = "playing", _("Playing")
        FINISHED = "finished", _("Finished")
        ABANDONED = "abandoned", _("Abandoned")

    host = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        related_name="hosted_games",
        verbose_name=_("host"),
    )
    # The three host settings (rules section 10).
    target_score = models.PositiveSmallIntegerField(
        _("end score"), choices=[(v, str(v)) for v in TARGET_SCORES], default=100
    )
    draw_seconds = models.PositiveSmallIntegerField(
        _("seconds per draw"),
        choices=[(v, str(v)) for v in DRAW_SECONDS],
        null=True,
        blank=True,
        help_text=_("Empty: no limit."),
    )
    pile_draw = models.BooleanField(_("drawing from the discard pile"), default=False)

    private = models.BooleanField(
        _("private"), default=False, help_text=_("Only people with the invite code can join.")
    )
    invite_code = models.CharField(_("invite code"), max_length=16, unique=True)
    status = models.CharField(
        _("status"), max_length=10, choices=Status.choices, default=Status.LOBBY, db_index=True
    )
    version = models.PositiveIntegerField(_("version"), default=0)
    # The last Event.seq handed out; allocated under the row lock, so gap-free.
    last_seq = models.PositiveIntegerField(default=0, editable=False)

    created_at = models.DateTimeField(_("created"), default=timezone.now, db_index=True)
    updated_at = models.DateTimeField(_("updated"), default=timezone.now)
    started_at = models.DateTimeField(_("started"), null=True, blank=True)
    ended_at = models.DateTimeField(_("ended"), null=True, blank=True)

    # Pending engine deadlines, [{"key", "kind", "at"}] ordered by "at" (ms), and the earliest
    # as a datetime, indexed, so the periodic sweep finds overdue games with one index scan.
    deadlines = models.JSONField(default=list, blank=True, editable=False)
    next_deadline_at = models.DateTimeField(null=True, blank=True, db_index=True, editable=False)

    # SECRET: the engine snapshot (every card) and the seed.  Never sent to a player.
    state = models.JSONField(null=True, blank=True, editable=False)
    seed = models.CharField(max_length=64, blank=True, editable=False)
    winners = models.JSONField(default=list, blank=True, editable=False)

    class Meta:
        ordering = ["-created_at"]
        verbose_name = _("game")
        verbose_name_plural = _("games")

    def __str__(self) -> str:
        return f"Game #{self.pk} ({self.status})"


class Seat(models.Model):
    """A user's place at a game.  Seat numbers are 0..n-1 without gaps (clockwise, R27)."""

    game = models.ForeignKey(Game, on_delete=models.CASCADE, related_name="seats")
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="seats"
    )
    number = models.PositiveSmallIntegerField(_("seat"))
    score = models.IntegerField(_("running score"), default=0)
    joined_at = models.DateTimeField(_("joined"), default=timezone.now)

    class Meta:
        ordering = ["game", "number"]
        constraints = [
            models.UniqueConstraint(fields=["game", "number"], name="seat_unique_number"),
            models.UniqueConstraint(fields=["game", "user"], name="seat_unique_user"),
        ]
        verbose_name = _("seat")
        verbose_name_plural = _("seats")

    def __str__(self) -> str:
        return f"seat {self.number} of game #{self.game_id}"


class Round(models.Model):
    """One dealt round.  Created when it is dealt; ``state``/``result`` filled at its reveal."""

    game = models.ForeignKey(Game, on_delete=models.CASCADE, related_name="rounds")
    number = models.PositiveSmallIntegerField(_("round"))
    dealer = models.PositiveSmallIntegerField(_("dealer seat"))
    # SECRET: the game's seed (round decks derive from it) and this round's deck, top first.
    seed = models.CharField(max_length=64, editable=False)
    deck = models.JSONField(default=list, editable=False)
    # The engine snapshot at the round's end, and the reveal's result (totals, round scores …).
    state = models.JSONField(null=True, blank=True, editable=False)
    result = models.JSONField(null=True, blank=True, editable=False)
    started_at = models.DateTimeField(_("dealt"), default=timezone.now)
    ended_at = models.DateTimeField(_("revealed"), null=True, blank=True)

    class Meta:
        ordering = ["game", "number"]
        constraints = [
            models.UniqueConstraint(fields=["game", "number"], name="round_unique_number"),
        ]
        verbose_name = _("round")
        verbose_name_plural = _("rounds")

    def __str__(self) -> str:
        return f"round {self.number} of game #{self.game_id}"


class Event(models.Model):
    """Something that happened, in full (unredacted).  Append-only.

    ``origin`` says who wrote it: the engine (its ``Event``, redacted for players by
    ``games.engine.event_view``) or the lobby (seat joined/left, started …; public by
    construction: they never carry a card).
    """

    class Origin(models.TextChoices):
        ENGINE = "engine", _("Engine")
        LOBBY = "lobby", _("Lobby")

    game = models.ForeignKey(Game, on_delete=models.CASCADE, related_name="events")
    round = models.ForeignKey(
        Round, on_delete=models.CASCADE, related_name="events", null=True, blank=True
    )
    seq = models.PositiveIntegerField(_("sequence number"))
    version = models.PositiveIntegerField(_("game version"))
    origin = models.CharField(max_length=6, choices=Origin.choices)
    type = models.CharField(_("type"), max_length=32)
    data = models.JSONField(_("payload"), default=dict)
    created_at = models.DateTimeField(_("created"), default=timezone.now)

    class Meta:
        ordering = ["game", "seq"]
        constraints = [
            models.UniqueConstraint(fields=["game", "seq"], name="event_unique_seq"),
        ]
        indexes = [models.Index(fields=["game", "version"], name="event_game_version")]
        verbose_name = _("event")
        verbose_name_plural = _("events")

    def __str__(self) -> str:
        return f"#{self.seq} {self.type} (game #{self.game_id} v{self.version})"

    def save(self, *args: object, **kwargs: object) -> None:
        # The log is evidence: a row, once written, is never rewritten.
        if not self._state.adding:
            raise ValueError("Event rows are append-only")
        super().save(*args, **kwargs)  # type: ignore[arg-type]


class IdempotencyKey(models.Model):
    """A client's retry key for one action: the same key, user and game give the same result.

    ``fingerprint`` is the action's wire form: reusing a key for a different action is refused
    rather than silently answered with the first action's result.
    """

    game = models.ForeignKey(Game, on_delete=models.CASCADE, related_name="idempotency_keys")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    key = models.CharField(max_length=100)
    fingerprint = models.JSONField()
    version = models.PositiveIntegerField()
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["game", "user", "key"], name="idempotency_unique"),
        ]

    def __str__(self) -> str:
        return f"{self.key} → v{self.version}"
