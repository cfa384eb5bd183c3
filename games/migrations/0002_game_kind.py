"""Several games on one platform: ``Game.kind`` and ``Game.settings`` replace Crisp's three
setting columns.  Every existing game becomes a ``crisp`` game with the same three settings,
copied into ``settings`` before the columns go (and back again on a reverse migration)."""

from django.db import migrations, models

import games.models

CRISP_KEYS = ("target_score", "draw_seconds", "pile_draw")


def forwards(apps, schema_editor):
    Game = apps.get_model("games", "Game")
    for game in Game.objects.all().only("pk", *CRISP_KEYS).iterator():
        Game.objects.filter(pk=game.pk).update(
            kind="crisp", settings={k: getattr(game, k) for k in CRISP_KEYS}
        )


def backwards(apps, schema_editor):
    Game = apps.get_model("games", "Game")
    for game in Game.objects.filter(kind="crisp").only("pk", "settings").iterator():
        s = game.settings or {}
        Game.objects.filter(pk=game.pk).update(
            target_score=s.get("target_score", 100),
            draw_seconds=s.get("draw_seconds"),
            pile_draw=bool(s.get("pile_draw", False)),
        )


class Migration(migrations.Migration):
    dependencies = [("games", "0001_initial")]

    operations = [
        migrations.AddField(
            model_name="game",
            name="kind",
            field=models.CharField(
                choices=games.models.kind_choices,
                db_index=True,
                default="crisp",
                max_length=32,
                verbose_name="game",
            ),
        ),
        migrations.AddField(
            model_name="game",
            name="settings",
            field=models.JSONField(blank=True, default=dict, verbose_name="settings"),
        ),
        migrations.RunPython(forwards, backwards),
        migrations.RemoveField(model_name="game", name="target_score"),
        migrations.RemoveField(model_name="game", name="draw_seconds"),
        migrations.RemoveField(model_name="game", name="pile_draw"),
        migrations.AlterField(
            model_name="round",
            name="ended_at",
            field=models.DateTimeField(blank=True, null=True, verbose_name="ended"),
        ),
    ]
