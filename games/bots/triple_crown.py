"""Triple Crown's bots: what a seat knows, the determiniser, role inference, and the four levels.

Everything here starts from an ``Observation`` (the seat's redacted views and events, see
``observation``), exactly as ``games.bots.crisp`` does.  Three layers:

1. ``track(memory)`` -> ``Knowledge``: the seat's own hand and role (and memo, if it is Double
   Stakes), every card played and by whom, the suits each seat has shown void in by failing to
   follow (T12), what a play timeout proved (T24: the lowest legal card, so none lower), and
   the public facts about A♠ and 2♦: in a Crown hand they lie in *different* hands (T6); in a
   Double Stakes hand both lie with the announced seat (T8) until played.  Nothing else about
   another seat's role is known -- the roles of a sample follow from the cards dealt into it.
2. ``Determiniser(memory)``: samples full hypothetical ``GameState``\\ s: the unseen cards dealt
   into the other hands respecting every void, every timeout proof and the A♠/2♦ facts, each
   hand getting exactly its size.  A sequential deal with a Hall-condition check after every
   card (three seats: seven subsets) never paints itself into a corner, so a sample always
   exists when the truth does; the roles come from the sampled deal (``roles_for``), the hidden
   memo is drawn from the public evidence.  The seat's own view of every sample equals its view
   of the true state (tests/bots/test_bots_triple_crown.py).
3. The levels: ``RandomBot``, ``EasyBot`` (its own role only: high cards to win, low to lose,
   some randomness), ``MediumBot`` (infers the others' roles from their play and plays to its
   own role and side: who should take this trick?), ``HardBot`` (SO-ISMCTS over
   ``TripleCrownSearch`` -- the engine's own ``legal_actions``/``apply`` on determinisations to
   the end of the hand -- with the medium rules as the opponents' model and rollout policy).
"""

from __future__ import annotations

import functools
import math
import random
from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field
from typing import Any

from games.engines import engine_for
from games.engines.triple_crown import (
    FULL_DECK,
    Action,
    GameState,
    Settings,
    legal_actions,
    roles_for,
)

from .base import EasyLevel, HardLevel, Level, MediumLevel, RandomLevel
from .ismcts import EngineSearch, World
from .observation import Observation, ObservationError

KIND = "triple_crown"
SEATS = 4
HIGH_CARD, LOW_CARD = "AS", "2D"
HIGH_NEEDED = 5
_RANKS = "23456789TJQKA"
_RANK = {r: i for i, r in enumerate(_RANKS)}
_TIMEOUT_SUIT = "CDHS"  # T24's tie-break among equal ranks


def _rank(c: str) -> int:
    return _RANK[c[0]]


def _timeout_key(c: str) -> tuple[int, int]:
    return (_RANK[c[0]], _TIMEOUT_SUIT.index(c[1]))


# ================================================================================================
# Per-game payload check (called by Memory.observe)
# ================================================================================================
def check_view(view: dict[str, Any], seat: int) -> None:
    """Refuse a Triple Crown view that shows what ``seat`` may not see: another seat's hand
    before the hand is over, or a memo that is not its own."""
    hands = view.get("hands")
    if type(hands) is not list or len(hands) != SEATS or not 0 <= seat < SEATS:
        raise ObservationError("view: not a four-seat Triple Crown view")
    if view.get("phase") != "over" and any(h is not None for j, h in enumerate(hands) if j != seat):
        raise ObservationError("view: another seat's hand before the reveal")
    you = view["you"]
    if you.get("memo") is not None and view.get("double_stakes") != seat:
        raise ObservationError("view: a memo shown to a seat that did not write it")


# ================================================================================================
# Knowledge
# ================================================================================================
def _winner(cards: Sequence[Sequence[Any]], trumps: str | None) -> int:
    """The seat winning ``cards`` so far (T13), the led card first."""
    led = cards[0][1][1]
    trump = trumps if trumps in ("S", "H", "D", "C") else None
    pool = [(s, c) for s, c in cards if trump is not None and c[1] == trump]
    if not pool:
        pool = [(s, c) for s, c in cards if c[1] == led]
    return max(pool, key=lambda sc: _rank(sc[1]))[0]


