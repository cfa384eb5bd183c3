"""The replay leak audit (issue 21, item 1): a replay, for any viewer, never shows a value the
rules keep secret for good or one that was never revealed.

Random games of every kind are played through the service layer and ended every way a game
ends -- **finished** by the engine, **abandoned** (by the host or an admin) and **ended by an
admin** ("end now") -- and then every replay view is opened through the API as every kind of
reader: the full and spectator views, and each seat's view as that seat's own player, as another
player, as an outsider, as a visitor with no account at all and as staff; the JSON export and
the text notation as a player, an outsider, an anonymous visitor and staff; and the replay
page's choice of views.  A guest (issue 24) plays in every game.

What each reader may see is decided here, by an **independent knowledge tracker** written from
the rules over the stored, unredacted events (``Event.data``) -- never by the engine's view code:

* per round, the cards that became **public** by the end of the game: Crisp's pile cards
  (discards, Kings, swapped-out cards, pile draws, timeouts) and the hands at the reveal (R4,
  R21); Cribbage's starter, played and shown cards and the last hand's cards at ``hand_over``
  (C30f-g); Triple Crown's played cards, and every dealt card of a hand that reached its
  reveal (T20, T27).  A round the game stopped in (abandoned, ended by an admin) never reached
  its reveal: its hands were **never revealed**;
* per seat and round, what that seat alone saw: Crisp's looks, drawn cards, Jack and Queen
  receipts; Cribbage's six dealt cards and its two crib cards; Triple Crown's own hand, role
  and (Double Stakes) memo;
* **secret for good**, whoever asks: every deck order and the seed; in Cribbage, which seat
  laid away which crib card -- so neither a seat's six-card deal nor its two crib cards is ever
  shown to anyone but that seat (C30c, CE10).

A seat's view is for its own player and staff (``not_your_seat`` for anyone else; docs/API.md);
whatever a reader is served is checked against what that reader may know, so an answer the
rules allow passes whichever way the site decides who may open it.  The number of games per
kind and end is ``REPLAY_AUDIT_GAMES`` if set, else 3 under the ``ci`` profile (27 games, about
35 s of CPU) and 2 in a developer's run (tests/depth.py); raise it for a deeper audit.
"""

from __future__ import annotations

import json
import os
import random
import re
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

import pytest
from django.test import Client

from games import services
from games.engines import KINDS
from games.models import Event, Game
from history.export import verify
from tests.depth import depth
from tests.games.leak_kit import with_guest

from .conftest import client_for, play

pytestmark = pytest.mark.django_db

GAMES = int(os.environ.get("REPLAY_AUDIT_GAMES") or depth(default=2, ci=3))
ENDS = ("finished", "abandoned", "ended")
CARD = re.compile(r"^(?:10|[A2-9TJQK])[SHDC]$")
CARD_IN_TEXT = re.compile(r"(?<![0-9])(?:10|[A2-9TJQK])[SHDC](?![A-Za-z0-9])")
#: Keys of a view that hold earlier rounds' public results (checked as round 0's: the public
#: cards of any round may appear there) -- everything else in a frame is of its own round.
HISTORY_KEYS = {"last_hand", "history", "cut_for_deal"}


def cards_in(obj: Any, skip: frozenset[str] | set[str] = frozenset()) -> set[str]:
    """Every card-shaped string in a JSON value (dict keys in ``skip`` left out)."""
    out: set[str] = set()
    stack = [obj]
    while stack:
        x = stack.pop()
        if isinstance(x, dict):
            stack.extend(v for k, v in x.items() if k not in skip)
        elif isinstance(x, list):
            stack.extend(x)
        elif isinstance(x, str) and CARD.match(x):
            out.add(x)
    return out


def card_lists(obj: Any) -> list[list[str]]:
    """Every list in a JSON value made only of cards."""
    out = []
    stack = [obj]
    while stack:
        x = stack.pop()
        if isinstance(x, dict):
            stack.extend(x.values())
        elif isinstance(x, list):
            if x and all(isinstance(c, str) and CARD.match(c) for c in x):
                out.append(x)
            stack.extend(x)
    return out


