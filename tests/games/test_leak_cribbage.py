"""Cribbage: no REST response carries a card its receiver may not see at that moment (C30).

Random games are played through the API (random legal moves from the legal-actions endpoint of
both seats, random clock jumps across the move clock's boundary, timers fired and swept at
random). After every step both seats and a spectator fetch the state, their legal actions and
the event log, and every card code anywhere in any response -- values, keys, and words inside
text -- is checked against ``Knowledge``: a tracker written here from the unredacted truth
(``Event.data`` and ``Game.state``). It never calls the engine's view code.

What a receiver may see (rules/cribbage C30), as the tracker decides it:

* the cut for the deal: public (a);
* your six cards are yours (b); your two crib cards stay yours (c) -- the other's hand and both
  sets of crib discards are hidden, and a lay-away tells others only *that* it happened;
* the starter is public once cut (d); the deck -- the stock, its order -- never, to anyone;
* a played card is public from its play (e);
* at the show each hand is public with the starter; the crib when it is counted (f);
* at the end of a hand (``hand_over``) and of the game, every card of that hand but the stock
  (g); a spectator sees exactly the public part (h).

Each event is judged by what *that event* may say (a lay-away names its cards to its own seat
only, ever; a deal shows a seat its own six cards only), so a payload that attributes crib cards
to the other seat fails even after the crib has been shown.
"""

from __future__ import annotations

import random
import re
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

import pytest

from games import services
from games.engines import cribbage
from games.models import Event, Game

from .conftest import client_for

#: A card code as a whole string or as a word inside a text (a reason, a log line).
CARD = re.compile(r"\b[A2-9TJQK][SHDC]\b")


def cards_in(value: Any) -> set[str]:
    """Every card code anywhere in a JSON value: values, keys, and words inside strings."""
    found: set[str] = set()
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            found.update(CARD.findall(item))
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list | tuple):
            stack.extend(item)
    return found


@dataclass
class Row:
    """One stored event, unredacted."""

    seq: int
    version: int
    type: str
    data: dict[str, Any]
    engine: bool


@dataclass
class Knowledge:
    """Who may see which card, from the unredacted record of one cribbage game.

    ``absorb`` takes new ``Event`` rows (in ``seq`` order); ``event_allowed`` says what one
    event may show a receiver; ``state_allowed`` what a state of a given version may show.
    """

    rows: list[Row] = field(default_factory=list)
    last_seq: int = 0
    #: per event seq: (public cards, {seat: private cards})
    by_event: dict[int, tuple[set[str], dict[int, set[str]]]] = field(default_factory=dict)
    dealt: dict[int, list[list[str]]] = field(default_factory=dict)
    discards: dict[int, dict[int, list[str]]] = field(default_factory=lambda: defaultdict(dict))
    starter: dict[int, str] = field(default_factory=dict)
    played: dict[int, list[str]] = field(default_factory=lambda: defaultdict(list))
    cuts: set[str] = field(default_factory=set)

    # --- the truth --------------------------------------------------------------------------
    def kept(self, rnd: int, seat: int) -> set[str]:
        return set(self.dealt[rnd][seat]) - set(self.discards[rnd].get(seat, []))

    def crib(self, rnd: int) -> set[str]:
        return {c for cards in self.discards[rnd].values() for c in cards}

    def whole_hand(self, rnd: int) -> set[str]:
        """Every card of hand ``rnd`` but the stock: both hands, the crib, the starter."""
        out = set(self.dealt[rnd][0]) | set(self.dealt[rnd][1])
        if rnd in self.starter:
            out.add(self.starter[rnd])
        return out

    def absorb(self, events: Any) -> Knowledge:
        for e in events:
            if e.seq <= self.last_seq:
                continue
            self.last_seq = e.seq
            row = Row(e.seq, e.version, e.type, e.data, e.origin == Event.Origin.ENGINE)
            self.rows.append(row)
            public: set[str] = set()
            private: dict[int, set[str]] = {}
            d, t = row.data, row.type
            rnd = d.get("round")
            if not row.engine:
                pass  # lobby events never carry a card
            elif t == "cut_for_deal":
                self.cuts |= {c for pair in d["cuts"] for c in pair}
                public = set(self.cuts)
            elif t == "round_dealt":
                self.dealt[rnd] = [list(h) for h in d["hands"]]
                private = {s: set(h) for s, h in enumerate(d["hands"])}
            elif t == "laid_away":
                self.discards[rnd][d["seat"]] = list(d["cards"])
                private = {d["seat"]: set(d["cards"])}
            elif t in ("starter_cut", "his_heels"):
                self.starter[rnd] = d["card"]
                public = {d["card"]}
            elif t == "play":
                self.played[rnd].append(d["card"])
                public = set(self.played[rnd])
            elif t == "show":
                cards = self.crib(rnd) if d["what"] == "crib" else self.kept(rnd, d["seat"])
                public = cards | {self.starter[rnd]}
            elif t == "hand_over":
                public = self.whole_hand(rnd)
            elif t not in ("turn", "go", "last_card", "count_over", "game_over"):
                raise AssertionError(f"the tracker has no rule for event type {t!r}")
            self.by_event[row.seq] = (public, private)
        return self

    def refresh(self, game: Game) -> Knowledge:
        return self.absorb(Event.objects.filter(game=game, seq__gt=self.last_seq).order_by("seq"))

    # --- what a receiver may see -----------------------------------------------------------
    def event_allowed(self, seq: int, seat: int | None) -> set[str]:
        public, private = self.by_event[seq]
        return public | (private.get(seat, set()) if seat is not None else set())

    def state_allowed(self, seat: int | None, version: int | None = None) -> set[str]:
        """What a state of ``version`` (default: the latest) may show ``seat``."""
        rows = [r for r in self.rows if r.engine and (version is None or r.version <= version)]
        rnd = max((r.data["round"] for r in rows if r.type == "round_dealt"), default=None)
        allowed = set(self.cuts)
        if rnd is None:
            return allowed
        finished = any(r.type == "game_over" for r in rows)
        mine = rnd in self.dealt and seat is not None
        if mine:
            allowed |= set(self.dealt[rnd][seat])
        for r in rows:
            if r.data.get("round") != rnd:
                continue
            if r.type in ("starter_cut", "play"):
                allowed.add(r.data["card"])
            if r.type == "show":
                allowed |= self.event_allowed(r.seq, None)
        if finished:
            allowed |= self.whole_hand(rnd)
        if rnd - 1 in self.dealt:
            allowed |= self.whole_hand(rnd - 1)  # the previous hand's show (last_hand)
        return allowed

    def check_state(
        self,
        body: Any,
        seat: int | None,
        where: str,
        version: int | None = None,
        extra: set[str] | frozenset[str] = frozenset(),
    ) -> None:
        leaked = cards_in(body) - self.state_allowed(seat, version) - extra
        assert not leaked, f"{where}: seat {seat} was sent {sorted(leaked)}"

    def check_events(self, events: list[dict[str, Any]], seat: int | None, where: str) -> None:
        for e in events:
            leaked = cards_in(e) - self.event_allowed(e["seq"], seat)
            assert not leaked, f"{where}: seat {seat} was sent {sorted(leaked)} in {e}"