@dataclass(slots=True)
class Knowledge:
    """The seat's knowledge of the current hand (see the module docstring)."""

    seat: int
    round: int
    dealer: int
    ds: int | None
    trumps: str | None
    phase: str
    role: str
    memo: str | None
    hand: list[str]
    hand_sizes: list[int]
    played: list[list[str]]  # by seat, in order
    tricks: list[list[list[Any]]]  # completed tricks' [seat, card] pairs in play order
    trick: list[list[Any]]  # the trick under way
    taken: list[int]
    voids: list[set[str]]  # suits each seat has shown void in
    excluded: list[set[str]] = field(default_factory=lambda: [set() for _ in range(SEATS)])
    dealt_at: int | None = None
    trick_at: list[int] = field(default_factory=list)
    clock: int = 0
    # ``behaviour`` of this knowledge when already known (the search keeps it up to date trick
    # by trick instead of recomputing it for every card of every play-out); None: compute.
    evidence: list[float] | None = None

    def unseen(self) -> list[str]:
        """The cards in other seats' hands, from this seat's point of view."""
        seen = set(self.hand)
        for p in self.played:
            seen.update(p)
        return [c for c in FULL_DECK if c not in seen]

    def holder_of(self, card: str) -> int | None:
        """The seat known to hold or to have held ``card`` (``None``: unknown)."""
        if card in self.hand:
            return self.seat
        for j, p in enumerate(self.played):
            if card in p:
                return j
        if self.ds is not None and card in (HIGH_CARD, LOW_CARD):
            return self.ds
        return None

    def all_tricks(self) -> list[list[list[Any]]]:
        return [*self.tricks, self.trick] if self.trick else list(self.tricks)


def track(memory: Observation) -> Knowledge:
    """Replay ``memory``'s hand into ``Knowledge``: public facts from the latest view (every
    trick of the hand is in it), timeout proofs from the events this seat received."""
    view = memory.view
    if view is None:
        raise ObservationError("nothing observed yet")
    me = memory.seat
    you = view["you"]
    tricks = [[[x["seat"], x["card"]] for x in t["cards"]] for t in view["tricks"]]
    trick = [[x["seat"], x["card"]] for x in view["trick"]]
    played: list[list[str]] = [[] for _ in range(SEATS)]
    voids: list[set[str]] = [set() for _ in range(SEATS)]
    for t in [*tricks, trick]:
        if not t:
            continue
        led = t[0][1][1]
        for s, c in t:
            played[s].append(c)
            if c[1] != led:
                voids[s].add(led)
    k = Knowledge(
        seat=me,
        round=view["round"],
        dealer=view["dealer"],
        ds=view["double_stakes"],
        trumps=view["trumps"],
        phase=view["phase"],
        role=you["role"],
        memo=you["memo"],
        hand=list(view["hands"][me] or []),
        hand_sizes=list(view["hand_sizes"]),
        played=played,
        tricks=tricks,
        trick=trick,
        taken=list(view["taken"]),
        voids=voids,
    )
    for j in range(SEATS):
        if j != me:
            k.excluded[j] = {c for c in FULL_DECK if c[1] in voids[j]}
    clock = None
    for ev in memory.events:
        d = ev["data"]
        if ev["type"] == "round_dealt":
            if d["round"] != view["round"]:
                continue
            k.dealt_at = d["at"]
        at = d.get("at")
        if isinstance(at, int):
            clock = at if clock is None else max(clock, at)
        if ev["type"] == "trick_won":
            k.trick_at.append(d["at"])
        elif ev["type"] == "card_played" and d["timeout"] and d["seat"] != me:
            _timeout_proof(k, d["seat"], d["card"], d["trick"])
    k.clock = min(clock if clock is not None else view["now"], view["now"])
    return k


def _timeout_proof(k: Knowledge, seat: int, card: str, trick_no: int) -> None:
    """T24: a timed-out seat played its lowest legal card, so it held no lower legal card --
    and still holds none (cards are never drawn)."""
    tricks = k.all_tricks()
    if not 1 <= trick_no <= len(tricks):
        return
    t = tricks[trick_no - 1]
    pos = next((i for i, (s, c) in enumerate(t) if s == seat and c == card), None)
    if pos is None:
        return
    key = _timeout_key(card)
    led = t[0][1][1]
    if pos > 0 and card[1] == led:
        lower = {c for c in FULL_DECK if c[1] == led and _timeout_key(c) < key}
    else:  # it led, or was void: every card was legal
        lower = {c for c in FULL_DECK if _timeout_key(c) < key}
    k.excluded[seat] |= lower


