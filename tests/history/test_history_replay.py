"""Replays: a seat's frames are exactly what it was shown live, and never more; the full replay
ends on the stored state; a game in progress has none; private games stay private.

The live side is recorded while random games are played through the service layer: after every
version, each seat's and a spectator's live payload (``selectors.game_payload_for_seat`` at that
instant) and the events the live log gave them for that version (``events_since`` while it was
the current version).  The replay is built afterwards from the engine-call log alone.  A
knowledge tracker written here from the unredacted truth (``Event.data`` and the stored states
per version, never the engine's view code) checks that no frame carries a card its seat could
not see at that version.

The module's random games are played once (``pool``: 6 Crisp games of 2 to 5 seats, 4 of every
other kind) and every check below reads them: each check runs over at least as many games as
when each test played its own (issue 20: 14 games instead of 41).  The live side is recorded
for every version of every game, so "a seat's replay is exactly what it was shown live" and
"never more than its tracker allows" are both checked on every game and every viewer.
"""

from __future__ import annotations

import json
import random
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest

from games import selectors, services
from games.engines import KINDS, engine_for
from games.errors import ServiceError
from games.models import Event, Game
from history import replay
from history.hooks import hook
from tests.games.conftest import FakeClock, new_game, new_user

from .conftest import client_for, play, playing, seats_for, shared_db

# One worker plays the module's games (``pool``) and runs every test that reads them.
pytestmark = [pytest.mark.django_db, pytest.mark.xdist_group("history_replay")]

FACE_UP = ("discard", "king", "king_discarded", "jack", "queen", "timeout")


def cards_in(obj: Any) -> set[str]:
    import re

    card = re.compile(r"^[A2-9TJQK][SHDC]$")
    out: set[str] = set()
    stack = [obj]
    while stack:
        x = stack.pop()
        if isinstance(x, dict):
            stack.extend(x.values())
        elif isinstance(x, list):
            stack.extend(x)
        elif isinstance(x, str) and card.match(x):
            out.add(x)
    return out


class Recorder:
    """What every seat (and a spectator) was shown live, version by version, plus the truth."""

    def __init__(self, seats: int) -> None:
        self.seats = seats
        self.states: dict[int, dict[int | None, Any]] = {}
        self.events: dict[int, dict[int | None, list[Any]]] = {}
        self.truth: dict[int, Any] = {}
        self.last_seq = 0

    def __call__(self, game: Game) -> None:
        v = game.version
        self.truth[v] = game.state
        self.states[v] = {}
        self.events[v] = {}
        rows = list(Event.objects.filter(game=game, seq__gt=self.last_seq).order_by("seq"))
        for seat in [None, *range(self.seats)]:
            self.states[v][seat] = selectors.game_payload_for_seat(game=game, seat=seat)["state"]
            self.events[v][seat] = [
                selectors.event_payload(event=e, seat=seat, kind=game.kind)
                for e in rows
                if e.version == v
            ]
        self.last_seq = game.last_seq


def knowledge(game: Game, truth: dict[int, Any]) -> dict[int, dict[int | None, set[str]]]:
    """Per version and seat, the cards it may have been shown by then (test_leak's rules)."""
    public: dict[int, set[str]] = defaultdict(set)  # by round
    out: dict[int, dict[int | None, set[str]]] = {}
    rows = list(Event.objects.filter(game=game).select_related("round").order_by("seq"))
    by_version: dict[int, list[Event]] = defaultdict(list)
    for e in rows:
        by_version[e.version].append(e)
    for v in range(1, game.version + 1):
        fresh: dict[int, set[str]] = defaultdict(set)
        for e in by_version[v]:
            if e.origin != "engine":
                continue
            d, t, r = e.data, e.type, e.round.number
            if t in FACE_UP:
                public[r].add(d["card"])
            elif t == "swap":
                public[r].add(d["card_out"])
            elif t == "draw" and d["source"] == "pile":
                public[r].add(d["card"])
            elif t == "reveal":
                public[r] |= {c for hand in d["hands"] for c in hand}
            if t == "draw":
                fresh[d["seat"]].add(d["card"])
            elif t == "look":
                fresh[d["seat"]] |= {d["left"], d["right"]}
            elif t == "jack":
                fresh[d["seat"]].add(d["centre"])
            elif t == "queen":
                if d["place"] != "centre":
                    fresh[d["seat"]].add(d["received"])
                if d["target_place"] != "centre":
                    fresh[d["target_seat"]].add(d["given"])
        st = truth.get(v)
        allowed: dict[int | None, set[str]] = {}
        base: set[str] = set()
        if st is not None:
            rnd = st["round"]
            # Cards of earlier rounds were all revealed at their reveal (or never shown).
            base = set().union(*(public[r] for r in range(1, rnd["number"] + 1)))
            base |= set(rnd["pile"])
            turn = rnd["turn"]
            if turn is not None and turn["held"] is not None:
                if turn["held_from"] == "pile":
                    base.add(turn["held"])
                else:
                    fresh[turn["seat"]].add(turn["held"])
        allowed[None] = base
        for seat in range(game.seats.count()):
            allowed[seat] = base | fresh[seat]
        out[v] = allowed
    return out