# -- the tracker ------------------------------------------------------------------------------
@dataclass
class Knowledge:
    """What the rules let each reader know of one stored game, from its unredacted events."""

    kind: str
    seats: int
    seed: str
    public: dict[int, set[str]] = field(default_factory=lambda: defaultdict(set))
    own: dict[tuple[int, int], set[str]] = field(default_factory=lambda: defaultdict(set))
    revealed: set[int] = field(default_factory=set)
    round_of: dict[int, int] = field(default_factory=dict)  # event seq -> round (0: none)
    decks: list[list[str]] = field(default_factory=list)
    six: dict[tuple[int, int], set[str]] = field(default_factory=dict)  # Cribbage
    crib_cards: dict[tuple[int, int], set[str]] = field(default_factory=dict)  # Cribbage
    memo_seat: dict[int, int] = field(default_factory=dict)  # Triple Crown: round -> DS seat

    @classmethod
    def of(cls, game: Game) -> Knowledge:
        k = cls(game.kind, game.seats.count(), game.seed)
        end = {"crisp": "reveal", "cribbage": "hand_over", "triple_crown": "hand_over"}[game.kind]
        rows = Event.objects.filter(game=game).select_related("round").order_by("seq")
        dealt: dict[int, list[list[str]]] = {}
        for e in rows:
            r = e.round.number if e.round is not None else 0
            k.round_of[e.seq] = r
            if e.origin != Event.Origin.ENGINE:
                continue
            d, t = e.data, e.type
            if t == "round_dealt":
                k.decks.append(list(d["deck"]))
                if "hands" in d:
                    dealt[r] = [list(h) for h in d["hands"]]
            if t == end:
                k.revealed.add(r)
            getattr(k, f"_{game.kind}")(r, t, d)
        for r, hands in dealt.items():
            for s, hand in enumerate(hands):
                k.own[(s, r)] |= set(hand)  # a seat sees its own deal (Cribbage, Triple Crown)
                if game.kind == "cribbage":
                    k.six[(s, r)] = set(hand)
                elif r in k.revealed:
                    k.public[r] |= set(hand)  # T20: the reveal makes the whole hand public
        return k

    def _crisp(self, r: int, t: str, d: dict[str, Any]) -> None:
        face_up = ("discard", "king", "king_discarded", "jack", "queen", "timeout")
        if t in face_up and d.get("card"):
            self.public[r].add(d["card"])  # face up on the pile (R21)
        if t == "swap":
            self.public[r].add(d["card_out"])
        elif t == "draw":
            if d["source"] == "pile":
                self.public[r].add(d["card"])
            self.own[(d["seat"], r)].add(d["card"])  # R5: its drawer sees it
        elif t == "look":
            self.own[(d["seat"], r)] |= {d["left"], d["right"]}
        elif t == "jack":
            self.own[(d["seat"], r)].add(d["centre"])
        elif t == "queen":
            if d["place"] != "centre":
                self.own[(d["seat"], r)].add(d["received"])
            if d["target_place"] != "centre":
                self.own[(d["target_seat"], r)].add(d["given"])
        elif t == "reveal":
            self.public[r] |= {c for hand in d["hands"] for c in hand}  # R4: at the reveal

    def _cribbage(self, r: int, t: str, d: dict[str, Any]) -> None:
        if t == "cut_for_deal":
            self.public[0] |= {c for pair in d["cuts"] for c in pair}
        elif t in ("starter_cut", "his_heels", "play"):
            self.public[r].add(d["card"])
        elif t == "show":
            self.public[r] |= set(d["cards"]) | {d["starter"]}
        elif t == "laid_away":
            self.crib_cards[(d["seat"], r)] = set(d["cards"])
            self.own[(d["seat"], r)] |= set(d["cards"])
        elif t == "hand_over":  # C30g: the last hand's cards and the crib, at its end
            for hand in d["hands"]:
                self.public[r] |= set(hand or [])
            self.public[r] |= set(d["crib"] or [])

    def _triple_crown(self, r: int, t: str, d: dict[str, Any]) -> None:
        if t == "card_played":
            self.public[r].add(d["card"])
        elif t == "declared":
            self.memo_seat[r] = d["seat"]

    # -- what a reader may be shown ----------------------------------------------------------
    def allowed(self, r: int, seat: int | None) -> set[str]:
        """Cards of round ``r`` a reader may see: the public ones, plus ``seat``'s own."""
        out = set(self.public[r]) | self.public[0]
        if seat is not None:
            out |= self.own[(seat, r)]
        return out

    def problems(self, body: Any, round_no: int, seat: int | None, where: str) -> list[str]:
        """What ``body`` (one frame's state or event, of round ``round_no``) shows that a
        reader knowing what ``seat`` knew (None: only what is public) may not see."""
        out = []
        current = cards_in(body, HISTORY_KEYS)
        leaked = current - self.allowed(round_no, seat)
        if leaked:
            out.append(f"{where}: round {round_no} never-revealed cards {sorted(leaked)}")
        past = cards_in({k: v for k, v in body.items() if k in HISTORY_KEYS})
        everything = set().union(*self.public.values()) if self.public else set()
        if past - everything - (self.own_any(seat) if seat is not None else set()):
            out.append(f"{where}: history shows {sorted(past - everything)}")
        out += self.secret_for_good(body, seat, where)
        return out

    @property
    def unrevealed(self) -> bool:
        """The game stopped in a round that never reached its end."""
        return max(self.round_of.values(), default=0) not in self.revealed | {0}

    def own_any(self, seat: int) -> set[str]:
        return set().union(*(v for (s, _r), v in self.own.items() if s == seat))

    def secret_for_good(self, body: Any, seat: int | None, where: str) -> list[str]:
        """Deck orders and the seed, for everyone; Cribbage's deals and crib cards, for all
        but their own seat; Triple Crown's roles and memo of a hand never revealed."""
        out = []
        text = json.dumps(body)
        if self.seed and self.seed in text:
            out.append(f"{where}: the seed")
        decks = [d for d in self.decks if d]
        for lst in card_lists(body):
            if any(lst == d or (len(lst) > 13 and lst == d[-len(lst) :]) for d in decks):
                out.append(f"{where}: a deck order")
            for (s, r), six in self.six.items():
                if s != seat and len(lst) == 6 and set(lst) == six:
                    out.append(f"{where}: seat {s}'s six dealt cards of hand {r}")
        stack = [body]
        while stack:
            x = stack.pop()
            if isinstance(x, dict):
                if x.get("deck") not in (None, [], 0) and isinstance(x.get("deck"), list):
                    out.append(f"{where}: a deck")
                if self.kind == "cribbage":
                    out += self._crib_secret(x, seat, where)
                stack.extend(x.values())
            elif isinstance(x, list):
                stack.extend(x)
        return out

    def _crib_secret(self, x: dict[str, Any], seat: int | None, where: str) -> list[str]:
        out = []
        if x.get("type") == "laid_away":
            d = x.get("data", {})
            if d.get("cards") is not None and d.get("seat") != seat:
                out.append(f"{where}: seat {d.get('seat')}'s crib cards {d['cards']}")
        you = x.get("you")
        if isinstance(you, dict) and you.get("discards") and x.get("seat") != seat:
            out.append(f"{where}: another seat's crib cards {you['discards']}")
        return out

    def role_problems(self, state: Any, round_no: int, seat: int | None, where: str) -> list[str]:
        """Triple Crown: a hand never revealed shows no role and no memo but the reader's own."""
        if self.kind != "triple_crown" or round_no in self.revealed or not isinstance(state, dict):
            return []
        out = []
        roles = state.get("roles")
        if isinstance(roles, list) and any(v is not None for i, v in enumerate(roles) if i != seat):
            out.append(f"{where}: roles {roles} of hand {round_no}, never revealed")
        if state.get("memo") is not None and self.memo_seat.get(round_no) != seat:
            out.append(f"{where}: the memo of hand {round_no}, never revealed")
        you = state.get("you")
        if isinstance(you, dict) and state.get("seat") != seat and you.get("role"):
            out.append(f"{where}: seat {state.get('seat')}'s role")
        return out

    def memo_event_problems(self, event: dict[str, Any], seat: int | None, where: str) -> list[str]:
        r = self.round_of.get(event["seq"], 0)
        if self.kind != "triple_crown" or r in self.revealed or event["type"] != "declared":
            return []
        if event["data"].get("memo") is not None and event["data"].get("seat") != seat:
            return [f"{where}: the memo of hand {r}, never revealed"]
        return []