# ================================================================================================
# The determiniser
# ================================================================================================
class Determiniser:
    """Samples full hypothetical states consistent with one seat's knowledge (module docstring).

    Built once per decision; ``sample(rng)`` deals the unseen cards.
    """

    def __init__(self, memory: Observation, knowledge: Knowledge | None = None) -> None:
        view = memory.view
        if view is None:
            raise ObservationError("nothing observed yet")
        k = knowledge if knowledge is not None else track(memory)
        self.view = view
        self.knowledge = k
        self.seat = me = memory.seat
        self.others = [j for j in range(SEATS) if j != me]
        self.pool = k.unseen()
        self.caps = {j: k.hand_sizes[j] for j in self.others}
        if sum(self.caps.values()) != len(self.pool):
            raise ObservationError("the view's cards do not add up to one deck")
        bit = {j: 1 << i for i, j in enumerate(self.others)}
        self.bit = bit
        full = sum(bit.values())
        self.masks: dict[str, int] = {}
        for c in self.pool:
            m = full
            for j in self.others:
                if c in k.excluded[j]:
                    m &= ~bit[j]
            if k.ds is not None and c in (HIGH_CARD, LOW_CARD):
                m &= bit.get(k.ds, 0)
            elif k.ds is None and c in (HIGH_CARD, LOW_CARD):
                # A Crown hand: not with the seat that held (played) the other crown card.
                h = k.holder_of(LOW_CARD if c == HIGH_CARD else HIGH_CARD)
                if h is not None and h in bit:
                    m &= ~bit[h]
            if m == 0:
                raise ObservationError(f"no seat can hold an unseen card ({len(self.pool)} left)")
            self.masks[c] = m
        # A Crown hand: A♠ and 2♦ in different hands -- a constraint on the pair, dealt first.
        self.pair = k.ds is None and HIGH_CARD in self.masks and LOW_CARD in self.masks
        if not self._feasible(self.pool, self.caps):
            raise ObservationError("no deal fits what the seat saw")

    # -- Hall's condition: every set of seats can hold the cards that must go to it ----------
    def _feasible(self, cards: Sequence[str], caps: dict[int, int]) -> bool:
        count: dict[int, int] = {}
        for c in cards:
            m = self.masks[c]
            count[m] = count.get(m, 0) + 1
        if sum(caps.values()) != len(cards):
            return False
        n = len(self.others)
        for s in range(1, 1 << n):
            cap = sum(caps[j] for j in self.others if s & self.bit[j])
            need = sum(v for m, v in count.items() if m & ~s == 0)
            if need > cap:
                return False
        return True

    def deal(self, rng: random.Random) -> dict[int, list[str]]:
        """One consistent split of the unseen cards into the other seats' hands."""
        caps = dict(self.caps)
        hands: dict[int, list[str]] = {j: [] for j in self.others}
        rest = list(self.pool)
        if self.pair:
            rest = [c for c in rest if c not in (HIGH_CARD, LOW_CARD)]
            options = [
                (a, b, caps[a] * caps[b])
                for a in self.others
                for b in self.others
                if a != b
                and self.masks[HIGH_CARD] & self.bit[a]
                and self.masks[LOW_CARD] & self.bit[b]
                and caps[a]
                and caps[b]
            ]
            while options:
                i = rng.choices(range(len(options)), [w for _, _, w in options])[0]
                a, b, _ = options.pop(i)
                caps2 = dict(caps)
                caps2[a] -= 1
                caps2[b] -= 1
                if self._feasible(rest, caps2):
                    hands[a].append(HIGH_CARD)
                    hands[b].append(LOW_CARD)
                    caps = caps2
                    break
            else:
                raise ObservationError("no deal puts A♠ and 2♦ in different hands")
        rng.shuffle(rest)
        # Most constrained first: fewer dead ends to check, and the unconstrained cards at the
        # end are dealt by plain capacity weights (exactly uniform when nothing is known).
        rest.sort(key=lambda c: bin(self.masks[c]).count("1"))
        for idx, c in enumerate(rest):
            left = rest[idx + 1 :]
            seats = [j for j in self.others if self.masks[c] & self.bit[j] and caps[j]]
            while True:
                j = seats[0] if len(seats) == 1 else rng.choices(seats, [caps[x] for x in seats])[0]
                caps[j] -= 1
                if len(seats) == 1 or self._feasible(left, caps):
                    hands[j].append(c)
                    break
                caps[j] += 1
                seats.remove(j)
        return hands

    def memo_for(self, rng: random.Random) -> str | None:
        """The Double Stakes memo in a sample: the seat's own, or one drawn from the evidence
        everybody has (``ds_high_belief``) -- any memo is consistent for another seat."""
        k = self.knowledge
        if k.ds is None or k.trumps is None:
            return None
        if k.memo is not None:
            return k.memo
        return "high" if rng.random() < ds_high_belief(k) else "low"

    def sample(self, rng: random.Random) -> GameState:
        """One hypothetical full state; its seed is the sample's own (later hands are dealt
        from it: a sampled future, not the real one)."""
        v, k = self.view, self.knowledge
        dealt = self.deal(rng)
        hands: list[list[str]] = [[] for _ in range(SEATS)]
        hands[self.seat] = list(k.hand)
        for j, cards in dealt.items():
            hands[j] = _sorted(cards)
        original = [[*hands[j], *k.played[j]] for j in range(SEATS)]
        roles = roles_for(original)
        order: list[str] = []
        per = [list(h) for h in original]
        for i in range(52):
            order.append(per[(k.dealer + 1 + i) % SEATS].pop())
        ms = Settings.from_json(v["settings"]).move_ms  # turn_seconds when turn-based
        clock_from = v["move_deadline"] - ms if v["move_deadline"] is not None and ms else k.clock
        dealt_at = k.dealt_at if k.dealt_at is not None else k.clock
        tricks = []
        for i, t in enumerate(v["tricks"]):
            tricks.append(
                {
                    "no": t["no"],
                    "leader": t["leader"],
                    "cards": [[x["seat"], x["card"]] for x in t["cards"]],
                    "winner": t["winner"],
                    "at": k.trick_at[i] if i < len(k.trick_at) else k.clock,
                }
            )
        rnd = {
            "number": v["round"],
            "dealer": k.dealer,
            "dealt_at": dealt_at,
            "deck_order": order,
            "roles": roles,
            "hands": hands,
            "ds_seat": k.ds,
            "trumps": k.trumps,
            "memo": self.memo_for(rng),
            "phase": v["phase"],
            "leader": v["leader"],
            "turn": v["turn"],
            "clock_from": clock_from,
            "trick": [list(p) for p in k.trick],
            "tricks": tricks,
            "taken": list(k.taken),
            "result": None,
        }
        st = {
            "version": 1,
            "seats": SEATS,
            "settings": dict(v["settings"]),
            "seed": f"bot-sample-{rng.getrandbits(64):016x}",
            "decks": None,
            "first_dealer": (k.dealer - (v["round"] - 1)) % SEATS,
            "status": v["status"],
            "scores": list(v["scores"]),
            "history": [list(h) for h in v["history"]],
            "winners": list(v["winners"]),
            "round": rnd,
            "last_hand": v["last_hand"],
            "clock": k.clock,
        }
        return GameState.from_json(st)