def recorded_game(
    players: list[Any], clock: FakeClock, seed: int, n: int, kind: str = "crisp"
) -> tuple[Game, Recorder]:
    rng = random.Random(seed)
    extra = {"draw_seconds": 30, "pile_draw": bool(seed % 2)} if kind == "crisp" else {}
    g = new_game(players[:n], seed=f"pov-{seed}", kind=kind, **extra)
    rec = Recorder(n)
    g = play(g, clock, rng, observe=rec)
    assert g.status == Game.Status.FINISHED
    return g, rec


#: The module's games, per kind: (seed, seats).  Crisp: 2 to 5 seats, pile draw on odd seeds.
POOL: dict[str, list[tuple[int, int]]] = {
    kind: [(s, 2 + s % 4) for s in range(6)]
    if kind == "crisp"
    else [(50 + s, seats_for(kind, s)) for s in range(4)]
    for kind in KINDS
}
GAMES = [(kind, i) for kind in KINDS for i in range(len(POOL[kind]))]


@dataclass
class Played:
    """One of the module's games, and what each receiver was shown live at every version.

    ``frames(viewer)`` and ``allowed()``: the replay and the tracker of this game, computed
    once for the module (both are read by several checks; the game does not change once
    played, and no check writes to them), instead of once per check."""

    game: Game
    rec: Recorder
    n: int
    _frames: dict[Any, tuple[str, list[dict[str, Any]]]] = field(default_factory=dict)
    _allowed: dict[int, dict[int | None, set[str]]] | None = None

    def frames(self, viewer: Any) -> tuple[str, list[dict[str, Any]]]:
        """``replay.replay_frames`` of the whole game for ``viewer`` (served, frames)."""
        if viewer not in self._frames:
            self._frames[viewer] = replay.replay_frames(game=self.game, viewer=viewer)
        return self._frames[viewer]

    def allowed(self) -> dict[int, dict[int | None, set[str]]]:
        """The kind's knowledge tracker over this game (``KNOWLEDGE``)."""
        if self._allowed is None:
            self._allowed = KNOWLEDGE[self.game.kind](self.game, self.rec.truth)
        return self._allowed


@pytest.fixture(scope="module")
def pool(django_db_setup: None, django_db_blocker: Any) -> Iterator[dict[str, list[Played]]]:
    """Every game of ``POOL``, played to its end once with the live side recorded."""
    with shared_db(django_db_blocker):
        with playing() as clock:
            players = [new_user() for _ in range(8)]
            games = {
                kind: [Played(*recorded_game(players, clock, seed, n, kind), n) for seed, n in pl]
                for kind, pl in POOL.items()
            }
        yield games


@pytest.mark.parametrize(("kind", "i"), GAMES)
def test_every_kinds_seat_replay_is_exactly_what_it_was_shown_live(pool, kind, i):
    """Kind-neutral: each seat's (and a spectator's) frame of every version equals the live
    payload and events it was sent at that version."""
    p = pool[kind][i]
    compared = 0
    for seat in [None, *range(p.n)]:
        served, frames = p.frames(seat)
        assert served == ("spectator" if seat is None else "seat")
        assert [f["version"] for f in frames] == list(range(1, p.game.version + 1))
        for f in frames:
            v = f["version"]
            if v in p.rec.states:  # a version the live side observed (all after the start)
                assert f["state"] == p.rec.states[v][seat], f"v{v} seat {seat} state"
                assert f["events"] == p.rec.events[v][seat], f"v{v} seat {seat} events"
                compared += 1
    assert compared > (p.n + 1) * 10