def due_hand(game: Game, seat: int, now: int) -> set[str]:
    """The seat's own unplayed cards once every deadline due at ``now`` has run (the truth:
    the engine's rules on the stored snapshot, not its view)."""
    game.refresh_from_db()
    state, _ = cribbage.advance(cribbage.GameState.from_json(game.state), now)
    return set(state.round.hands[seat])


def play_and_check(players, spectator, fake_clock, rng: random.Random, steps: int) -> dict:
    """One random game through the API; returns what was checked, for the coverage asserts."""
    move = rng.choice([None, 30])
    game = services.game_create(host=players[0], kind="cribbage", settings={"move_seconds": move})
    services.game_join(game=game, user=players[1])
    target = rng.choice([31, 61, 121])
    services.game_start(
        game=game,
        user=players[0],
        seed=f"crib-leak-{rng.random()}",
        timers={"target_score": target},
    )
    clients = [(0, client_for(players[0])), (1, client_for(players[1]))]
    clients.append((None, client_for(spectator)))
    base = f"/api/v1/games/{game.pk}/"
    jumps = [0, 1, 500, 5000, 29_999, 30_000, 30_001, 31_000, 61_000]
    seen: dict[Any, int] = {0: 0, 1: 0, None: 0}
    know = Knowledge().refresh(game)
    checked = 0
    for step in range(steps):
        game.refresh_from_db()
        if game.status != "playing":
            break
        fake_clock.advance(rng.choice(jumps) if move else rng.choice([0, 1000]))
        roll = rng.random()
        if roll < 0.1:
            services.game_sweep()
        elif roll < 0.16 and game.deadlines:
            services.game_fire_deadline(game_id=game.pk, key=rng.choice(game.deadlines)["key"])
        else:
            options = []
            for seat, c in clients[:2]:
                body = c.get(base + "actions/").json()
                # Legal actions are computed at the server's now: a deadline already due is
                # taken into account before it is stored (a timeout may have dealt anew), so
                # the seat may see its own hand as it will be once the due deadlines run.
                ahead = due_hand(game, seat, fake_clock.ms)
                know.refresh(game).check_state(body, seat, "legal actions", extra=ahead)
                options += [(seat, c, a) for a in body["actions"]]
            if rng.random() < 0.08:
                # A move that cannot be: a card the mover does not hold, or out of turn.
                seat, c = rng.choice(clients[:2])
                bad = {"type": "play", "card": rng.choice(["AS", "KH", "5D", "TC"])}
                r = c.post(base + "actions/", {"action": bad}, format="json")
                know.refresh(game)
                if r.status_code != 200:
                    know.check_state(r.json(), seat, "refusal")
                else:
                    know.check_state(r.json()["state"], seat, "act state", r.json()["version"])
                    know.check_events(r.json()["events"], seat, "act events")
            elif options:
                seat, c, action = rng.choice(options)
                r = c.post(base + "actions/", {"action": action}, format="json")
                know.refresh(game)
                body = r.json()
                if r.status_code == 200:
                    know.check_state(body["state"], seat, "act state", body["version"])
                    know.check_events(body["events"], seat, "act events")
                else:
                    know.check_state(body, seat, "act refusal")
        know.refresh(game)
        for seat, c in clients:
            know.check_state(c.get(base + "state/").json(), seat, "state")
            since = 0 if step % 12 == 0 else seen[seat]
            events = c.get(base + "events/", {"since": since}).json()["events"]
            know.check_events(events, seat, "events")
            if events:
                seen[seat] = events[-1]["seq"]
            checked += 2
    game.refresh_from_db()
    types = {r.type for r in know.rows}
    return {"checked": checked, "types": types, "status": game.status}


