"""``manage.py history_verify``: replay finished games (or an export file) through the engine."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from games.errors import ServiceError
from games.models import Game
from history.export import game_export, verify


class Command(BaseCommand):
    help = (
        "Verify exports: replay each through its engine and check every recorded event, state "
        "and result. Give game ids, --all (every finished game), or --file EXPORT.json."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("game_ids", nargs="*", type=int)
        parser.add_argument("--all", action="store_true", help="every finished game")
        parser.add_argument("--file", type=Path, help="an export (JSON) to verify")

    def handle(self, *args: Any, **options: Any) -> None:
        reports = []
        if options["file"] is not None:
            try:
                export = json.loads(options["file"].read_text())
            except (OSError, ValueError) as exc:
                raise CommandError(f"cannot read {options['file']}: {exc}") from exc
            reports.append((str(options["file"]), verify(export)))
        games = Game.objects.filter(status=Game.Status.FINISHED)
        if not options["all"]:
            games = games.filter(pk__in=options["game_ids"])
        elif options["game_ids"]:
            raise CommandError("give game ids or --all, not both")
        for game in games.order_by("pk").iterator():
            try:
                export = game_export(game, audit=True)
            except ServiceError as exc:  # e.g. played before engine calls were logged
                self.stdout.write(f"game {game.pk}: skipped ({exc.detail})")
                continue
            reports.append((f"game {game.pk}", verify(export)))
        if not reports:
            raise CommandError("nothing to verify: give game ids, --all or --file")
        failed = 0
        for name, report in reports:
            status = "ok" if report.ok else "FAILED"
            self.stdout.write(
                f"{name}: {status} ({report.versions_checked} versions, "
                f"{report.events_checked} events replayed)"
            )
            for line in report.problems + report.notes:
                self.stdout.write(f"  {line}")
            failed += 0 if report.ok else 1
        if failed:
            raise CommandError(f"{failed} of {len(reports)} failed verification")
