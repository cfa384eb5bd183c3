"""Stored Cribbage games that ended during the play: their last ``hand_over`` said 0 pegged for
the play that ended the game (issue 21, item 9; fixed in the engine's ``_score``).

The engine is deterministic and a replay rebuilds every state from the logged calls and checks
the last one against the stored ``Game.state``; after the fix the rebuilt ``last_hand.pegged``
counts that play, so the stored copies must say the same or such a game's replay would be
refused as damaged.  The right figure is in the stored events themselves: per seat, the sum of
``scored`` of the hand's ``play`` and ``last_card`` events.  Rewritten where it differs: the
``hand_over`` event, the round's ``result`` and end snapshot, and ``Game.state.last_hand``.
Statistics never read such a hand (its ``shows`` is empty), so no record changes.
"""

from django.db import migrations


def _pegged(Event, game_id: int, number: int) -> list[int]:
    out = [0, 0]
    rows = Event.objects.filter(game_id=game_id, origin="engine", type__in=("play", "last_card"))
    for data in rows.values_list("data", flat=True):
        if data.get("round") == number:
            out[data["seat"]] += data.get("scored", 0)
    return out


def fix(apps, schema_editor):
    Game = apps.get_model("games", "Game")
    Event = apps.get_model("games", "Event")
    Round = apps.get_model("games", "Round")
    for game in Game.objects.filter(kind="cribbage").exclude(state=None).iterator():
        state = game.state
        if not isinstance(state, dict) or state.get("status") != "finished":
            continue
        last = (
            Event.objects.filter(game_id=game.pk, origin="engine", type="hand_over")
            .order_by("-seq")
            .first()
        )
        if last is None or last.data.get("shows"):
            continue  # the play was finished: its pegged was always right
        number = last.data["round"]
        pegged = _pegged(Event, game.pk, number)
        if last.data.get("pegged") == pegged:
            continue
        # The log is append-only for the site; this one correction of an engine bug is the
        # migration's, made once, so that the log says what the fixed engine says.
        Event.objects.filter(pk=last.pk).update(data={**last.data, "pegged": pegged})
        if isinstance(state.get("last_hand"), dict):
            state["last_hand"]["pegged"] = pegged
            game.state = state
            game.save(update_fields=["state"])
        rnd = Round.objects.filter(game_id=game.pk, number=number).first()
        if rnd is not None:
            if isinstance(rnd.result, dict):
                rnd.result = {**rnd.result, "pegged": pegged}
            if isinstance(rnd.state, dict) and isinstance(rnd.state.get("last_hand"), dict):
                rnd.state["last_hand"]["pegged"] = pegged
            rnd.save(update_fields=["result", "state"])


class Migration(migrations.Migration):
    dependencies = [("games", "0005_game_night")]

    operations = [migrations.RunPython(fix, migrations.RunPython.noop)]