_SUIT_ORDER = {s: i for i, s in enumerate("SHDC")}


def _sorted(cards: Sequence[str]) -> list[str]:
    """The engine's hand order (TE3): by suit S H D C, high to low."""
    return sorted(cards, key=lambda c: (_SUIT_ORDER[c[1]], -_rank(c)))


# ================================================================================================
# Role inference (public evidence only)
# ================================================================================================
def ds_high_belief(k: Knowledge) -> float:
    """How likely the Double Stakes player is going for five tricks, from what everybody
    sees: naming a trump suit (rather than no-trump) and taking tricks point that way,
    ducking trick after trick points the other."""
    p = 0.8 if k.trumps in ("S", "H", "D", "C") else 0.35
    assert k.ds is not None
    t = k.taken[k.ds]
    played = len(k.tricks)
    if t >= 2:
        p = 0.9
    elif t == 1:
        p = max(p, 0.6)
    elif played >= 4:
        p = 0.15
    return p


def behaviour(k: Knowledge) -> list[float]:
    """Per seat, evidence of *wanting tricks* (> 0) or of avoiding them (< 0), from its plays:
    overtaking the card winning so far, leading an ace or a king and throwing a small card when
    void count towards wanting them; ducking under the winning card (more so with a high card),
    leading small and throwing a high card when void count towards avoiding them.  A forced
    play looks the same as a chosen one to the table, so the weights are soft.

    Summed trick by trick from ``_trick_evidence`` (memoised): the search's default policy asks
    this for every card of every play-out, and the tricks already played are the same in all
    of them -- recomputing them was most of a Triple Crown iteration's CPU."""
    if k.evidence is not None:
        return list(k.evidence)
    ev = [0.0] * SEATS
    for t in k.all_tricks():
        for s, x in enumerate(_trick_evidence(tuple((s, c) for s, c in t), k.trumps)):
            ev[s] += x
    return ev


@functools.lru_cache(maxsize=1 << 16)
def _trick_evidence(t: tuple[tuple[int, str], ...], trumps: str | None) -> tuple[float, ...]:
    """One trick's (or the current trick's so far) contribution to ``behaviour``, per seat."""
    ev = [0.0] * SEATS
    for i, (s, c) in enumerate(t):
        if i == 0:
            if _rank(c) >= _RANK["K"]:
                ev[s] += 0.6
            elif _rank(c) <= _RANK["6"]:
                ev[s] -= 0.4
            continue
        led = t[0][1][1]
        w = _winner(t[:i], trumps)
        wc = next(cc for ss, cc in t[:i] if ss == w)
        if c[1] != led and c[1] != trumps:
            ev[s] += -0.5 if _rank(c) >= _RANK["T"] else 0.3
            continue
        if _winner([*t[:i], (s, c)], trumps) == s:
            ev[s] += 0.5 if _rank(c) > _rank(wc) + 1 else 0.25
        else:
            ev[s] -= 0.3 if _rank(c) >= _RANK["9"] else 0.1
    return tuple(ev)