# -- driving games ----------------------------------------------------------------------------
def a_game(kind: str, end: str, i: int, users, make_user, start_game, fake_clock, staff) -> Game:
    """A random game of ``kind`` ended the ``end`` way."""
    rng = random.Random(f"{kind}-{end}-{i}")
    users = with_guest(users, random.Random(f"guest-{i}"))  # a guest at seat 0 or 1 (issue 24)
    n = {"crisp": 2 + i % 3, "cribbage": 2, "triple_crown": 4}[kind]
    extra: dict[str, Any] = {}
    timers: dict[str, int] = {}
    if kind == "crisp":
        extra = {"draw_seconds": 30, "pile_draw": bool(i % 2)}
        timers = {"target_score": 25 if end == "finished" else 150}
    elif kind == "cribbage":  # short games to finish, the real target to stop mid-game
        timers = {"target_score": rng.choice([31, 61]) if end == "finished" else 121}
    else:
        timers = {"target_score": 4 if end == "finished" else 15}
    g = start_game(users[:n], seed=f"audit-{kind}-{end}-{i}", kind=kind, timers=timers, **extra)
    steps = 3000 if end == "finished" else rng.randint(4, 70)
    g = play(g, fake_clock, rng, steps=steps)
    if g.status == Game.Status.PLAYING:
        if end == "abandoned":
            services.game_abandon(game=g, user=rng.choice([users[0], staff]))
        elif end == "ended":
            services.game_end_now(game=g, user=staff)
        g.refresh_from_db()
    assert g.status in (Game.Status.FINISHED, Game.Status.ABANDONED)
    return g


