"""Persistence for games.  The database is the source of truth; these models hold data only.

Nothing here decides anything: every write goes through ``games.services`` (which locks the
game row, asks the engine, and stores the result) and every read that reaches a player goes
through ``games.selectors`` (which redacts through the engine).  In particular no model method
ever serialises ``Game.state``, ``Game.seed``, ``Round.deck`` or ``Event.data`` for a player:
those hold every hidden card.

Snapshots (a decision, see docs/API.md "Storage"):

* ``Game.kind`` names the game's engine (``games.engines.KINDS``); every other module reaches
  the rules only through ``games.engines.engine_for(game.kind)``.
* ``Game.state`` is the engine's ``GameState.to_json()`` **kept current**: it is rewritten in the
  same transaction as every change, so a read never replays anything.
* ``Round.state`` is the snapshot **at the round's end** (just after its end event, even when a late
  timer dealt the next round in the same change), kept for the admin and for audits; None until
  the round's end (and, with a test-only 0 ms between-rounds pause, if a late timer dealt the next
  round at that instant).  ``Round.deck`` is the round's deck order as dealt.
* ``Event`` rows are the append-only log of everything that happened, in order (``seq`` is
  gap-free per game because it is allocated under the game's row lock).  Replaying a game's
  engine actions from ``new_game`` reproduces ``Game.state`` exactly (a test proves it).
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from games.engines import DEFAULT_KIND, KINDS, engine_for

NAME_MAX = 60  # a game's name (Game.name)
CHAT_MAX = 200  # one chat line (ChatMessage.text)


def kind_choices() -> list[tuple[str, str]]:
    """``Game.kind``'s choices: every registered engine, by its display name."""
    return [(kind, engine_for(kind).NAME) for kind in KINDS]


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
    # Which game this is (the engine registry's key) and the host's lobby choices for it,
    # as that engine's ``host_settings`` validated them (its ``SETTINGS_SCHEMA``).
    kind = models.CharField(
        _("game"), max_length=32, choices=kind_choices, default=DEFAULT_KIND, db_index=True
    )
    settings = models.JSONField(_("settings"), default=dict, blank=True)

    private = models.BooleanField(
        _("private"), default=False, help_text=_("Only people with the invite code can join.")
    )
    #: The host's name for the game ("Friday cards"); empty: the lobby says "<host>'s table".
    name = models.CharField(_("name"), max_length=NAME_MAX, blank=True, default="")
    #: The game this one is the rematch of ("Play again" at game over): one rematch per game.
    rematch_of = models.OneToOneField(
        "self",
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="rematch",
        verbose_name=_("rematch of"),
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
    # *timer* as a datetime, indexed, so the periodic sweep finds overdue games with one index
    # scan (an engine's silent deadlines have no timer: services.commit._timers).
    deadlines = models.JSONField(default=list, blank=True, editable=False)
    next_deadline_at = models.DateTimeField(null=True, blank=True, db_index=True, editable=False)
    # When a person last moved themselves (not a timer, not a computer player): games nobody
    # plays end as abandoned (services.game_reap_idle).
    last_played_at = models.DateTimeField(null=True, blank=True, editable=False)

    # SECRET: the engine snapshot (every card) and the seed.  Never sent to a player.
    state = models.JSONField(null=True, blank=True, editable=False)
    seed = models.CharField(max_length=64, blank=True, editable=False)
    winners = models.JSONField(default=list, blank=True, editable=False)

    class Meta:
        ordering = ["-created_at"]
        verbose_name = _("game")
        verbose_name_plural = _("games")

    def __str__(self) -> str:
        return f"Game #{self.pk} ({self.kind}, {self.status})"


class Seat(models.Model):
    """A user's place at a game.  Seat numbers are 0..n-1 without gaps (clockwise, R27)."""

    # No index of its own (db_index=False): the unique (game, number) leads with the game and
    # serves every lookup by game; a second index was one more insert per row (issue 25,
    # session 19: bench/results/session19-pg.md).
    game = models.ForeignKey(Game, on_delete=models.CASCADE, db_index=False, related_name="seats")
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="seats"
    )
    number = models.PositiveSmallIntegerField(_("seat"))
    score = models.IntegerField(_("running score"), default=0)
    joined_at = models.DateTimeField(_("joined"), default=timezone.now)
    #: Set when the player left a game in progress (the seat stays: the engine's seat count is
    #: fixed; its turns time out, and a game all of whose players left is abandoned).
    left_at = models.DateTimeField(_("left the game"), null=True, blank=True)

    # Computer play (games.botplay).  ``bot_level`` is the level of the bot that plays this
    # seat: always for a computer player's seat (its user ``is_bot``), and while
    # ``sitting_in`` for a person's seat whose player is away (timed out twice in a row, or
    # left).  ``bot_memory`` is that bot's own notes, built only from the payloads the seat
    # was sent (games.bots.Memory).  ``missed`` counts the seat's timeouts in a row.
    bot_level = models.CharField(_("computer level"), max_length=8, blank=True, default="")
    sitting_in = models.BooleanField(_("computer sitting in"), default=False)
    bot_memory = models.JSONField(null=True, blank=True, editable=False)
    missed = models.PositiveSmallIntegerField(_("timeouts in a row"), default=0)

    # Issue 26, "your move": since when the table has waited for this seat's PERSON (the
    # engine's ``awaiting(state, now)["seats"]``; never set for a computer player's seat nor
    # one a computer sits in for) and when that wait times out (None: no clock).  Written by
    # the commit step (``services.commit._persist_turns``) in the transaction of the snapshot,
    # so a person's "your move" list is one indexed query, not a parse of every game's state.
    turn_since = models.DateTimeField(
        _("your move since"), null=True, blank=True, db_index=True, editable=False
    )
    turn_deadline = models.DateTimeField(
        _("your move until"), null=True, blank=True, editable=False
    )

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
    """One dealt round (a Cribbage or Triple Crown hand too).  Created when it is dealt;
    ``state``/``result`` filled at its end (the engine's ``ROUND_END_EVENT``)."""

    game = models.ForeignKey(Game, on_delete=models.CASCADE, related_name="rounds")
    number = models.PositiveSmallIntegerField(_("round"))
    dealer = models.PositiveSmallIntegerField(_("dealer seat"))
    # SECRET: the game's seed (round decks derive from it) and this round's deck, top first.
    seed = models.CharField(max_length=64, editable=False)
    deck = models.JSONField(default=list, editable=False)
    # The engine snapshot at the round's end, and that event's data (the round's result).
    state = models.JSONField(null=True, blank=True, editable=False)
    result = models.JSONField(null=True, blank=True, editable=False)
    started_at = models.DateTimeField(_("dealt"), default=timezone.now)
    ended_at = models.DateTimeField(_("ended"), null=True, blank=True)

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

    ``origin`` says who wrote it: the engine (its ``Event``, redacted for players by the
    game's engine's ``event_view``) or the lobby (seat joined/left, started …; public by
    construction: they never carry a card).
    """

    class Origin(models.TextChoices):
        ENGINE = "engine", _("Engine")
        LOBBY = "lobby", _("Lobby")

    # No index of its own (db_index=False): the unique (game, seq) leads with the game and
    # serves every lookup by game; a second index was one more insert per row (issue 25,
    # session 19: bench/results/session19-pg.md).
    game = models.ForeignKey(Game, on_delete=models.CASCADE, db_index=False, related_name="events")
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


class ChatMessage(models.Model):
    """One line of a table's chat: kept with the game, shown to its players and spectators.

    Plain text, stored as typed and escaped wherever it is shown (the table sets textContent;
    templates autoescape). ``seat`` is the sender's seat when they sent it (None: a spectator).
    ``hidden`` lets staff take a line down without losing the record.
    """

    game = models.ForeignKey(Game, on_delete=models.CASCADE, related_name="chat_messages")
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="chat_messages"
    )
    seat = models.PositiveSmallIntegerField(_("seat"), null=True, blank=True)
    text = models.CharField(_("text"), max_length=CHAT_MAX)
    created_at = models.DateTimeField(_("sent"), default=timezone.now, db_index=True)
    hidden = models.BooleanField(_("hidden by staff"), default=False)

    class Meta:
        ordering = ["game", "created_at", "pk"]
        verbose_name = _("chat message")
        verbose_name_plural = _("chat messages")

    def __str__(self) -> str:
        return f"{self.game_id}: {self.text[:40]}"


class EngineCall(models.Model):
    """What the engine was asked to produce one version of a game (replay material).

    One row per engine change (``Game.version``), written by the service layer in the same
    transaction as the change: ``new_game`` (with the full engine settings and seat count),
    ``apply`` (seat and action wire form), ``fire`` (deadline key) or ``advance``, and at which
    instant.  ``Game.state`` is kept current only; replaying these calls from ``new_game`` with
    ``Game.seed`` rebuilds the state at every version exactly (the engine is deterministic),
    which is what the history app's replays and export verifier do.  It stays in this app
    because the one writer files it with every change, like ``Event``; the history app only
    reads it.  SECRET together with the seed (an action never carries a hidden card, but the
    audit export that contains these rows is staff-only anyway).
    """

    class Call(models.TextChoices):
        NEW_GAME = "new_game", "new_game"
        APPLY = "apply", "apply"
        FIRE = "fire", "fire"
        ADVANCE = "advance", "advance"

    # No index of its own (db_index=False): the unique (game, version) leads with the game and
    # serves every lookup by game; a second index was one more insert per row (issue 25,
    # session 19: bench/results/session19-pg.md).
    game = models.ForeignKey(
        Game, on_delete=models.CASCADE, db_index=False, related_name="engine_calls"
    )
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


class MatchPool(models.Model):
    """One quick-match queue: a game ``kind`` at a seat count (``games.services.match``).

    Why a row of its own: every request for a game of this pool locks it (``SELECT … FOR
    UPDATE``) before reading who waits, so two requests arriving together are served one after
    the other -- neither misses the other's ticket, and no ticket is seated twice.  Created on
    first use; never deleted.
    """

    kind = models.CharField(_("game"), max_length=32, choices=kind_choices)
    seats = models.PositiveSmallIntegerField(_("players"))

    class Meta:
        constraints = [models.UniqueConstraint(fields=["kind", "seats"], name="match_pool_unique")]
        verbose_name = _("quick-match queue")
        verbose_name_plural = _("quick-match queues")

    def __str__(self) -> str:
        return f"{self.kind}, {self.seats} players"


class MatchTicket(models.Model):
    """A player's "Find me a game": waiting in a pool until seated (then ``game`` is set).

    One per player (the unique ``user``): a player never waits twice, even when two of their
    requests race.  The ticket stays once matched so the player's page can learn the game;
    the player's next request replaces it once that game is over.
    """

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="match_ticket"
    )
    pool = models.ForeignKey(MatchPool, on_delete=models.CASCADE, related_name="tickets")
    #: The player's rating ordinal of the pool's game when they asked (0: unrated, the
    #: ordinal of a new player), for "nearest rating first".
    rating = models.FloatField(_("rating"), default=0.0)
    #: Fill the empty seats with computer players once the wait is over (``MATCH_WAIT_MS``).
    fill_with_computers = models.BooleanField(_("fill with computer players"), default=True)
    created_at = models.DateTimeField(_("asked"), default=timezone.now)
    #: The player's last request (asking or polling the status): a ticket whose player has
    #: stopped asking for ``MATCH_LAPSE_MS`` is passed over, so nobody is seated with a
    #: closed tab.
    seen_at = models.DateTimeField(_("last seen"), default=timezone.now)
    #: Deleted with its game (a ticket without a game would be waiting again).
    game = models.ForeignKey(
        Game, on_delete=models.CASCADE, null=True, blank=True, related_name="+"
    )

    class Meta:
        ordering = ["created_at", "pk"]
        verbose_name = _("quick-match ticket")
        verbose_name_plural = _("quick-match tickets")

    def __str__(self) -> str:
        return f"{self.user_id} in {self.pool_id}"