def crown_beliefs(k: Knowledge) -> tuple[list[float], list[float]]:
    """Per seat, the probability that it is High Crown and that it is Low Crown (Crown hand).

    Known holders are certain; otherwise a seat that showed void in spades cannot hold an
    unplayed A♠ (nor one void in diamonds an unplayed 2♦), the others share the chance in
    proportion to their hand sizes, tilted by ``behaviour``."""
    me = k.seat
    ev = behaviour(k)
    out = []
    for card, sign in ((HIGH_CARD, 1.0), (LOW_CARD, -1.0)):
        p = [0.0] * SEATS
        h = k.holder_of(card)
        if h is not None:
            p[h] = 1.0
        else:
            other = LOW_CARD if card == HIGH_CARD else HIGH_CARD
            oh = k.holder_of(other)
            for j in range(SEATS):
                if j in (me, oh) or card[1] in k.voids[j]:
                    continue
                p[j] = max(k.hand_sizes[j], 0.1) * math.exp(sign * 0.8 * ev[j])
            z = sum(p)
            p = [x / z for x in p] if z else p
        out.append(p)
    return out[0], out[1]


# ================================================================================================
# Card-play heuristics shared by the levels
# ================================================================================================
def _wins_now(trick: Sequence[Sequence[Any]], seat: int, card: str, trumps: str | None) -> bool:
    return not trick or _winner([*trick, [seat, card]], trumps) == seat


def _higher_out(card: str, unplayed_others: set[str]) -> int:
    """How many cards of its suit still out (not ours, not played) outrank ``card``."""
    return sum(1 for c in unplayed_others if c[1] == card[1] and _rank(c) > _rank(card))


def pick_card(
    want: float,
    legal: Sequence[str],
    hand: Sequence[str],
    trick: Sequence[Sequence[Any]],
    seat: int,
    trumps: str | None,
    out: set[str],
) -> str:
    """The card for a seat that wants this trick (``want`` > 0), does not (< 0) or does not
    mind (0), with the standard technique of each:

    * wanting it: lead a master card (nothing out above it), else low from the longest suit;
      following, the cheapest card that wins -- the highest if others are still to play and it
      is a master -- else throw the cheapest card;
    * avoiding it: lead the card most likely to be beaten; following, the highest card that
      loses, else (forced to win) the highest if last to play, else the lowest; void, throw the
      most dangerous card (highest rank, fewest cards out above it);
    * not minding: the cheapest card (keep the high ones for later)."""
    last = len(trick) == SEATS - 1
    if want > 0:
        if not trick:
            masters = [c for c in legal if _higher_out(c, out) == 0]
            if masters:  # side suits first: trumps are worth more kept (they ruff)
                return max(masters, key=lambda c: (c[1] != trumps, _rank(c)))
            counts: dict[str, int] = {}
            for c in hand:
                counts[c[1]] = counts.get(c[1], 0) + 1
            return min(legal, key=lambda c: (-counts[c[1]], _rank(c)))
        winning = [c for c in legal if _wins_now(trick, seat, c, trumps)]
        if winning:
            if not last:
                masters = [c for c in winning if _higher_out(c, out) == 0]
                if masters:
                    return min(masters, key=_rank)
                return max(winning, key=_rank)
            return min(winning, key=_rank)
        return min(legal, key=lambda c: (c[1] == trumps, _rank(c)))
    if want < 0:
        if not trick:
            return max(legal, key=lambda c: (_higher_out(c, out), -_rank(c)))
        losing = [c for c in legal if not _wins_now(trick, seat, c, trumps)]
        if losing:
            return max(losing, key=lambda c: (_rank(c), -_higher_out(c, out)))
        return max(legal, key=_rank) if last else min(legal, key=_rank)
    return min(legal, key=lambda c: (c[1] == trumps, _rank(c)))


def _wish(k: Knowledge, hand: Sequence[str], p_high: list[float], p_low: list[float]) -> float:
    """How much the seat wants the trick under way, by its role and what it believes of the
    others' (the medium level's reasoning)."""
    me, role, trick = k.seat, k.role, k.trick
    if role == "high":
        return 1.0 if k.taken[me] < HIGH_NEEDED else 0.2
    if role == "low":
        return -1.0
    if role == "double":
        if k.memo == "low":
            return -1.0
        return 1.0 if k.taken[me] < HIGH_NEEDED else 0.2
    if role == "opponent":
        assert k.ds is not None
        t = k.taken[k.ds]
        p = ds_high_belief(k)
        # Whether we want the DS player to win this trick: at 0 tricks always (1 trick is a
        # failure); at 4 never (5 is a success); between, if it is going low (more tricks =
        # more points, memo Low) rather than high.
        let_ds = 1.0 if t == 0 else -1.0 if t >= 4 else (1 - p) - p
        if trick:
            w = _winner(trick, k.trumps)
            if w == k.ds:
                return -let_ds  # beat it, or stay under it
            played_ds = any(s == k.ds for s, _ in trick)
            return 0.0 if played_ds else -0.3 * let_ds
        return -0.3 * let_ds
    # Team Crown: High should fail (take the trick from it), Low should take tricks.
    if trick:
        w = _winner(trick, k.trumps)
        if w == me:
            return 0.2
        return p_high[w] - p_low[w]
    return -0.2


