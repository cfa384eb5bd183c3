"""What the games app tells other apps, so that they depend on it and never the other way round.

``game_finished`` is sent by the service layer in the transaction that finishes a game (the
engine said "finished", or staff ended it now), under the game's row lock, with ``game=`` the
finished ``Game``.  A receiver's writes are therefore committed or rolled back with the game's
end; the history app files the game's record, statistics and ratings on it
(``history.apps.HistoryConfig.ready``).  Sent with ``send``, not ``send_robust``: a receiver
that must not stop a game from finishing catches its own errors.
"""

from __future__ import annotations

from django.dispatch import Signal

#: Sent with ``sender=Game, game=<the finished Game>`` inside the finishing transaction.
game_finished = Signal()

#: Issue 26, "your move": sent ON COMMIT (never inside the transaction: a receiver mails and
#: pushes, and a rolled-back change must tell nobody) by the service layer's commit step when a
#: committed change leaves one or more PEOPLE's seats awaited that were not awaited before it
#: (the engine's ``awaiting(state, now)["seats"]``, computer players and seats a computer sits in
#: for left out).  Keyword arguments: ``game`` (the ``Game`` as committed), ``user_ids``
#: (``list[int]``, the people newly awaited), ``deadline`` (``datetime | None``, when their move
#: times out).  Receivers get nothing else: a notification says whose move it is in which game,
#: never a card or a role.
your_move = Signal()
