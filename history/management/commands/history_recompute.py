"""``manage.py history_recompute``: rebuild every game record, statistic and rating."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand

from history.services import records_recompute


class Command(BaseCommand):
    help = (
        "Rebuild every finished game's record, every player's statistics and every rating "
        "from the stored games and events (ratings replayed in the order games were rated)."
    )

    def handle(self, *args: Any, **options: Any) -> None:
        counts = records_recompute()
        self.stdout.write(
            f"{counts['records']} game records ({counts['created']} new), "
            f"{counts['rated']} rated games replayed."
        )
