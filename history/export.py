"""Export of a finished game (docs/API.md, "Export") and the verifier that replays one.

``game_export(game, audit=False)`` is the documented JSON: kind, settings, players, every event
in order (in the kind's full after-game form -- the replay hook's ``full_event_view`` -- or the
spectator form for a kind without one, and for a round the game stopped in before its end:
``replay.full_event``), the rounds' results, the final result and the kind's
text notation (``notation`` hook).  It never contains what stays hidden for good (a deck order).

``audit=True`` (staff, and the management command) adds what an exact replay needs and a player
may never see: the game's ``seed``, the logged engine calls and a digest of the engine state at
every version.  ``verify(export)`` replays an audit export through the engine (``new_game`` with
the seed, then each call) and checks every version's events, every state digest and the result;
a public export is checked for its own consistency only (it cannot be replayed without the seed,
and the report says so).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any

from games import clock
from games.engines import KINDS, engine_for
from games.engines.base import Event as EngineEvent
from games.models import EngineCall, Event, Game
from history import replay
from history.hooks import hook
from history.selectors import game_rounds

__all__ = ["FORMAT", "FORMAT_VERSION", "Report", "game_export", "game_notation", "verify"]

FORMAT = "crisp-online/game-export"
FORMAT_VERSION = 1


def state_digest(state_json: Any) -> str:
    """SHA-256 of an engine state's canonical JSON (sorted keys, no spaces)."""
    raw = json.dumps(state_json, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(raw.encode()).hexdigest()


def _events(game: Game) -> list[dict[str, Any]]:
    """Every event in order; an engine event in the full replay's form (``replay.full_event``:
    the spectator's form from the round the game stopped in, if it never reached its end)."""
    rows = list(Event.objects.filter(game=game).order_by("seq"))
    engine_made = [(e.seq, e.type) for e in rows if e.origin == Event.Origin.ENGINE]
    hidden_seq = replay.revealed_until(game.kind, engine_made)
    out = []
    for e in rows:
        if e.origin == Event.Origin.ENGINE:
            revealed = hidden_seq is None or e.seq < hidden_seq
            raw = EngineEvent(e.type, e.data)
            data = replay.full_event(game.kind, raw, revealed=revealed)["data"]
        else:
            data = dict(e.data)
        out.append(
            {
                "seq": e.seq,
                "version": e.version,
                "origin": e.origin,
                "type": e.type,
                "at": clock.from_datetime(e.created_at),
                "data": data,
            }
        )
    return out


def _players(game: Game) -> list[dict[str, Any]]:
    return [
        {
            "seat": s.number,
            "username": s.user.get_username(),
            "name": getattr(s.user, "public_name", None) or s.user.get_username(),
            "score": s.score,
        }
        for s in game.seats.select_related("user").order_by("number")
    ]


def game_notation(game: Game, events: list[dict[str, Any]] | None = None) -> str | None:
    """The kind's text notation of the game (None if the kind has no ``notation`` hook)."""
    notation = hook(game.kind, "notation")
    if notation is None:
        return None
    events = events if events is not None else _events(game)
    players = _players(game)
    engine_events = [
        {"type": e["type"], "data": e["data"]} for e in events if e["origin"] == "engine"
    ]
    return notation.notation(engine_events, len(players), [p["name"] for p in players])


def game_export(game: Game, *, audit: bool = False) -> dict[str, Any]:
    """The export of a finished or abandoned game (see the module docstring)."""
    events = _events(game)
    out: dict[str, Any] = {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "game": {
            "id": game.pk,
            "kind": game.kind,
            "name": engine_for(game.kind).NAME,
            "settings": dict(game.settings),
            "status": game.status,
            "version": game.version,
            "created_at": game.created_at.isoformat(),
            "started_at": game.started_at.isoformat() if game.started_at else None,
            "ended_at": game.ended_at.isoformat() if game.ended_at else None,
        },
        "players": _players(game),
        "events": events,
        "rounds": game_rounds(game),
        "result": {
            "status": game.status,
            "winners": list(game.winners),
            "scores": [p["score"] for p in _players(game)],
        },
        "notation": game_notation(game, events),
    }
    if audit:
        out["audit"] = {
            "seed": game.seed,
            "calls": [
                {
                    "version": c.version,
                    "call": c.call,
                    "at": c.at,
                    "seat": c.seat,
                    "action": c.action,
                    "key": c.key or None,
                    "settings": c.settings,
                    "seats": c.seats,
                    "decks": c.decks,
                }
                for c in EngineCall.objects.filter(game=game).order_by("version")
            ],
            "states": [
                {"version": vs.version, "digest": state_digest(vs.state.to_json())}
                for vs in replay.replay_states(game)
                if vs.call is not None
            ],
        }
    return out


@dataclass
class Report:
    """What ``verify`` found: ``ok`` when nothing is wrong; ``replayed`` when the engine was
    run (an audit export); counts of what was compared; every problem in words; ``notes``
    for what was not checked and why."""

    ok: bool = True
    replayed: bool = False
    versions_checked: int = 0
    events_checked: int = 0
    problems: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def problem(self, text: str) -> None:
        self.ok = False
        if len(self.problems) < 50:
            self.problems.append(text)

    def to_json(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "replayed": self.replayed,
            "versions_checked": self.versions_checked,
            "events_checked": self.events_checked,
            "problems": list(self.problems),
            "notes": list(self.notes),
        }


def _check_shape(export: Any, report: Report) -> bool:
    if not isinstance(export, dict) or export.get("format") != FORMAT:
        report.problem(f"not a {FORMAT} document")
        return False
    if export.get("format_version") != FORMAT_VERSION:
        report.problem(f"format_version {export.get('format_version')!r} is not {FORMAT_VERSION}")
        return False
    for key in ("game", "players", "events", "rounds", "result"):
        if key not in export:
            report.problem(f"missing {key!r}")
    if not report.ok:
        return False
    if export["game"].get("kind") not in KINDS:
        report.problem(f"unknown kind {export['game'].get('kind')!r}")
        return False
    seqs = [e.get("seq") for e in export["events"]]
    if seqs != list(range(1, len(seqs) + 1)):
        report.problem("event sequence numbers are not 1, 2, 3, … without gaps")
    versions = [e.get("version") for e in export["events"]]
    if versions != sorted(versions):
        report.problem("event versions go backwards")
    return report.ok


def _check_result(export: dict[str, Any], report: Report) -> None:
    """The result agrees with the events: the engine's game_over or the admin's game_ended."""
    result = export["result"]
    if [p["score"] for p in export["players"]] != result["scores"]:
        report.problem("the players' scores are not the result's")
    ends = [e for e in export["events"] if e["type"] in ("game_over", "game_ended")]
    if result["status"] == "finished":
        if not ends:
            report.problem("a finished game without a game_over or game_ended event")
        elif ends[-1]["data"].get("winners") != result["winners"]:
            report.problem("the winners are not the last end event's")
        elif ends[-1]["data"].get("scores") != result["scores"]:
            report.problem("the final scores are not the last end event's")


def verify(export: Any) -> Report:
    """Check an export; replay it through the engine if it is an audit export."""
    report = Report()
    if not _check_shape(export, report):
        return report
    _check_result(export, report)
    audit = export.get("audit")
    if not isinstance(audit, dict):
        report.notes.append("not replayed: only a staff audit export carries the seed")
        return report
    kind = export["game"]["kind"]
    engine = engine_for(kind)
    by_version: dict[int, list[dict[str, Any]]] = {}
    for e in export["events"]:
        if e["origin"] == "engine":
            by_version.setdefault(e["version"], []).append(e)
    engine_made = [(e["seq"], e["type"]) for es in by_version.values() for e in es]
    hidden_seq = replay.revealed_until(kind, engine_made)
    digests = {s["version"]: s["digest"] for s in audit.get("states", [])}
    state = None
    report.replayed = True
    try:
        for call in audit["calls"]:
            v = call["version"]
            if call["call"] == "new_game":
                settings = engine.Settings.from_json(call["settings"])
                state, produced = engine.new_game(
                    seats=call["seats"],
                    settings=settings,
                    seed=audit["seed"],
                    now=call["at"],
                    decks=call.get("decks"),
                )
            elif call["call"] == "apply":
                action = engine.Action.from_wire(call["action"])
                state, produced = engine.apply(state, call["seat"], action, call["at"])
            elif call["call"] == "fire":
                state, produced = engine.fire(state, call["key"], call["at"])
            elif call["call"] == "advance":
                state, produced = engine.advance(state, call["at"])
            else:
                report.problem(f"v{v}: unknown call {call['call']!r}")
                return report
            rows = by_version.pop(v, [])
            seqs = [e["seq"] for e in rows] + [None] * max(0, len(produced) - len(rows))
            shown = [
                replay.full_event(
                    kind, ev, revealed=hidden_seq is None or seq is None or seq < hidden_seq
                )
                for ev, seq in zip(produced, seqs, strict=False)
            ]
            recorded = [{"type": e["type"], "data": e["data"]} for e in rows]
            if shown != recorded:
                report.problem(f"v{v}: the engine's events differ from the recorded ones")
            report.events_checked += len(recorded)
            if v in digests and state_digest(state.to_json()) != digests[v]:
                report.problem(f"v{v}: the state differs from the recorded one")
            report.versions_checked += 1
    except Exception as exc:  # a damaged export: whatever the engine raised, in the report
        report.problem(f"the replay failed: {type(exc).__name__}: {exc}")
        return report
    if by_version:
        report.problem(f"recorded engine events of versions no call made: {sorted(by_version)}")
    if state is not None and export["result"]["status"] == "finished":
        ended_by_engine = state.status == "finished"
        if ended_by_engine and list(state.winners) != export["result"]["winners"]:
            report.problem("the replay's winners are not the recorded ones")
        if list(state.scores) != export["result"]["scores"]:
            report.problem("the replay's scores are not the recorded ones")
        totals = [r["scores"] for r in export["rounds"]]
        if totals and totals[-1] != list(state.scores) and ended_by_engine:
            report.problem("the last round's totals are not the replay's scores")
    return report