def medium_card(k: Knowledge, legal: Sequence[str]) -> str:
    """The medium level's card (``pick_card`` with ``_wish``, beliefs from ``crown_beliefs``)."""
    if k.ds is None:
        p_high, p_low = crown_beliefs(k)
    else:
        p_high = p_low = [0.0] * SEATS
    out = set(k.unseen())
    want = _wish(k, k.hand, p_high, p_low)
    return pick_card(want, legal, k.hand, k.trick, k.seat, k.trumps, out)


def expected_tricks(hand: Sequence[str], trumps: str) -> float:
    """A rough count of the tricks a Double Stakes hand takes with ``trumps`` (declarer's
    rule of thumb): aces, guarded kings and queens, long trumps and ruffs in short suits."""
    by: dict[str, list[int]] = {s: [] for s in "SHDC"}
    for c in hand:
        by[c[1]].append(_rank(c))
    total = 0.0
    for s, rs in by.items():
        rs.sort(reverse=True)
        n = len(rs)
        for i, r in enumerate(rs):
            gap = 12 - r  # cards above it in the suit
            if gap <= i:  # it and the cards above it are all ours: a winner
                total += 1.0
            elif gap == 1 and n >= 2:
                total += 0.6
            elif gap == 2 and n >= 3:
                total += 0.3
        if s == trumps:
            total += max(0, n - 4) * 0.8
    if trumps in by:
        tl = len(by[trumps])
        for s, rs in by.items():
            if s != trumps and len(rs) <= 1:
                total += min(tl / 3, 2 - len(rs)) * 0.5
    return total


def medium_declaration(hand: Sequence[str]) -> Action:
    """High, with the trump suit that makes the most tricks (``expected_tricks``), memo High.

    Measured, not assumed: over 60 Double Stakes deals played out against medium opponents,
    always going High with the best suit succeeded 55 % of the time (DS points minus the
    others' mean: +1.8 per hand), a trick-count threshold (High from 4.5 expected tricks,
    else Low) 30-33 %, and Low at no-trump 8 %: thirteen cards holding A♠ almost never avoid
    every trick, while the right trump suit turns length into tricks.  The memo matches the
    aim, because if the five tricks fail, "High" makes the opponents' points (5 - t) x 2
    small exactly when the player came close.
    """
    best = max("SHDC", key=lambda s: (expected_tricks(hand, s), s == "S"))
    return Action.declare(best, "high")


# ================================================================================================
# The levels
# ================================================================================================
class TripleCrownBot(Level):
    """Triple Crown's frame (``base.Level``): the level's declaration or card among the
    engine's legal actions at ``now``."""

    kind = KIND
    knowledge = track
    determiniser = Determiniser
    legal_actions = legal_actions

    def policy(self, memory, k, det, legal, now, rng) -> Action:  # type: ignore[no-untyped-def]
        if legal[0].type == "declare":
            return self.declare(memory, k, det, legal, now, rng)
        return self.card(memory, k, det, legal, now, rng)

    def declare(
        self,
        memory: Observation,
        k: Knowledge,
        det: Determiniser,
        legal: list[Action],
        now: int,
        rng: random.Random,
    ) -> Action:
        raise NotImplementedError

    def card(
        self,
        memory: Observation,
        k: Knowledge,
        det: Determiniser,
        legal: list[Action],
        now: int,
        rng: random.Random,
    ) -> Action:
        raise NotImplementedError


class RandomBot(RandomLevel, TripleCrownBot):
    """Uniformly random among the legal actions: the benchmark floor."""