def test_looks_appear_at_their_moment_and_are_gone_after(users, start_game, fake_clock):
    g = start_game(users[:2], seed="look", draw_seconds=30)
    services.game_act(game=g, user=users[0], action={"type": "look"}, expected_version=g.version)
    g.refresh_from_db()
    look_version = g.version
    g = play(g, fake_clock, random.Random(3))
    _, frames = replay.replay_frames(game=g, viewer=0)
    look = next(e for e in frames[look_version - 1]["events"] if e["type"] == "look")
    assert look["data"]["left"] is not None and look["data"]["right"] is not None
    _, other = replay.replay_frames(game=g, viewer=1)
    look1 = next(e for e in other[look_version - 1]["events"] if e["type"] == "look")
    assert look1["data"]["left"] is None
    # The next frame's state does not carry the looked cards (hands are hidden until reveal).
    assert frames[look_version]["state"]["hands"][0] == [None, None, None]
    # And the seat's log of that version, once the game moved on, had the public form.
    later = next(e for e in frames[look_version - 1]["events_later"] if e["type"] == "look")
    assert later["data"]["left"] is None and later["data"]["right"] is None
    assert "events_later" not in other[look_version - 1]  # nothing private for seat 1 there


@pytest.mark.parametrize("i", range(len(POOL["crisp"])))
def test_full_replay_ends_on_the_stored_state_and_hides_the_deck(pool, i):
    g, rec = pool["crisp"][i].game, pool["crisp"][i].rec
    engine = engine_for(g.kind)
    full = hook(g.kind, "replay")
    served, frames = pool["crisp"][i].frames("full")
    assert served == "full"
    final = engine.GameState.from_json(g.state)
    assert frames[-1]["state"] == full.full_view(final, frames[-1]["at"])
    # Every version's full frame is the full view of the true state stored at that version.
    for f in frames:
        if f["version"] in rec.truth and rec.truth[f["version"]] is not None:
            truth = engine.GameState.from_json(rec.truth[f["version"]])
            assert f["state"] == full.full_view(truth, f["at"])
            assert f["state"]["hands"] == truth.round.hands
    dealt = [e for f in frames for e in f["events"] if e["type"] == "round_dealt"]
    assert dealt and all(e["data"]["deck"] is None for e in dealt)
    assert all("deck" not in f["state"] and "seed" not in f["state"] for f in frames if f["state"])


def test_window_and_at(pool):
    g = pool["crisp"][0].game
    _, all_frames = pool["crisp"][0].frames("full")
    _, window = replay.replay_frames(game=g, viewer="full", start=5, limit=3)
    assert window == all_frames[4:7]


def test_no_replay_while_the_game_is_played(users, start_game, fake_clock, api):
    g = start_game(users[:2])
    with pytest.raises(ServiceError) as info:
        replay.game_for_replay(game_id=g.pk, user=users[0])
    assert (info.value.code, info.value.status) == ("game_in_progress", 409)
    r = api(users[0]).get(f"/api/v1/games/{g.pk}/replay/")
    assert r.status_code == 409 and r.json()["code"] == "game_in_progress"


def test_private_replays_are_for_their_players_and_staff(
    users, start_game, fake_clock, make_user, staff
):
    g = start_game(users[:2], private=True, draw_seconds=30)
    g = play(g, fake_clock, random.Random(1))
    assert replay.game_for_replay(game_id=g.pk, user=users[1]) == g
    assert replay.game_for_replay(game_id=g.pk, user=staff) == g
    with pytest.raises(ServiceError) as info:
        replay.game_for_replay(game_id=g.pk, user=make_user())
    assert info.value.code == "not_found"
    r = client_for(make_user()).get(f"/api/v1/games/{g.pk}/replay/?invite_code={g.invite_code}")
    assert r.status_code == 404


