"""Triple Crown's part of the REST leak harness (tests/games/leak_kit.py): no response carries
a card or a role its receiver may not know.

Random games (random deals, and every other game a deal stacked to be a Double Stakes hand),
with and without the move clock; besides the harness's reads, one reader a read step fetches the
game's lobby card (and every LOBBY-th its games list, each reader in turn), and every seat's
state is compared with the spectator's.
Every payload is checked by ``Truth``, a tracker written here from the unredacted record
(``Event.data``, ``Game.state``) and the rules (rules/triple-crown.md T27); it never calls the
engine's view code, and it works the roles out from the dealt hands itself.

What a receiver may know (T27):

* cards: its own 13 of each hand; a card from the moment it is played; every card of a hand once
  the hand is over (T20);
* roles: in a Crown hand, its own only (and a spectator none) until the hand ends -- no role
  code or role name tied to any other seat, anywhere; in a Double Stakes hand, who is Double
  Stakes (public, T8) and so that the rest are its opponents; the memo only the Double Stakes
  seat, until the hand ends;
* and a seat's state is the spectator's state plus its own hand and its own ``you`` -- nothing
  else of it may differ (so no derived field -- a flag, an order, a hint -- can carry a secret).
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass, field
from typing import Any, ClassVar

from rest_framework.test import APIClient

from games import services
from games.engines import triple_crown as tc
from games.models import Event, Game

from .leak_kit import LOBBY, LeakTable, cards_in

ALL_CARDS = {r + s for r in "23456789TJQKA" for s in "SHDC"}
#: The example in the engine's refusal of a malformed play (games/engines/triple_crown/actions.py).
EXAMPLE_CARD = 'a card code such as "TD"'
ROLE_CODES = {"high", "low", "team", "double", "opponent"}
#: Role names written out in text (an error message, a log line), mapped to their codes.
ROLE_WORDS = re.compile(r"\b(high|low|team)[\s_-]*crowns?\b", re.I)


def role_marks(value: Any) -> set[str]:
    """Every role-shaped thing in a JSON value: a string that is a role code, a role name in
    text ("High Crown"), or a key that is one (``{"high": 2}``)."""
    found: set[str] = set()
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            if item in ROLE_CODES:
                found.add(item)
            found.update(m.lower() for m in ROLE_WORDS.findall(item))
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return found


def roles_from(hands: list[list[str]]) -> list[str]:
    """§6, §7 worked out here, from the dealt hands (not the engine's roles_for)."""
    high = next(s for s, h in enumerate(hands) if "AS" in h)
    low = next(s for s, h in enumerate(hands) if "2D" in h)
    if high == low:
        return ["double" if s == high else "opponent" for s in range(4)]
    return ["high" if s == high else "low" if s == low else "team" for s in range(4)]


@dataclass
class Hand:
    number: int
    dealt: list[list[str]]
    roles: list[str]
    ds: int | None
    memo: str | None = None
    played: list[tuple[int, str]] = field(default_factory=list)  # (seq, card)
    over_seq: int | None = None
    result: dict[str, Any] | None = None

    def over_at(self, seq: int | None) -> bool:
        return self.over_seq is not None and (seq is None or self.over_seq <= seq)


class Truth:
    """What each receiver may know, from the stored, unredacted record of one game."""

    def __init__(self, game: Game) -> None:
        self.game = game
        self.hands: dict[int, Hand] = {}
        self.hand_of_seq: dict[int, int | None] = {}
        self.seq_of_version: dict[int, int] = {}  # the last event seq of each version
        self.hand_of_version: dict[int, int | None] = {}
        self.current: int | None = None
        self.last_seq = 0
        self.refresh()

    def refresh(self) -> Truth:
        g = self.game
        g.refresh_from_db()
        for e in Event.objects.filter(game=g, seq__gt=self.last_seq).order_by("seq"):
            self.last_seq = e.seq
            self.seq_of_version[e.version] = e.seq
            d = e.data
            if e.origin != Event.Origin.ENGINE:
                self.hand_of_seq[e.seq] = None
                continue
            if e.type == "round_dealt":
                roles = roles_from(d["hands"])
                ds = roles.index("double") if "double" in roles else None
                assert d["double_stakes"] == ds  # the announcement is the truth (T8)
                self.hands[d["round"]] = Hand(d["round"], d["hands"], roles, ds)
                self.current = d["round"]
            hand = self.hands[self.current] if self.current is not None else None
            self.hand_of_seq[e.seq] = self.current
            if e.type == "declared":
                hand.memo = d["memo"]
            elif e.type == "card_played":
                hand.played.append((e.seq, d["card"]))
            elif e.type == "hand_over":
                hand.over_seq = e.seq
                hand.result = d
                assert d["roles"] == hand.roles
            self.hand_of_version[e.version] = self.current
        if g.state is not None:
            rnd = g.state["round"]
            assert rnd["number"] == self.current
            assert rnd["roles"] == self.hands[self.current].roles
        self.version = g.version
        return self

    # --- what is allowed ----------------------------------------------------------------------
    def cards_allowed(self, seat: int | None, number: int | None, seq: int | None) -> set[str]:
        if number is None:
            return set()
        h = self.hands[number]
        if h.over_at(seq):
            return set(ALL_CARDS)
        out = {c for s, c in h.played if seq is None or s <= seq}
        if seat is not None:
            out |= set(h.dealt[seat])
        return out

    def check_roles(
        self, marks: set[str], seat: int | None, number: int | None, seq: int | None, where: str
    ) -> None:
        if not marks:
            return
        assert number is not None, f"{where}: role marks {marks} outside any hand"
        h = self.hands[number]
        if h.over_at(seq):
            return
        if h.ds is not None:
            # Public: who is Double Stakes, hence who is not (T8, T27c). Secret: the memo.
            secret = marks & {"high", "low", "team"}
            if seat == h.ds:
                # Its own memo; before the declaration, the choices it is offered.
                secret -= {h.memo} if h.memo else {"high", "low"}
            assert not secret, f"{where}: seat {seat} was sent {secret} in a Double Stakes hand"
            return
        own = {h.roles[seat]} if seat is not None else set()
        leaked = marks - own
        assert not leaked, (
            f"{where}: seat {seat} (role {own or 'spectator'}) was sent role marks {leaked}"
        )

    # --- checks ---------------------------------------------------------------------------------
    def at_version(self, version: int | None) -> tuple[int | None, int | None]:
        """The hand under way at ``version`` and the last event seq up to it (None, None: now)."""
        if version is None:
            return self.current, None
        seq = max(s for v, s in self.seq_of_version.items() if v <= version)
        return self.hand_of_version[max(v for v in self.hand_of_version if v <= version)], seq

    def check_view(
        self, view: dict[str, Any], seat: int | None, where: str, version: int | None = None
    ) -> None:
        """One engine view (the ``state`` of a payload), for ``seat``, at ``version`` (default:
        the current one): only what was public by then, and the seat's own."""
        current, seq = self.at_version(version)
        view = dict(view)  # a shallow copy is enough: only a top-level key is taken out
        last = view.pop("last_hand", None)
        if last is not None:
            # The previous hand's result: all public (T20) -- and exactly what was revealed.
            assert self.hands[last["round"]].result == last, f"{where}: last_hand is not the reveal"
        number = view["round"]
        assert number == current, f"{where}: the view is of hand {number}, not {current}"
        leaked = cards_in(view) - self.cards_allowed(seat, number, seq)
        assert not leaked, f"{where}: seat {seat} was sent cards {leaked}"
        self.check_roles(role_marks(view), seat, number, seq, where)
        h = self.hands[number]
        you = view.get("you")
        if seat is None:
            assert you is None, f"{where}: a spectator got {you}"
        else:
            assert you["role"] == h.roles[seat], f"{where}: seat {seat} is told {you['role']}"
            assert set(you["legal"]) <= set(h.dealt[seat])
            assert you["memo"] in ({None, h.memo} if seat == h.ds else {None})

    def check_same_as_spectator(
        self, view: dict[str, Any], spectator: dict[str, Any], seat: int, where: str
    ) -> None:
        """A seat's view may differ from the spectator's only by its own hand and ``you``
        (and the instant it was made, ``now``)."""
        # Shallow copies: only top-level keys and the list of hands are changed.
        mine = dict(view)
        theirs = dict(spectator)
        mine.pop("you", None)
        if mine["status"] == "playing":
            assert mine["hands"][seat] is not None, f"{where}: seat {seat} lost its hand"
            mine["hands"] = list(mine["hands"])
            mine["hands"][seat] = None
        mine["seat"] = theirs["seat"] = None
        mine["now"] = theirs["now"] = None
        assert mine == theirs, f"{where}: seat {seat}'s view differs from the spectator's"

    def check_events(self, events: list[dict[str, Any]], seat: int | None, where: str) -> None:
        for e in events:
            seq = e["seq"]
            number = self.hand_of_seq[seq]
            leaked = cards_in(e) - self.cards_allowed(seat, number, seq)
            assert not leaked, f"{where}: seat {seat} was sent {leaked} in {e}"
            self.check_roles(role_marks(e), seat, number, seq, f"{where} ({e['type']})")

    def check_payload(
        self, body: Any, seat: int | None, where: str, sent: set[str] = frozenset()
    ) -> None:
        """Anything at all (a refusal, an actions list): no card or role beyond what the seat
        may know in the hand under way (and the cards it named itself, ``sent``)."""
        if isinstance(body, dict) and body.get("code") == "bad_action":
            # The engine's help for a malformed move names a fixed example card; it is decided
            # from the request alone (never the game), so it tells nothing.
            body = {**body, "detail": body["detail"].replace(EXAMPLE_CARD, "")}
        leaked = cards_in(body) - self.cards_allowed(seat, self.current, None) - sent
        assert not leaked, f"{where}: seat {seat} was sent {leaked} in {body}"
        self.check_roles(role_marks(body), seat, self.current, None, where)


def seeds(count: int, prefix: str, double: bool = True) -> list[str]:
    """Seeds whose first hand is (``double``) or is not a Double Stakes hand: the server deals
    from the seed, so this stacks the deck without touching the service layer."""
    out = []
    i = 0
    while len(out) < count:
        seed = f"{prefix}-{i}"
        st, _ = tc.new_game(seats=4, settings=tc.Settings(), seed=seed, now=0)
        hands = st.to_json()["round"]["hands"]
        if ("double" in roles_from(hands)) == double:
            out.append(seed)
        i += 1
    return out


def illegal_moves(rng: random.Random, hand_cards: list[str]) -> list[dict[str, Any]]:
    """Moves a client might send that are refused (or malformed)."""
    card = rng.choice(sorted(ALL_CARDS))
    return [
        {"type": "play", "card": card},
        {"type": "play", "card": rng.choice(hand_cards) if hand_cards else "AS"},
        {"type": "declare", "trumps": rng.choice(["S", "NT"]), "memo": rng.choice(["high", "low"])},
        {"type": "declare", "trumps": "X", "memo": "low"},
        {"type": "play"},
    ]


class TripleCrownTable(LeakTable):
    kind = "triple_crown"
    jumps: ClassVar[list[int]] = [0, 1, 700, 5000, 29_999, 30_000, 30_001, 31_000]
    calm_jumps: ClassVar[list[int]] = [0]
    p_sweep = 0.08
    p_fire = 0.04
    p_bad = 0.1
    steps = 140

    def __init__(self, game: Game, players: list[Any], clocked: bool, double: bool) -> None:
        super().__init__(game, players, clocked)
        self.truth = Truth(game)
        self.double = double
        self.views: dict[int | None, dict[str, Any]] = {}
        self.reads = 0  # read steps so far (check_reads)

    @classmethod
    def start(cls, users: list[Any], rng: random.Random, seed: str) -> TripleCrownTable:
        double = rng.random() < 0.5
        deal = seeds(1, f"tc-leak-ds-{seed}")[0] if double else f"tc-leak-{seed}"
        move_seconds = rng.choice([None, 30])
        game = services.game_create(
            host=users[0], kind="triple_crown", settings={"move_seconds": move_seconds}
        )
        for u in users[1:4]:
            services.game_join(game=game, user=u)
        services.game_start(game=game, user=users[0], seed=deal, timers={"target_score": 6})
        game.refresh_from_db()
        return cls(game, users[:4], clocked=move_seconds is not None, double=double)

    def refresh(self) -> None:
        self.truth.refresh()

    def bad_move(self, rng: random.Random, seat: int) -> dict[str, Any]:
        return rng.choice(illegal_moves(rng, self.game.state["round"]["hands"][seat]))

    def before_options(self, now: int) -> None:
        if any(d["at"] <= now for d in self.game.deadlines):
            # What a seat may do now is decided after the due timeouts (T24): let the sweep
            # apply them, as the timers would, so the record is not behind.
            services.game_sweep()
            self.truth.refresh()

    def check_actions(self, body: Any, seat: int, now: int) -> None:
        self.truth.check_payload(body, seat, "actions")

    def check_act(self, body: dict[str, Any], seat: int) -> None:
        self.truth.check_events(body["events"], seat, "act events")
        self.truth.check_view(body["state"]["state"], seat, "act state")

    def check_refusal(self, body: Any, seat: int, action: dict[str, Any]) -> None:
        self.truth.check_payload(body, seat, f"refusal of {action}", cards_in(action))

    def check_state(self, body: Any, seat: int | None) -> None:
        view = body["state"]
        self.truth.check_view(view, seat, "spectator state" if seat is None else "state")
        self.views[seat] = view

    def check_events(self, events: list[dict[str, Any]], seat: int | None, where: str) -> None:
        self.truth.check_events(events, seat, where)

    def check_reads(self, step: int, clients: list[tuple[int | None, APIClient]]) -> None:
        # ``self.game`` is as the step left it (``refresh``, before the reads, which store
        # nothing).
        if self.game.status == Game.Status.PLAYING:
            for seat, view in self.views.items():
                if seat is not None:
                    self.truth.check_same_as_spectator(view, self.views[None], seat, "state")
        # The lobby card (seats, scores, status) and the lists: nothing of any hand. The card
        # by one reader in turn after every read step; the list (the dearest read of the
        # harness: every game the reader sits at, with every seat) every LOBBY-th, by the
        # reader in turn then.
        self.reads += 1
        seat, c = clients[self.reads % len(clients)]
        base = f"/api/v1/games/{self.game.pk}/"
        self.truth.check_payload(c.get(base).json(), seat, "game detail")
        if self.reads % LOBBY == 0:
            seat, c = clients[self.reads // LOBBY % len(clients)]
            lists = c.get("/api/v1/games/", {"scope": "mine"}).json()
            self.truth.check_payload(lists, seat, "list")
            self.stats["lists"] += 1
        self.views.clear()

    def coverage(self) -> None:
        s = self.stats
        assert s["payloads"] > 400 and s["acts"] > 35 and s["refusals"] > 2, dict(s)
        assert s["lists"] >= len(self.players) + 1, dict(s)  # every reader's list, at least once
        if self.double:
            assert sum(1 for h in self.truth.hands.values() if h.ds is not None) >= 1