def audit(
    game: Game, users, outsider, staff, know: Knowledge | None = None
) -> tuple[list[str], dict[str, int]]:
    """Open every view of ``game`` as every reader; every problem found, and coverage counts.

    Every answer is checked, but an answer byte for byte the same as one already checked for
    the same reader's knowledge (the full view opened by four readers, a seat's view by its
    player and by staff, the same export downloaded by four) is not checked again: the check
    is a function of the body and the knowledge alone, so its problems would be the same."""
    know = know if know is not None else Knowledge.of(game)
    checked: dict[tuple[bytes, int | None], tuple[list[str], int]] = {}
    seats = {s.number: s.user for s in game.seats.all()}
    base = f"/api/v1/games/{game.pk}/replay/"
    # "anonymous": no account at all (issue 24: watching needs none); None authenticates nobody.
    readers: dict[str, Any] = {"outsider": outsider, "staff": staff, "anonymous": None}
    problems: list[str] = []
    seen: dict[str, int] = defaultdict(int)

    def check_frames(body: dict[str, Any], seat: int | None, where: str) -> None:
        for f in body["frames"]:
            at = f"{where} v{f['version']}"
            state = f["state"]
            if isinstance(state, dict):
                rnd = state.get("round", 0) or 0
                problems.extend(know.problems(state, rnd, seat, at))
                problems.extend(know.role_problems(state, rnd, seat, at))
            for key in ("events", "events_later"):
                for e in f.get(key) or []:
                    r = know.round_of.get(e["seq"], 0)
                    problems.extend(know.problems(e, r, seat, f"{at} {e['type']}"))
                    problems.extend(know.memo_event_problems(e, seat, f"{at} {e['type']}"))
            seen["frames"] += 1

    def open_view(reader: str, user: Any, params: dict[str, Any], seat: int | None) -> None:
        """``seat``: whose private knowledge the reader may be shown (None: only the public)."""
        r = client_for(user).get(base, params)
        where = f"game {game.pk} ({game.kind}, {game.status}) {params} as {reader}"
        if r.status_code == 403 and r.json().get("code") == "not_your_seat":
            seen["refused"] += 1
            return
        if r.status_code != 200:
            problems.append(f"{where}: {r.status_code} {r.content[:200]!r}")
            return
        seen["served"] += 1
        key = (r.content, seat)
        if key not in checked:
            before, frames = len(problems), seen["frames"]
            check_frames(r.json(), seat, where)
            checked[key] = (problems[before:], seen["frames"] - frames)
        else:  # the same answer, already checked for this knowledge: the same problems
            found, frames = checked[key]
            problems.extend(f"{p} (again as {reader})" for p in found)
            seen["frames"] += frames

    for s, user in seats.items():
        readers[f"seat {s}'s player"] = user
    for reader, user in readers.items():
        mine = next((s for s, u in seats.items() if u.pk == getattr(user, "pk", None)), None)
        # The full and spectator views do not depend on the reader: opened by a few.
        few = reader in ("outsider", "staff", "seat 0's player", "anonymous")
        if few:
            open_view(reader, user, {"view": "full"}, None)
        if reader in ("outsider", "anonymous"):
            open_view(reader, user, {"view": "spectator"}, None)
        for s in seats:
            # The seat's own player, and staff, may be shown what seat s saw; anyone else,
            # only what is public.
            entitled = s if (mine == s or reader == "staff") else None
            open_view(reader, user, {"view": "seat", "seat": s}, entitled)
        if not few:
            continue
        # Exports: the JSON's events, and the text notation (the same text as the JSON's).
        export = f"/api/v1/games/{game.pk}/export/"
        answer = client_for(user).get(export)
        assert answer.status_code == 200, answer.content[:200]
        doc = answer.json()
        if (answer.content, None) not in checked:
            before = len(problems)
            for e in doc["events"]:
                r = know.round_of.get(e["seq"], 0)
                w = f"game {game.pk} export as {reader} {e['type']}"
                problems.extend(know.problems(e, r, None, w))
                problems.extend(know.memo_event_problems(e, None, w))
            checked[(answer.content, None)] = (problems[before:], 0)
        else:  # the same export as another reader's, already checked
            problems.extend(f"{p} (again as {reader})" for p in checked[(answer.content, None)][0])
        text = client_for(user).get(export, {"output": "text"}).content.decode()
        if text != doc["notation"]:
            problems.append(f"game {game.pk}: the text notation is not the export's")
        problems.extend(notation_problems(know, text, f"game {game.pk} notation as {reader}"))
        seen["exports"] += 1
        if reader == "staff" and know.unrevealed:
            # A round never revealed is exported in the spectator's forms: the audit export
            # still replays exactly.
            full = client_for(user).get(export, {"audit": "true"}).json()
            report = verify(full)
            if not (report.ok and report.replayed):
                problems.append(f"game {game.pk}: the audit export does not verify: {report}")
    for reader, user in readers.items():
        mine = next((s for s, u in seats.items() if u.pk == getattr(user, "pk", None)), None)
        # The replay page offers a seat's view only to its player and staff.
        page = Client()
        if user is not None:
            page.force_login(user)
        answer = page.get(f"/games/{game.pk}/replay/")
        if answer.status_code != 200:
            problems.append(f"game {game.pk} page as {reader}: {answer.status_code}")
        html = answer.content.decode()
        offered = {int(n) for n in re.findall(r'value="seat:(\d+)"', html)}
        expected = set(seats) if reader == "staff" else ({mine} if mine is not None else set())
        if offered != expected:
            problems.append(f"game {game.pk} page as {reader} offers seats {sorted(offered)}")
    return problems, seen