def test_a_game_ended_by_the_admin_replays_with_its_status(users, start_game, fake_clock, staff):
    g = start_game(users[:3], draw_seconds=30)
    rec = Recorder(3)
    g = play(g, fake_clock, random.Random(2), steps=10, observe=rec)
    assert g.status == "playing"
    services.game_end_now(game=g, user=staff)
    g.refresh_from_db()
    rec(g)
    for seat in [None, 0, 1, 2]:
        _, frames = replay.replay_frames(game=g, viewer=seat)
        assert frames[-1]["status"] == "finished"
        assert frames[-1]["state"] == rec.states[g.version][seat]
    _, full = replay.replay_frames(game=g, viewer="full")
    assert full[-1]["state"]["status"] == "finished" and full[-1]["state"]["deadlines"] == []


def test_a_game_without_logged_calls_has_no_replay(finished_game):
    from games.models import EngineCall

    g = finished_game(seed=4)
    EngineCall.objects.filter(game=g).delete()
    with pytest.raises(ServiceError) as info:
        replay.replay_frames(game=g, viewer=0)
    assert info.value.code == "replay_unavailable"


@pytest.mark.parametrize("i", range(len(POOL["crisp"])))
def test_the_full_replay_never_shows_the_deck(pool, i):
    """Crisp's deck stays hidden for good: a full frame shows only cards that have left the
    deck in that round by then (dealt, drawn, on the pile), never one still waiting in it.  A
    version that ends a round and deals the next (a timeout's discard, the reveal, the deal)
    shows the events before its deal against the ended round's deck."""
    from games.engines.crisp import FULL_DECK

    rec = pool["crisp"][i].rec
    _, frames = pool["crisp"][i].frames("full")
    out_so_far: set[str] = set()
    round_no = None
    in_deck: set[str] = set()
    checked = 0
    for f in frames:
        truth = rec.truth.get(f["version"])
        if truth is None:
            continue
        events = f["events"]
        cut = next((k for k, e in enumerate(events) if e["type"] == "round_dealt"), 0)
        ended = [e for e in events[:cut] if e["type"] not in ("reveal", "game_over")]
        assert not cards_in(ended) & in_deck, f"v{f['version']} shows the last round's deck"
        rnd = truth["round"]
        if rnd["number"] != round_no:
            round_no, out_so_far = rnd["number"], set()
        out_so_far |= set(FULL_DECK) - set(rnd["deck"])
        in_deck = set(rnd["deck"]) - out_so_far
        this_round = [e for e in events[cut:] if e["type"] not in ("reveal", "game_over")]
        shown = cards_in(f["state"]) | cards_in(this_round)
        assert not shown & in_deck, f"v{f['version']} shows deck cards {shown & in_deck}"
        checked += 1
    assert checked > 10


# -- Cribbage and Triple Crown: their own knowledge trackers and full replays ------------------
def knowledge_cribbage(game: Game, truth: dict[int, Any]) -> dict[int, dict[int | None, set[str]]]:
    """Per version and seat, the cards C30 lets it have seen by then: its own six dealt cards of
    the hand under way; for everyone the cut for deal, the starter, played and shown cards, the
    last hand's summary (kept hands and crib) -- never the stock, never the other seat's crib
    cards before the crib is shown."""
    public: set[str] = set()
    own: dict[int, set[str]] = {0: set(), 1: set()}
    rows = list(Event.objects.filter(game=game, origin="engine").order_by("seq"))
    by_version: dict[int, list[Event]] = defaultdict(list)
    for e in rows:
        by_version[e.version].append(e)
    out: dict[int, dict[int | None, set[str]]] = {}
    for v in range(1, game.version + 1):
        for e in by_version[v]:
            d, t = e.data, e.type
            if t == "cut_for_deal":
                public |= {c for cut in d["cuts"] for c in cut}
            elif t == "round_dealt":
                own = {s: set(d["hands"][s]) for s in (0, 1)}
            elif t in ("starter_cut", "his_heels", "play"):
                public.add(d["card"])
            elif t == "show":
                public |= {*d["cards"], d["starter"]}
            elif t == "hand_over":
                public |= {c for h in d["hands"] if h for c in h} | set(d["crib"] or ())
        out[v] = {None: set(public), 0: public | own[0], 1: public | own[1]}
    return out