@pytest.mark.parametrize("seed", range(6))
def test_no_cribbage_response_leaks_a_card(users, make_user, fake_clock, seed):
    rng = random.Random(seed)
    result = play_and_check(users[:2], make_user(), fake_clock, rng, steps=90)
    assert result["checked"] > 60
    # Every kind of moment was reached: the lay-away, the play, counts ending.
    assert {"laid_away", "starter_cut", "play", "count_over"} <= result["types"]


def test_random_games_reach_the_show_and_the_end(users, make_user, fake_clock):
    """The redaction checks above cover the moments that matter: shows, hand ends, game end."""
    rng = random.Random(1234)
    types: set[str] = set()
    finished = 0
    for _ in range(2):
        result = play_and_check(users[:2], make_user(), fake_clock, rng, steps=140)
        types |= result["types"]
        finished += result["status"] == "finished"
    assert {"show", "hand_over", "go", "last_card"} <= types
    assert finished >= 1


def _started(users, start_game) -> Game:
    g = start_game(users[:2], kind="cribbage", seed="tracker")
    return g


def test_the_tracker_catches_leaks(users, start_game):
    """Not vacuous: unredacted events and states fail it, the engine's own public facts pass."""
    g = _started(users, start_game)
    know = Knowledge().refresh(g)
    dealt = Event.objects.get(game=g, type="round_dealt")
    raw = {"seq": dealt.seq, "type": dealt.type, "data": dealt.data}
    # The raw deal: both hands and the deck.
    with pytest.raises(AssertionError):
        know.check_events([raw], 0, "raw deal")
    with pytest.raises(AssertionError):
        know.check_events([raw], None, "raw deal")
    # A seat may see its own six cards in the deal, but not the other's.
    mine = {**raw, "data": {**dealt.data, "deck": None, "hands": [dealt.data["hands"][0], None]}}
    know.check_events([mine], 0, "own hand")
    with pytest.raises(AssertionError):
        know.check_events([mine], 1, "the other's hand")
    # The stored snapshot holds the deck: no receiver may get it.
    for seat in (0, 1, None):
        with pytest.raises(AssertionError):
            know.check_state(g.state, seat, "raw state")
    # A card mentioned inside a text is caught too.
    other = dealt.data["hands"][1][0]
    with pytest.raises(AssertionError):
        know.check_state({"detail": f"you cannot beat {other} there"}, 0, "text")


def test_the_tracker_keeps_a_lay_away_to_its_own_seat(users, start_game):
    """A lay-away names its cards to its own seat only, even once the crib has been shown."""
    g = _started(users, start_game)
    hands = Event.objects.get(game=g, type="round_dealt").data["hands"]
    for seat, user in enumerate(users[:2]):
        services.game_act(
            game=g,
            user=user,
            action={"type": "lay_away", "cards": hands[seat][:2]},
            expected_version=None,
        )
    know = Knowledge().refresh(g)
    laid = Event.objects.filter(game=g, type="laid_away").order_by("seq")
    assert laid.count() == 2
    first = laid[0]
    raw = {"seq": first.seq, "type": first.type, "data": first.data}
    know.check_events([raw], first.data["seat"], "own lay-away")
    with pytest.raises(AssertionError):
        know.check_events([raw], 1 - first.data["seat"], "the other's lay-away")
    with pytest.raises(AssertionError):
        know.check_events([raw], None, "a spectator")
    # The starter is public now; the other's kept cards are not.
    starter = Event.objects.get(game=g, type="starter_cut").data["card"]
    know.check_state({"starter": starter}, None, "starter")
    kept_other = sorted(set(hands[1]) - set(hands[1][:2]))
    with pytest.raises(AssertionError):
        know.check_state({"hand": kept_other}, 0, "the other's hand")