def notation_problems(know: Knowledge, text: str, where: str) -> list[str]:
    """The text, round by round (``Round N``/``Hand N`` headers): only public cards, and in a
    Triple Crown hand never revealed, no memo."""
    out = []
    r = 0
    for line in text.splitlines()[2:]:  # the title and the legend
        m = re.match(r"^(?:Round|Hand) (\d+),", line)
        if m:
            r = int(m.group(1))
        # Seats (P2) and a Queen's target place (>P2C: seat 2's centre) are not cards; a
        # pile draw (P2C: the 2 of clubs) is.
        line = re.sub(r">P\d[LCR]", ">", line)
        line = re.sub(r"\bP\d\b", "", line)
        leaked = set(CARD_IN_TEXT.findall(line)) - know.allowed(r, None)
        if leaked:
            out.append(f"{where}: round {r} line {line!r} shows {sorted(leaked)}")
        if (
            know.kind == "triple_crown"
            and r not in know.revealed
            and re.search(r"memo (high|low)", line)
        ):
            out.append(f"{where}: hand {r} memo in {line!r}")
    return out


@pytest.mark.parametrize("end", ENDS)
@pytest.mark.parametrize("kind", list(KINDS))
def test_no_replay_view_leaks(kind, end, users, make_user, start_game, fake_clock, staff):
    outsider = make_user()
    problems: list[str] = []
    totals: dict[str, int] = defaultdict(int)
    ends: dict[str, int] = defaultdict(int)
    unrevealed = 0
    for i in range(GAMES):
        g = a_game(kind, end, i, users, make_user, start_game, fake_clock, staff)
        lobby = set(Event.objects.filter(game=g, origin="lobby").values_list("type", flat=True))
        ends[
            {"game_abandoned": "abandoned", "game_ended": "ended"}.get(
                next(iter(lobby & {"game_abandoned", "game_ended"}), ""), "finished"
            )
        ] += 1
        know = Knowledge.of(g)
        unrevealed += know.unrevealed
        found, seen = audit(g, users, outsider, staff, know)
        problems += found
        for k, v in seen.items():
            totals[k] += v
    assert not problems, f"{len(problems)} leaks, e.g.:\n" + "\n".join(problems[:12])
    # Not vacuous: views were served and refused, frames were read, and the games ended the
    # intended way (an abandoned or ended game mostly mid-round: its last round never revealed).
    assert totals["served"] and totals["refused"] and totals["frames"] and totals["exports"]
    assert ends[end] >= max(1, GAMES * 3 // 4), dict(ends)
    if end != "finished":
        assert unrevealed >= max(1, GAMES // 2), "too few games stopped in the middle of a round"