def knowledge_triple_crown(
    game: Game, truth: dict[int, Any]
) -> dict[int, dict[int | None, set[str]]]:
    """Per version and seat, the cards T27 lets it have seen: its own thirteen of the hand
    under way; for everyone every played card and, from the reveal, every unplayed one."""
    public: set[str] = set()
    own: dict[int, set[str]] = defaultdict(set)
    rows = list(Event.objects.filter(game=game, origin="engine").order_by("seq"))
    by_version: dict[int, list[Event]] = defaultdict(list)
    for e in rows:
        by_version[e.version].append(e)
    out: dict[int, dict[int | None, set[str]]] = {}
    for v in range(1, game.version + 1):
        for e in by_version[v]:
            d, t = e.data, e.type
            if t == "round_dealt":
                own = defaultdict(set, {s: set(h) for s, h in enumerate(d["hands"])})
            elif t == "card_played":
                public.add(d["card"])
            elif t == "hand_over":
                public |= {c for h in d["unplayed"] for c in h}
        out[v] = {None: set(public), **{s: public | own[s] for s in range(4)}}
    return out


KNOWLEDGE = {
    "crisp": knowledge,
    "cribbage": knowledge_cribbage,
    "triple_crown": knowledge_triple_crown,
}


def memo_leaks(frame: dict[str, Any], seat: int | None, truth: Any) -> list[str]:
    """Where a Triple Crown frame tells ``seat`` a role or the memo it may not know (T27b, c)."""
    problems = []
    state = frame["state"]
    if state is not None:
        if "roles" in state or "memo" in state:
            problems.append("a roles/memo field")
        you = state.get("you")
        if you is not None and you["memo"] is not None and truth["round"]["ds_seat"] != seat:
            problems.append("you.memo of another seat")
    for e in frame["events"]:
        if e["type"] == "declared" and e["data"]["memo"] is not None and e["data"]["seat"] != seat:
            problems.append("the memo in a declared event")
    return problems


@pytest.mark.parametrize(("kind", "i"), [(k, i) for k, i in GAMES if k in KNOWLEDGE])
def test_a_seats_replay_never_shows_more(pool, kind, i):
    """The kind's own tracker: no seat or spectator frame carries a card (or, in Triple Crown,
    a memo) its receiver could not see at that version -- every version, the lobby's too.
    (That each frame is also what the seat was sent live: the test above, on the same games.)"""
    g, rec, n = pool[kind][i].game, pool[kind][i].rec, pool[kind][i].n
    allowed = pool[kind][i].allowed()
    checked = 0
    for seat in [None, *range(n)]:
        _, frames = pool[kind][i].frames(seat)
        assert [f["version"] for f in frames] == list(range(1, g.version + 1))
        for f in frames:
            v = f["version"]
            leaked = cards_in(f) - allowed[v][seat]
            assert not leaked, f"v{v}: seat {seat} replay shows {leaked}"
            if kind == "triple_crown" and rec.truth.get(v) is not None:
                assert not memo_leaks(f, seat, rec.truth[v]), f"v{v} seat {seat}"
            checked += 1
    assert checked > (10 if kind == "crisp" else 50) * (n + 1)


@pytest.mark.parametrize("kind", list(KNOWLEDGE))
def test_the_trackers_catch_a_full_frame_shown_to_a_seat(pool, kind):
    """Not vacuous: the full replay (every hand) fails the kind's tracker for a seat and a
    spectator, in every game of the module; in Triple Crown a memo, in some game."""
    memo = False
    for p in pool[kind]:
        allowed = p.allowed()
        _, frames = p.frames("full")
        assert any(cards_in(f) - allowed[f["version"]][0] for f in frames)
        assert any(cards_in(f) - allowed[f["version"]][None] for f in frames)
        seen = [f for f in frames if f["version"] in p.rec.truth]
        memo |= any(memo_leaks(f, None, p.rec.truth[f["version"]]) for f in seen)
    assert memo or kind != "triple_crown"


def shown_this_round(frame: dict[str, Any], number: int) -> set[str]:
    """The cards a Cribbage frame shows of hand ``number``: its state without the public
    records of earlier hands (``last_hand``, the cut for deal) and the events of that hand."""
    state = {k: v for k, v in frame["state"].items() if k not in ("last_hand", "cut_for_deal")}
    events = [e for e in frame["events"] if e["data"].get("round") == number]
    return cards_in(state) | cards_in(events)