class EasyBot(EasyLevel, TripleCrownBot):
    """Its own role only, simple rules, a little random: High plays its highest card that can
    win (else its lowest), Low its highest card that loses (else its lowest), Team and the
    Double Stakes opponents just follow cheaply; a Double Stakes hand with four or more aces
    and kings goes High in its longest suit, else Low at no-trump.  One card in ten is random."""

    wander = 0.1

    def declare(self, memory, k, det, legal, now, rng) -> Action:  # type: ignore[no-untyped-def]
        honours = sum(1 for c in k.hand if c[0] in "AK")
        if honours >= 4:
            longest = max("SHDC", key=lambda s: sum(1 for c in k.hand if c[1] == s))
            return Action.declare(longest, "high")
        return Action.declare("NT", "low")

    def card(self, memory, k, det, legal, now, rng) -> Action:  # type: ignore[no-untyped-def]
        cards = [a.card for a in legal]
        if rng.random() < self.wander:
            return Action.play(rng.choice(cards))  # type: ignore[arg-type]
        role = k.role
        want = 1 if role == "high" or (role == "double" and k.memo == "high") else 0
        if role == "low" or (role == "double" and k.memo == "low"):
            want = -1
        trick = k.trick
        if want > 0:
            win = [c for c in cards if _wins_now(trick, k.seat, c, k.trumps)]  # type: ignore[arg-type]
            return Action.play(max(win, key=_rank) if win else min(cards, key=_rank))  # type: ignore[arg-type]
        if want < 0:
            lose = [c for c in cards if trick and not _wins_now(trick, k.seat, c, k.trumps)]  # type: ignore[arg-type]
            return Action.play(max(lose, key=_rank) if lose else min(cards, key=_rank))  # type: ignore[arg-type]
        return Action.play(min(cards, key=_rank))  # type: ignore[arg-type]


class MediumBot(MediumLevel, TripleCrownBot):
    """Infers roles from play and plays to its own role and side (``medium_card``); declares
    by counting its tricks (``medium_declaration``)."""

    def declare(self, memory, k, det, legal, now, rng) -> Action:  # type: ignore[no-untyped-def]
        return medium_declaration(k.hand)

    def card(self, memory, k, det, legal, now, rng) -> Action:  # type: ignore[no-untyped-def]
        return Action.play(medium_card(k, [a.card for a in legal]))  # type: ignore[misc]


# ================================================================================================
# Hard: SO-ISMCTS over the engine
# ================================================================================================
@dataclass(slots=True)
class _Sim(World):
    # The public play of the completed tricks, folded once (``TripleCrownSearch._knowledge``):
    # how many, each seat's cards in order, its shown voids, its ``behaviour`` evidence.
    done: int = 0
    played: list[list[str]] = field(default_factory=lambda: [[] for _ in range(SEATS)])
    voids: list[set[str]] = field(default_factory=lambda: [set() for _ in range(SEATS)])
    ev: list[float] = field(default_factory=lambda: [0.0] * SEATS)


def _fold(
    t: Sequence[Sequence[Any]],
    trumps: str | None,
    played: list[list[str]],
    voids: list[set[str]],
    ev: list[float],
) -> None:
    """Add one trick's public facts (cards by seat, voids shown, ``behaviour`` evidence)."""
    if not t:
        return
    led = t[0][1][1]
    for p, c in t:
        played[p].append(c)
        if c[1] != led:
            voids[p].add(led)
    for j, x in enumerate(_trick_evidence(tuple((p, c) for p, c in t), trumps)):
        ev[j] += x


def _classes(hand: Sequence[str], cards: Sequence[str], out: set[str]) -> list[str]:
    """One card per class of equivalent plays: two cards of a suit with no card still out
    between them win and lose exactly the same tricks (no card scores anything), so only the
    lowest of each run is searched."""
    keep = []
    for c in sorted(cards, key=lambda c: (c[1], _rank(c))):
        if keep and keep[-1][1] == c[1]:
            prev = keep[-1]
            between = any(o[1] == c[1] and _rank(prev) < _rank(o) < _rank(c) for o in out)
            if not between:
                continue
        keep.append(c)
    return keep


def _representative(card: str, cards: Sequence[str], out: set[str]) -> str:
    """The card ``_classes`` keeps for ``card``'s class: the lowest of its equivalent run."""
    low = card
    for c in sorted((c for c in cards if c[1] == card[1]), key=_rank, reverse=True):
        if _rank(c) < _rank(low) and not any(
            o[1] == c[1] and _rank(c) < _rank(o) < _rank(low) for o in out
        ):
            low = c
    return low


