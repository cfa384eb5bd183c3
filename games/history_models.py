"""Persistence for what happens after a game: the engine-call log, game records, ratings, stats.

Imported at the end of ``games.models`` (so Django registers these models in the ``games`` app)
and kept in their own module so the history feature stays one self-contained piece.

* ``EngineCall`` -- one row per engine change (``Game.version``), saying exactly what the engine
  was asked: ``new_game`` (with the full engine settings and seat count), ``apply`` (seat and
  action wire form), ``fire`` (deadline key) or ``advance``, and at which instant.  ``Game.state``
  is kept current only; replaying these calls from ``new_game`` with ``Game.seed`` rebuilds the
  state at every version exactly (the engine is deterministic), which is what replays and the
  export verifier do.  SECRET together with the seed (an action never carries a hidden card, but
  the audit export that contains these rows is staff-only anyway).
* ``GameRecord`` -- one row per finished game, written in the finishing transaction: the
  placements, the per-seat statistics counters (the kind's ``stats`` hook over the stored
  events) and the rating change.  Its uniqueness per game is what makes the after-game
  bookkeeping happen exactly once, however often the finishing path runs.
* ``Rating`` -- a player's current openskill rating for one kind (mu, sigma, ordinal).
* ``PlayerStats`` -- the per (player, kind) sums of ``GameRecord`` counters: a cache, rebuilt
  from the records (themselves derived from the events) by ``manage.py history_recompute``.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils import timezone
from django.utils.translation import gettext_lazy as _


class EngineCall(models.Model):
    """What the engine was asked to produce one version of a game (replay material)."""

    class Call(models.TextChoices):
        NEW_GAME = "new_game", "new_game"
        APPLY = "apply", "apply"
        FIRE = "fire", "fire"
        ADVANCE = "advance", "advance"

    game = models.ForeignKey("games.Game", on_delete=models.CASCADE, related_name="engine_calls")
    version = models.PositiveIntegerField()
    call = models.CharField(max_length=10, choices=Call.choices)
    at = models.BigIntegerField(help_text="The engine's now, ms since the epoch.")
    seat = models.PositiveSmallIntegerField(null=True, blank=True)
    action = models.JSONField(null=True, blank=True)
    key = models.CharField(max_length=100, blank=True)
    # new_game only: the engine's full Settings.to_json() (timers included) and the seat count.
    settings = models.JSONField(null=True, blank=True)
    seats = models.PositiveSmallIntegerField(null=True, blank=True)
    # new_game only, and only when decks were stacked (tests, the admin): the rounds' decks.
    decks = models.JSONField(null=True, blank=True)

    class Meta:
        ordering = ["game", "version"]
        constraints = [
            models.UniqueConstraint(fields=["game", "version"], name="engine_call_unique_version")
        ]

    def __str__(self) -> str:
        return f"{self.call} → v{self.version} (game #{self.game_id})"


class GameRecord(models.Model):
    """A finished game's result as history, statistics and ratings use it.  One per game."""

    game = models.OneToOneField("games.Game", on_delete=models.CASCADE, related_name="record")
    kind = models.CharField(_("game"), max_length=32, db_index=True)
    finished_at = models.DateTimeField(_("finished"), db_index=True)
    # [{"seat", "user_id", "score", "placement", "winner"}], by seat.
    players = models.JSONField(default=list)
    # The kind's stats hook's counters, by seat ([] when the kind has none).
    counters = models.JSONField(default=list)
    rated = models.BooleanField(default=False)
    unrated_reason = models.CharField(max_length=32, blank=True)
    # [{"user_id", "before": {"mu", "sigma"}, "after": {"mu", "sigma"}}] when rated.
    ratings = models.JSONField(default=list)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["id"]
        verbose_name = _("game record")
        verbose_name_plural = _("game records")

    def __str__(self) -> str:
        return f"record of game #{self.game_id}"


class Rating(models.Model):
    """A player's openskill (Plackett-Luce) rating for one kind of game."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="ratings"
    )
    kind = models.CharField(_("game"), max_length=32)
    mu = models.FloatField()
    sigma = models.FloatField()
    # mu - 3 sigma: the conservative estimate the leaderboard sorts by (indexed for that).
    ordinal = models.FloatField(db_index=True)
    games = models.PositiveIntegerField(default=0)
    updated_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["kind", "-ordinal"]
        constraints = [models.UniqueConstraint(fields=["user", "kind"], name="rating_unique")]
        indexes = [models.Index(fields=["kind", "-ordinal"], name="rating_board")]
        verbose_name = _("rating")
        verbose_name_plural = _("ratings")

    def __str__(self) -> str:
        return f"{self.kind} rating of user #{self.user_id}"


class PlayerStats(models.Model):
    """Cached sums of a player's game records of one kind (see the module docstring)."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="game_stats"
    )
    kind = models.CharField(_("game"), max_length=32)
    games = models.PositiveIntegerField(default=0)
    wins = models.PositiveIntegerField(default=0)
    counters = models.JSONField(default=dict)
    updated_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["user", "kind"], name="stats_unique")]
        verbose_name = _("player statistics")
        verbose_name_plural = _("player statistics")

    def __str__(self) -> str:
        return f"{self.kind} stats of user #{self.user_id}"
