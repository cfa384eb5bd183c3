"""The history app's tables: what a finished game leaves behind -- records, ratings, statistics.

Moved out of the ``games`` app (issue 23) with their tables: each model keeps the table name it
had there (``db_table``), so an existing database keeps its rows (migrations ``games`` 0007 and
``history`` 0001 move them in Django's state only).  The engine-call log that replays read,
``games.models.EngineCall``, stays with the game: the service layer writes it with every change.

* ``GameRecord`` -- one row per finished game, written in the finishing transaction (on the
  ``games.signals.game_finished`` signal): the placements, the per-seat statistics counters (the
  kind's ``stats`` hook over the stored events) and the rating change.  Its uniqueness per game
  is what makes the after-game bookkeeping happen exactly once, however often the finishing path
  runs.
* ``Rating`` -- a player's current openskill rating for one kind (mu, sigma, ordinal).
* ``PlayerStats`` -- the per (player, kind) sums of ``GameRecord`` counters: a cache, rebuilt
  from the records (themselves derived from the events) by ``manage.py history_recompute``.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils import timezone
from django.utils.translation import gettext_lazy as _


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
        db_table = "games_gamerecord"  # its name in the games app, where it was created
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
        db_table = "games_rating"  # its name in the games app, where it was created
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
        db_table = "games_playerstats"  # its name in the games app, where it was created
        constraints = [models.UniqueConstraint(fields=["user", "kind"], name="stats_unique")]
        verbose_name = _("player statistics")
        verbose_name_plural = _("player statistics")

    def __str__(self) -> str:
        return f"{self.kind} stats of user #{self.user_id}"