class TripleCrownSearch(EngineSearch[_Sim]):
    """Triple Crown's knowledge for the search on the engine (``ismcts.EngineSearch``), to the
    end of the current hand.

    Every card played is public, so a move observes nothing beyond the action.  Equivalent
    cards (``_classes``) are one action.  The default policy is the medium level's card rule
    played by each seat on what *it* knows in the sampled world: its own cards and role, the
    public play -- never another seat's cards or role.  Reward: the hand's points against the
    others' mean, squashed into [0, 1]; a game won in the hand is worth 1."""

    def __init__(self, memory: Observation, knowledge: Knowledge, now: int) -> None:
        super().__init__(engine_for(KIND), Determiniser(memory, knowledge), memory.seat, now)
        self.round = knowledge.round
        self.k0 = knowledge

    def world(self, state: GameState) -> _Sim:
        return _Sim(state, self.now)

    def mover(self, s: _Sim) -> int | None:
        st = s.state
        if st.status != "playing" or st.round.number != self.round:
            return None
        return st.round.turn

    def actions(self, s: _Sim) -> Sequence[Hashable]:
        acts = super().actions(s)
        if acts[0].type == "declare":
            return acts
        seat = s.actor
        h = s.state.round
        out = {c for j in range(SEATS) if j != seat for c in h.hands[j]}
        return [Action.play(c) for c in _classes(h.hands[seat], [a.card for a in acts], out)]  # type: ignore[misc]

    def _knowledge(self, s: _Sim, seat: int) -> Knowledge:
        """What ``seat`` knows in the sampled world (its own cards and role, the public play).

        The completed tricks are folded into ``s`` once each (the play-out asks this for every
        card); only the trick under way is looked at afresh."""
        h = s.state.round
        trumps = h.trumps
        tricks = [t["cards"] for t in h.tricks]
        for t in tricks[s.done :]:
            _fold(t, trumps, s.played, s.voids, s.ev)
        s.done = len(tricks)
        played = [list(p) for p in s.played]
        voids = [set(v) for v in s.voids]
        ev = list(s.ev)
        if h.trick:
            _fold(h.trick, trumps, played, voids, ev)
        return Knowledge(
            seat=seat,
            round=h.number,
            dealer=h.dealer,
            ds=h.ds_seat,
            trumps=trumps,
            phase=h.phase,
            role=h.roles[seat],
            memo=h.memo if seat == h.ds_seat else None,
            hand=h.hands[seat],
            hand_sizes=[len(x) for x in h.hands],
            played=played,
            tricks=tricks,
            trick=h.trick,
            taken=h.taken,
            voids=voids,
            evidence=ev,
        )

    def rollout_action(self, s: _Sim, rng: random.Random) -> Hashable:
        h = s.state.round
        seat = s.actor
        assert seat is not None
        if h.phase == "declare":
            return medium_declaration(h.hands[seat])
        k = self._knowledge(s, seat)
        legal = [a.card for a in legal_actions(s.state, seat, s.now)]
        return Action.play(medium_card(k, legal))  # type: ignore[arg-type]

    def rewards(self, s: _Sim) -> Sequence[float]:
        st = s.state
        if st.status == "finished":
            return [1.0 if i in st.winners else 0.0 for i in range(SEATS)]
        if st.round.number == self.round:  # pragma: no cover - to_move stops at the hand's end
            return [0.5] * SEATS
        pts = st.history[self.round - 1]
        total = sum(pts)
        out = []
        for i in range(SEATS):
            others = (total - pts[i]) / (SEATS - 1)
            out.append(min(1.0, max(0.0, 0.5 + (pts[i] - others) / 16.0)))
        return out


class HardBot(HardLevel, TripleCrownBot):
    """SO-ISMCTS (``ismcts.search``) over ``TripleCrownSearch`` within a CPU budget per
    decision (``Bot.remaining``: the set-up is paid from it too); the medium choice is the
    search's ``prior``, kept unless the search finds a move better by two standard errors."""

    def declare(self, memory, k, det, legal, now, rng) -> Action:  # type: ignore[no-untyped-def]
        return self._search(memory, k, now, rng, medium_declaration(k.hand))

    def card(self, memory, k, det, legal, now, rng) -> Action:  # type: ignore[no-untyped-def]
        out = set(k.unseen())
        cards = [a.card for a in legal]
        if len(_classes(k.hand, cards, out)) == 1:
            return Action.play(min(cards, key=_rank))  # type: ignore[arg-type]
        prior = medium_card(k, cards)  # type: ignore[arg-type]
        # The search plays the lowest card of each equivalent run: so does its prior.
        return self._search(memory, k, now, rng, Action.play(_representative(prior, cards, out)))

    def _search(
        self, memory: Observation, k: Knowledge, now: int, rng: random.Random, prior: Action
    ) -> Action:
        action = self.search(TripleCrownSearch(memory, k, now), memory.seat, rng, prior)
        assert isinstance(action, Action)
        return action


#: The seat's legal actions at ``now`` (``base.Level.legal_now``).
legal_now = TripleCrownBot.legal_now

#: The levels, by name (``games.bots.bot_for("triple_crown", level)``).
BOTS: dict[str, type[TripleCrownBot]] = {
    "random": RandomBot,
    "easy": EasyBot,
    "medium": MediumBot,
    "hard": HardBot,
}

__all__ = [
    "BOTS",
    "KIND",
    "Determiniser",
    "EasyBot",
    "HardBot",
    "Knowledge",
    "MediumBot",
    "RandomBot",
    "TripleCrownBot",
    "TripleCrownSearch",
    "behaviour",
    "check_view",
    "crown_beliefs",
    "legal_now",
    "medium_card",
    "medium_declaration",
    "track",
]