@pytest.mark.parametrize("i", range(len(POOL["cribbage"])))
def test_cribbage_full_replay_shows_the_hands_but_never_the_stock_nor_who_laid_away_what(pool, i):
    from games.engines.cribbage.views import sorted_crib

    g, rec = pool["cribbage"][i].game, pool["cribbage"][i].rec
    engine, full = engine_for("cribbage"), hook("cribbage", "replay")
    served, frames = pool["cribbage"][i].frames("full")
    assert served == "full"
    assert frames[-1]["state"] == full.full_view(
        engine.GameState.from_json(g.state), frames[-1]["at"]
    )
    filled = one_laid = 0
    for f in frames:
        truth = rec.truth.get(f["version"])
        if truth is None:
            continue
        st = engine.GameState.from_json(truth)
        assert f["state"] == full.full_view(st, f["at"])
        assert "deck" not in f["state"] and "seed" not in f["state"] and "you" not in f["state"]
        rnd = truth["round"]
        # C30d: no card of the stock (nor the starter before its cut), ever.
        stock = set(rnd["deck"][13:]) | (set() if rnd["starter"] else {rnd["deck"][12]})
        shown = shown_this_round(f, rnd["number"])
        assert not shown & stock, f"v{f['version']} shows stock cards {shown & stock}"
        # C30c, CE10: a seat's hand only once it has laid away; the crib only whole.
        laid = [d is not None for d in rnd["discards"]]
        for s in (0, 1):
            assert f["state"]["hands"][s] == (rnd["hands"][s] if laid[s] else None)
        if all(laid):
            assert f["state"]["crib"] == sorted_crib(rnd["discards"])
            filled += 1
        else:
            assert f["state"]["crib"] is None
            for s in (0, 1):
                if laid[s]:
                    one_laid += 1
                    assert not shown & set(rnd["discards"][s]), "one seat's crib cards"
        for e in f["events"]:
            if e["type"] == "laid_away":
                assert e["data"]["cards"] is None
            if e["type"] == "round_dealt":
                assert e["data"]["deck"] is None and e["data"]["hands"] == [None, None]
    assert filled > 20 and one_laid > 0
    # More than the spectator saw: both kept hands in the play.
    _, spectator = pool["cribbage"][i].frames(None)
    assert any(
        a["state"]["hands"] != b["state"]["hands"]
        for a, b in zip(frames, spectator, strict=True)
        if a["state"]
    )


@pytest.mark.parametrize("i", range(len(POOL["triple_crown"])))
def test_triple_crown_full_replay_shows_hands_roles_and_memo_but_not_the_deck(pool, i):
    g, rec = pool["triple_crown"][i].game, pool["triple_crown"][i].rec
    engine, full = engine_for("triple_crown"), hook("triple_crown", "replay")
    served, frames = pool["triple_crown"][i].frames("full")
    assert served == "full"
    memos = 0
    for f in frames:
        truth = rec.truth.get(f["version"])
        if truth is None:
            continue
        assert f["state"] == full.full_view(engine.GameState.from_json(truth), f["at"])
        rnd = truth["round"]
        assert f["state"]["hands"] == rnd["hands"] and f["state"]["roles"] == rnd["roles"]
        assert f["state"]["memo"] == rnd["memo"]
        memos += rnd["memo"] is not None
        assert "deck" not in f["state"] and "seed" not in f["state"] and "you" not in f["state"]
        for e in f["events"]:
            if e["type"] == "round_dealt":
                assert e["data"]["deck"] is None and all(len(h) == 13 for h in e["data"]["hands"])
            if e["type"] == "declared":
                assert e["data"]["memo"] in ("high", "low")
    dealt = [e for f in frames for e in f["events"] if e["type"] == "round_dealt"]
    assert dealt and g.seed not in json.dumps(frames)
    for d, rnd in zip(dealt, g.rounds.order_by("number"), strict=True):
        assert json.dumps(rnd.deck) not in json.dumps(frames)
        assert d["data"]["deck"] is None
    assert memos or not any(e["type"] == "declared" for f in frames for e in f["events"])
