"""Cribbage's bots: what a seat knows, the determiniser, the rollout policy, and the four levels.

Everything here starts from an ``Observation`` (the seat's redacted views and events, see
``observation``), exactly as ``games.bots.crisp`` does.  Three layers:

1. ``track(memory)`` -> ``Knowledge``: the seat's own six cards and its crib cards, every card
   the opponent played, the starter, the crib once it is shown, and what the opponent's *lack*
   of a move proved (rules/cribbage.md C7-C9): a "go" at count c, or being the last to play in
   a count that ended below 31, means it held no card worth 31 - c or less -- and since cards
   are never drawn, nor does it now.  A play timeout (C29: the lowest playable card in hand
   order) and a lay-away timeout (the two highest cards) prove what it did not hold as well.
2. ``Determiniser(memory)``: samples full hypothetical ``GameState``\\ s consistent with that
   knowledge: the opponent's unplayed cards, its crib cards while hidden, the starter before the
   cut and the stock, dealt from the unseen cards -- uniformly among the deals that respect
   every proof above (exactly, not by rejection).  The seat's own view of every sample equals
   its view of the true state (tests/bots/test_bots_cribbage.py).
3. The levels: ``RandomBot``, ``EasyBot`` (simple, a little random), ``MediumBot`` (discards to
   maximise the expected hand minus the crib -- plus it when dealing -- over every possible
   starter, pegs safely), ``HardBot`` (lays away by the exact expected hand and crib plus the
   kept cards' pegging, solved exactly over sampled opponent hands; plays by SO-ISMCTS over
   ``CribbageSearch``: the engine's own ``legal_actions``/``apply`` on determinisations, to
   the end of the hand's show, with the rest of the play solved exactly in each world:
   ``best_peg``).

Only two moves exist (a lay-away and a card in the play); go, the counts and the show are the
engine's.  A bot returns ``None`` only when its seat has nothing to do.
"""

from __future__ import annotations

import random
import time
from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field
from itertools import combinations
from math import comb
from typing import Any

from games.engines import engine_for
from games.engines.cribbage import (
    FULL_DECK,
    Action,
    GameState,
    Settings,
    apply,
    legal_actions,
    rank,
    score_hand,
    score_pegging,
    sort_cards,
    value,
)

from .base import Budget, EasyLevel, HardLevel, Level, MediumLevel, RandomLevel
from .ismcts import EngineSearch, World
from .observation import Observation, ObservationError

KIND = "cribbage"
_ORDER = {c: i for i, c in enumerate(FULL_DECK)}  # hand order (C2, C29): FULL_DECK is sorted


# ================================================================================================
# Per-game payload check (called by Memory.observe)
# ================================================================================================
def check_view(view: dict[str, Any], seat: int) -> None:
    """Refuse a Cribbage view that shows what ``seat`` may not see: the other seat's hand
    before the game is over, or a ``you`` block that is not this seat's own hand."""
    hands = view.get("hands")
    if type(hands) is not list or len(hands) != 2 or seat not in (0, 1):
        raise ObservationError("view: not a two-seat cribbage view")
    if view.get("status") != "finished" and hands[1 - seat] is not None:
        raise ObservationError("view: the other seat's hand before the end")
    you = view["you"]
    if you.get("hand") != hands[seat]:
        raise ObservationError("view: 'you' is not this seat's hand")


# ================================================================================================
# Knowledge
# ================================================================================================
@dataclass(slots=True)
class Knowledge:
    """What the seat knows of the current hand (see the module docstring)."""

    seat: int
    round: int
    six: list[str]  # the seat's own six dealt cards
    discards: list[str] | None  # its own two crib cards
    opp_played: list[str]
    opp_hand_size: int
    opp_laid: bool
    opp_discards: list[str] | None  # known once the crib is public
    starter: str | None
    #: cards the opponent cannot still hold (a go, a count it could not continue, a timeout)
    opp_excluded: set[str] = field(default_factory=set)
    #: the opponent laid away by timeout: its crib cards are its two highest (C29)
    opp_lay_timeout: bool = False
    clock: int = 0
    dealt_at: int | None = None
    last_seat: int | None = None
    complete: bool = True

    def seen(self) -> set[str]:
        out = set(self.six) | set(self.opp_played)
        if self.starter is not None:
            out.add(self.starter)
        if self.opp_discards:
            out |= set(self.opp_discards)
        return out

    def unseen(self) -> list[str]:
        """The cards whose place the seat does not know, in hand order."""
        s = self.seen()
        return [c for c in FULL_DECK if c not in s]


def _fitting(count: int) -> set[str]:
    """The cards that fit at ``count`` (keep it at 31 or less): a seat that could not play at
    ``count`` holds none of them (C7, C8)."""
    return {c for c in FULL_DECK if count + value(c) <= 31}


def track(memory: Observation) -> Knowledge:
    """Replay ``memory``'s hand into ``Knowledge`` (public facts from the latest view, proofs
    from the events this seat received)."""
    view = memory.view
    if view is None:
        raise ObservationError("nothing observed yet")
    me = memory.seat
    opp = 1 - me
    you = view["you"]
    played = view["played"]
    six: list[str] | None = None
    events = memory.events
    complete = bool(events) and events[0]["type"] == "round_dealt" and memory.anchor is None
    if complete and events[0]["data"]["round"] == view["round"]:
        six = list(events[0]["data"]["hands"][me])
    if six is None:
        complete = False
        six = sort_cards([*you["hand"], *(you["discards"] or []), *played[me]])
    crib = view.get("crib")
    opp_discards = None
    if crib is not None and you["discards"] is not None:
        opp_discards = [c for c in crib if c not in you["discards"]]
    k = Knowledge(
        seat=me,
        round=view["round"],
        six=six,
        discards=list(you["discards"]) if you["discards"] is not None else None,
        opp_played=list(played[opp]),
        opp_hand_size=view["hand_sizes"][opp],
        opp_laid=view["laid_away"][opp],
        opp_discards=opp_discards,
        starter=view["starter"],
        complete=complete,
    )
    clock = None
    for ev in events:
        d = ev["data"]
        if d.get("round") not in (None, view["round"]):
            continue
        at = d.get("at")
        if isinstance(at, int):
            clock = at if clock is None else max(clock, at)
        t = ev["type"]
        if t == "round_dealt":
            k.dealt_at = d["at"]
        elif t == "go" and d["seat"] == opp:
            k.opp_excluded |= _fitting(d["count"])
        elif t == "count_over" and d["last_seat"] == opp and d["count"] < 31:
            # It played the count's last card and could not continue (C8, C9).
            k.opp_excluded |= _fitting(d["count"])
        elif t == "play":
            k.last_seat = d["seat"]
            if d["seat"] == opp and d["timeout"]:
                # C29: the lowest playable card in hand order, so none lower that fitted.
                before = d["count"] - value(d["card"])
                x = _ORDER[d["card"]]
                k.opp_excluded |= {
                    c for c in FULL_DECK if before + value(c) <= 31 and _ORDER[c] < x
                }
        elif t == "laid_away" and d["seat"] == opp and d["timeout"]:
            k.opp_lay_timeout = True
    # The view's own go flags (enough for a seat that sat in mid-count).
    if view["go"][opp]:
        k.opp_excluded |= _fitting(view["count"])
    if view["sequence"]:
        k.last_seat = view["sequence"][-1]["seat"]
    k.clock = min(clock if clock is not None else view["now"], view["now"])
    return k


# ================================================================================================
# The determiniser
# ================================================================================================
class Determiniser:
    """Samples full hypothetical states consistent with one seat's knowledge.

    Built once per decision; ``sample(rng)`` deals the unseen cards into the opponent's
    unplayed hand (only cards it may still hold), its hidden crib cards and the stock (whose
    top, before the cut, is the starter).  Uniform over the consistent deals: the opponent's
    hand is drawn from the cards allowed there, the rest among what remains; with a lay-away
    timeout (crib cards above every kept card, C29) the lowest crib card is drawn first,
    weighted by how many deals it leaves, so the result is still exactly uniform.
    """

    def __init__(self, memory: Observation, knowledge: Knowledge | None = None) -> None:
        view = memory.view
        if view is None:
            raise ObservationError("nothing observed yet")
        k = knowledge if knowledge is not None else track(memory)
        self.view = view
        self.knowledge = k
        self.seat = memory.seat
        self.pool = k.unseen()
        self.allowed_hand = [c for c in self.pool if c not in k.opp_excluded]
        self.hidden_discards = 2 if (k.opp_laid and k.opp_discards is None) else 0
        if k.opp_hand_size > len(self.allowed_hand):
            raise ObservationError("the view's cards do not add up to one deck")
        self._weights: list[tuple[str, int]] | None = None
        if self.hidden_discards and k.opp_lay_timeout:
            floor = max((_ORDER[c] for c in k.opp_played), default=-1)
            weights = []
            for m in self.pool:
                o = _ORDER[m]
                if o <= floor:
                    continue
                above = sum(1 for c in self.pool if _ORDER[c] > o)
                below = sum(1 for c in self.allowed_hand if _ORDER[c] < o)
                w = above * comb(below, k.opp_hand_size)
                if w:
                    weights.append((m, w))
            if not weights:
                raise ObservationError("no deal fits the opponent's timed-out lay-away")
            self._weights = weights

    def deal(self, rng: random.Random) -> tuple[list[str], list[str], list[str]]:
        """One consistent split of the unseen cards: (opponent's unplayed hand, its hidden crib
        cards, the rest -- the stock, its first card the starter if not yet cut)."""
        k = self.knowledge
        u = k.opp_hand_size
        if self._weights is not None:
            cards, ws = zip(*self._weights, strict=True)
            m = rng.choices(cards, ws)[0]
            o = _ORDER[m]
            hand = rng.sample([c for c in self.allowed_hand if _ORDER[c] < o], u)
            other = rng.choice([c for c in self.pool if _ORDER[c] > o])
            disc = [m, other]
        else:
            hand = rng.sample(self.allowed_hand, u)
            taken = set(hand)
            rest0 = [c for c in self.pool if c not in taken]
            disc = rng.sample(rest0, self.hidden_discards)
        used = set(hand) | set(disc)
        rest = [c for c in self.pool if c not in used]
        rng.shuffle(rest)
        return hand, disc, rest

    def sample(self, rng: random.Random) -> GameState:
        """One hypothetical full state; its seed is the sample's own (later hands are dealt
        from it: a sampled future, not the real one)."""
        v, k = self.view, self.knowledge
        me, opp = self.seat, 1 - self.seat
        hand, disc, rest = self.deal(rng)
        you = v["you"]
        hands: list[list[str]] = [[], []]
        hands[me] = list(you["hand"])
        hands[opp] = sort_cards(hand)
        discards: list[list[str] | None] = [None, None]
        discards[me] = list(k.discards) if k.discards is not None else None
        if k.opp_laid:
            discards[opp] = sort_cards(k.opp_discards if k.opp_discards is not None else disc)
        kept: list[list[str] | None] = [None, None]
        for s in (0, 1):
            if discards[s] is not None:
                kept[s] = sort_cards([*hands[s], *v["played"][s]])
        # The deal (C4): six each, alternately, pone first; the opponent's six are its
        # unplayed cards, the ones it played and its crib cards (or, before its lay-away,
        # just its unplayed six).
        their_six = sort_cards([*hands[opp], *v["played"][opp], *(discards[opp] or [])])
        dealer = v["dealer"]
        pone = 1 - dealer
        by_seat = {me: list(k.six), opp: their_six}
        starter = k.starter if k.starter is not None else rest.pop(0)
        dealt: list[str] = [""] * 12
        dealt[0:12:2] = by_seat[pone]
        dealt[1:12:2] = by_seat[dealer]
        deck = [*dealt, starter, *rest]
        t = v["turn"]
        ms = Settings.from_json(v["settings"]).move_ms  # turn_seconds when turn-based
        dealt_at = k.dealt_at
        if v["lay_away_deadline"] is not None and ms is not None:
            dealt_at = v["lay_away_deadline"] - ms
        if dealt_at is None:
            dealt_at = k.clock
        rnd = {
            "number": v["round"],
            "dealer": dealer,
            "dealt_at": dealt_at,
            "deck": deck,
            "hands": hands,
            "kept": kept,
            "discards": discards,
            "phase": v["phase"],
            "starter": k.starter,
            "his_heels": v["his_heels"],
            "played": [list(p) for p in v["played"]],
            "count": v["count"],
            "sequence": [[x["seat"], x["card"]] for x in v["sequence"]],
            "go": list(v["go"]),
            "turn": t["seat"] if t else None,
            "turn_since": t["since"] if t else None,
            "move_no": t["move"] if t else _moves_so_far(v),
            "last_seat": k.last_seat,
            "pegged": list(v["pegged"]),
            "points": list(v["hand_points"]),
            "shows": [dict(s) for s in v["shows"]],
        }
        st = {
            "settings": dict(v["settings"]),
            "seed": f"bot-sample-{rng.getrandbits(64):016x}",
            "decks": None,
            "cuts": [list(c) for c in v["cut_for_deal"]["cuts"]],
            "first_dealer": v["cut_for_deal"]["dealer"],
            "status": v["status"],
            "scores": list(v["scores"]),
            "back_pegs": [p["back"] for p in v["pegs"]],
            "winners": list(v["winners"]),
            "history": [list(h) for h in v["history"]],
            "last_hand": v["last_hand"],
            "round": rnd,
            "clock": k.clock,
            "seats": 2,
        }
        return GameState.from_json(st)


def _moves_so_far(view: dict[str, Any]) -> int:
    """The play-move number when nobody is on turn: 0 in the lay-away (the rules number a
    hand's play moves from its first turn)."""
    return 0 if view["phase"] == "lay_away" else len(view["played"][0]) + len(view["played"][1])


# ================================================================================================
# Evaluation shared by the levels
# ================================================================================================
def expected_hand(keep: Sequence[str], starters: Sequence[str]) -> float:
    """The average show of ``keep`` over the possible starters."""
    return sum(score_hand(keep, s, is_crib=False).total for s in starters) / len(starters)


def discard_values(
    six: Sequence[str], unseen: Sequence[str], dealer: bool, rng: random.Random, crib_samples: int
) -> list[tuple[float, tuple[str, str]]]:
    """For every lay-away: expected hand +/- expected crib (``+`` when the crib is the seat's).

    The hand's expectation is exact over every unseen starter; the crib's is estimated on
    ``crib_samples`` random (opponent's two crib cards, starter) triples drawn from the unseen
    cards -- the same triples for every lay-away (common random numbers), so the comparison
    between lay-aways is much sharper than the estimate itself.
    """
    triples = []
    pool = list(unseen)
    for _ in range(crib_samples):
        a, b, s = rng.sample(pool, 3)
        triples.append((a, b, s))
    sign = 1.0 if dealer else -1.0
    out = []
    for d in combinations(six, 2):
        keep = [c for c in six if c not in d]
        hand = expected_hand(keep, pool)
        crib = 0.0
        if crib_samples:
            crib = sum(
                score_hand([d[0], d[1], a, b], s, is_crib=True).total for a, b, s in triples
            ) / len(triples)
        out.append((hand + sign * crib, (d[0], d[1])))
    return out


# ------------------------------------------------------------------------------------------------
# Exact lay-away expectations (hard): hand and crib, over every starter and opponent discard
# ------------------------------------------------------------------------------------------------
#: Fifteens, pairs and runs of five ranks (sorted), the part of a show that suits never touch:
#: filled lazily (at most 6,175 multisets), shared by every hand and crib, every decision.
_SHOW_RANKS: dict[tuple[int, ...], int] = {}


def show_rank_points(ranks: tuple[int, ...]) -> int:
    """The show's points of five sorted ranks without flush and nobs (C13-C16): fifteens (2
    each), pairs (2 each), the longest run of three or more times its multiplicity.  Checked
    against the engine's ``score_hand`` (tests/bots/test_bots_cribbage.py)."""
    known = _SHOW_RANKS.get(ranks)
    if known is not None:
        return known
    vals = [_rank_value(r) for r in ranks]
    pts = 0
    for n in range(2, 6):
        pts += 2 * sum(1 for combo in combinations(vals, n) if sum(combo) == 15)
    pts += 2 * sum(1 for a, b in combinations(ranks, 2) if a == b)
    mult = {r: ranks.count(r) for r in ranks}
    best_len, best_mult, run_len, run_mult, prev = 0, 0, 0, 1, None
    for r in sorted(mult):
        if prev is not None and r == prev + 1:
            run_len += 1
            run_mult *= mult[r]
        else:
            run_len, run_mult = 1, mult[r]
        if run_len > best_len:
            best_len, best_mult = run_len, run_mult
        prev = r
    if best_len >= 3:
        pts += best_len * best_mult
    _SHOW_RANKS[ranks] = pts
    return pts


def _rank_counts(unseen: Sequence[str]) -> list[int]:
    counts = [0] * 14
    for c in unseen:
        counts[rank(c)] += 1
    return counts


def _suit_counts(unseen: Sequence[str]) -> dict[str, int]:
    out = dict.fromkeys("CDHS", 0)
    for c in unseen:
        out[c[1]] += 1
    return out


def exact_hand(keep: Sequence[str], unseen: Sequence[str]) -> float:
    """The exact average show of ``keep`` over every starter in ``unseen`` -- what
    ``expected_hand`` computes with 46 engine scorings, from the rank table and two suit
    terms (the flush: 4, or 5 with a starter of its suit; nobs: a kept Jack whose suit the
    starter has)."""
    n = len(unseen)
    counts = _rank_counts(unseen)
    suits = _suit_counts(unseen)
    kr = [rank(c) for c in keep]
    total = 0
    for r in range(1, 14):
        if counts[r]:
            total += counts[r] * show_rank_points(tuple(sorted((*kr, r))))
    extra = 0.0
    if len({c[1] for c in keep}) == 1:
        extra += 4 + suits[keep[0][1]] / n
    for c in keep:
        if c[0] == "J":
            extra += suits[c[1]] / n
    return total / n + extra


def exact_crib(discard: Sequence[str], unseen: Sequence[str]) -> float:
    """The exact average crib for the seat's two ``discard``\\ s: over every pair of unseen
    cards the opponent may lay away and every starter among the rest, all equally likely
    (what medium samples 60 of).  The rank part depends only on the three unknown cards as a
    set, so it is a sum over the multisets of three unseen ranks (at most 455); the flush
    (all five of one suit, C17) and nobs (a Jack in the crib, the starter of its suit) in
    closed form.  Checked against brute force over the engine's ``score_hand``."""
    n = len(unseen)
    counts = _rank_counts(unseen)
    suits = _suit_counts(unseen)
    d0, d1 = rank(discard[0]), rank(discard[1])
    total = 0
    weight = 0
    for a in range(1, 14):
        ca = counts[a]
        if not ca:
            continue
        for b in range(a, 14):
            cb = counts[b] - (a == b)
            if cb <= 0:
                continue
            for c in range(b, 14):
                cc = counts[c] - (a == c) - (b == c)
                if cc <= 0:
                    continue
                # Ways to pick cards of ranks a <= b <= c as a set (multiset coefficients).
                if a == b == c:
                    w = comb(counts[a], 3)
                elif a == b:
                    w = comb(counts[a], 2) * counts[c]
                elif b == c:
                    w = counts[a] * comb(counts[b], 2)
                else:
                    w = counts[a] * counts[b] * counts[c]
                weight += w
                total += w * show_rank_points(tuple(sorted((d0, d1, a, b, c))))
    ev = total / weight
    pairs = comb(n, 2)
    if discard[0][1] == discard[1][1]:
        u = suits[discard[0][1]]
        ev += 5 * comb(u, 2) * (u - 2) / (pairs * (n - 2))
    for c in discard:
        if c[0] == "J":
            ev += suits[c[1]] / n  # the starter is any unseen card, equally likely
    for c in unseen:
        if c[0] == "J":
            # This Jack among the opponent's two, the starter another card of its suit.
            ev += (suits[c[1]] - 1) / pairs
    return ev


def exact_discard_values(
    six: Sequence[str], unseen: Sequence[str], dealer: bool
) -> list[tuple[float, tuple[str, str]]]:
    """``discard_values`` without sampling: for every lay-away, the exact expected hand plus
    (dealing) or minus (pone) the exact expected crib.  Medium's 60 sampled cribs put about
    half a point of noise between two lay-aways; this is the ranking hard builds on."""
    sign = 1.0 if dealer else -1.0
    out = []
    crib_memo: dict[tuple[int, int, str, str], float] = {}
    for d in combinations(six, 2):
        keep = [c for c in six if c not in d]
        # The crib depends on the discard's ranks, whether it is suited and which Jack it
        # holds: lay-aways equal in those share one computation.
        key = (
            rank(d[0]),
            rank(d[1]),
            d[0][1] if d[0][1] == d[1][1] else "",
            "".join(sorted(c for c in d if c[0] == "J")),
        )
        crib = crib_memo.get(key)
        if crib is None:
            crib = crib_memo[key] = exact_crib(d, unseen)
        out.append((exact_hand(keep, unseen) + sign * crib, (d[0], d[1])))
    return out


def _peg_points(sequence: Sequence[str], card: str) -> int:
    return score_pegging([*sequence, card]).points


def safe_peg(
    hand: Sequence[str],
    playable: Sequence[str],
    sequence: Sequence[str],
    count: int,
    unseen: Sequence[str],
    opp_cards: int,
    caution: float = 0.8,
) -> str:
    """The medium pegging rule: take what the card scores now, minus ``caution`` times what
    the opponent is expected to score straight back (its best reply among the ranks it may
    hold, each held with the chance the unseen cards give), with small preferences that good
    players share: do not lead a five or a card that leaves 5 or 21, lead from a pair, keep
    low cards for the end of a count.
    """
    n = len(unseen)
    best = None
    by_rank: dict[int, list[str]] = {}
    for c in unseen:
        by_rank.setdefault(rank(c), []).append(c)
    for card in playable:
        now_pts = _peg_points(sequence, card)
        seq = [*sequence, card]
        cnt = count + value(card)
        risk = 0.0
        if opp_cards and n and cnt < 31:
            replies = []
            for cards in by_rank.values():
                c = cards[0]
                if cnt + value(c) > 31:
                    continue
                pts = _peg_points(seq, c)
                if pts:
                    # P(the opponent holds at least one card of this rank)
                    p = 1.0 - comb(n - len(cards), opp_cards) / comb(n, opp_cards)
                    replies.append((pts, p))
            replies.sort(reverse=True)
            left = 1.0
            for pts, p in replies:
                risk += left * p * pts
                left *= 1.0 - p
        score = now_pts - caution * risk
        if not sequence:
            if value(card) == 5:
                score -= 0.6
            if value(card) < 5:
                score += 0.3
            if sum(1 for h in hand if rank(h) == rank(card)) >= 2:
                score += 0.2
        if cnt in (5, 21):
            score -= 0.3
        score += 0.01 * value(card)  # shed high cards first: low ones win the go later
        if best is None or score > best[0]:
            best = (score, card)
    assert best is not None
    return best[1]


# ================================================================================================
# The levels
# ================================================================================================
class CribbageBot(Level):
    """Cribbage's frame (``base.Level``): the level's lay-away or card among the engine's
    legal actions at ``now``."""

    kind = KIND
    knowledge = track
    determiniser = Determiniser
    legal_actions = legal_actions

    def policy(self, memory, k, det, legal, now, rng) -> Action:  # type: ignore[no-untyped-def]
        if legal[0].type == "lay_away":
            return self.lay_away(memory, k, det, legal, now, rng)
        return self.play(memory, k, det, legal, now, rng)

    def lay_away(
        self,
        memory: Observation,
        k: Knowledge,
        det: Determiniser,
        legal: list[Action],
        now: int,
        rng: random.Random,
    ) -> Action:
        raise NotImplementedError

    def play(
        self,
        memory: Observation,
        k: Knowledge,
        det: Determiniser,
        legal: list[Action],
        now: int,
        rng: random.Random,
    ) -> Action:
        raise NotImplementedError


class RandomBot(RandomLevel, CribbageBot):
    """Uniformly random among the legal actions: the benchmark floor."""


class EasyBot(EasyLevel, CribbageBot):
    """Legal, simple moves with some randomness: keeps the four cards that score best with one
    guessed starter (a fifth of the time any four), pegs what scores at once, else a random
    card -- no thought of the crib or of the opponent's reply."""

    wander = 0.2

    def lay_away(self, memory, k, det, legal, now, rng) -> Action:  # type: ignore[no-untyped-def]
        if rng.random() < self.wander:
            return legal[rng.randrange(len(legal))]
        guess = rng.choice(k.unseen())
        hand = memory.view["you"]["hand"]  # type: ignore[index]
        best = max(
            legal,
            key=lambda a: (
                score_hand([c for c in hand if c not in a.cards], guess, is_crib=False).total,
                rng.random(),
            ),
        )
        return best

    def play(self, memory, k, det, legal, now, rng) -> Action:  # type: ignore[no-untyped-def]
        seq = [x["card"] for x in memory.view["sequence"]]  # type: ignore[index]
        scored = [(_peg_points(seq, a.card), a) for a in legal]
        top = max(p for p, _ in scored)
        if top > 0:
            return rng.choice([a for p, a in scored if p == top])
        return legal[rng.randrange(len(legal))]


class MediumBot(MediumLevel, CribbageBot):
    """Remembers everything; discards to maximise the expected hand minus the crib (plus the
    crib when it is the seat's) over every starter still possible, and pegs safely
    (``safe_peg``)."""

    crib_samples = 60

    def lay_away(self, memory, k, det, legal, now, rng) -> Action:  # type: ignore[no-untyped-def]
        vals = discard_values(
            k.six, k.unseen(), memory.view["dealer"] == memory.seat, rng, self.crib_samples
        )  # type: ignore[index]
        _, (a, b) = max(vals)
        return Action.lay_away(a, b)

    def play(self, memory, k, det, legal, now, rng) -> Action:  # type: ignore[no-untyped-def]
        v = memory.view
        assert v is not None
        card = safe_peg(
            v["you"]["hand"],
            [a.card for a in legal],  # type: ignore[misc]
            [x["card"] for x in v["sequence"]],
            v["count"],
            det.pool,
            k.opp_hand_size,
        )
        return Action.play(card)


# ================================================================================================
# The play, solved exactly in one world (hard's rollout policy)
# ================================================================================================
#: A position of the play, in ranks (1-13; suits never count in the play, C11): (hands,
#: the count's ranks, count, go flags, seat to play).  Hands are sorted, so one solution
#: serves every position equal up to suits and order -- across worlds and searches.
PegPosition = tuple[
    tuple[tuple[int, ...], tuple[int, ...]], tuple[int, ...], int, tuple[bool, bool], int
]


def _rank_value(r: int) -> int:
    return 10 if r > 10 else r


#: The solver's memos: plain dicts of int tuples, which the garbage collector stops tracking,
#: where an ``lru_cache`` keeps a tracked list per entry -- hundreds of thousands of them for
#: every generation-2 pass to walk, inside a decision's budget.  Emptied before a search once
#: large (``trim_memos``).
_POINTS: dict[tuple[int, ...], int] = {}
_VALUES: dict[PegPosition, int] = {}
_MEMO_MAX = 100_000


def trim_memos() -> None:
    """Empty the solver's memos once they are large -- called before a search, so the cost of
    freeing them (and of a big dict's resize) is taken out of that decision's search budget
    instead of landing inside it (emptied inside a search at 400,000 entries, the worst of 4
    quiet games was 253 ms; emptied before one at 100,000, 198 ms: bench/RESULTS.md)."""
    if len(_VALUES) >= _MEMO_MAX or len(_POINTS) >= _MEMO_MAX:
        _VALUES.clear()
        _POINTS.clear()


def peg_points(ranks: tuple[int, ...]) -> int:
    """What the last of the count's cards scores (C11), from ranks: fifteen or 31 (2), the
    pair, pair royal or double pair royal at the tail (2/6/12), the longest run of three or
    more distinct consecutive ranks at the tail, in any order.  The engine's
    ``score_pegging`` in ranks, checked against it over random counts
    (tests/bots/test_bots_cribbage.py)."""
    known = _POINTS.get(ranks)
    if known is not None:
        return known
    pts = 0
    count = sum(_rank_value(r) for r in ranks)
    if count in (15, 31):
        pts += 2
    same = 1
    while same < len(ranks) and same < 4 and ranks[-1 - same] == ranks[-1]:
        same += 1
    pts += (0, 0, 2, 6, 12)[same]
    for n in range(len(ranks), 2, -1):
        tail = ranks[-n:]
        lo = min(tail)
        if len(set(tail)) == n and max(tail) - lo == n - 1:
            pts += n
            break
    _POINTS[ranks] = pts
    return pts


def peg_step(pos: PegPosition, r: int) -> tuple[PegPosition | None, tuple[int, int]]:
    """A card of rank ``r`` played by the seat to play: the next position (``None`` when the
    play is over) and the points each seat pegged on the way -- the card's own (C11), then go
    and the last card's point as the engine's ``_after_play``/``_end_count`` give them
    (C7-C10; who leads after a count: the other seat if it has cards left).  A copy of the
    play's order for speed, checked against the engine over random hands
    (tests/bots/test_bots_cribbage.py); a wrong copy could only make hard choose worse, never
    move illegally: the engine applies every move."""
    hands, ranks, count, go, p = pos
    hand = list(hands[p])
    hand.remove(r)
    new_hands = (tuple(hand), hands[1]) if p == 0 else (hands[0], tuple(hand))
    ranks = (*ranks, r)
    count += _rank_value(r)
    pts = [0, 0]
    pts[p] += peg_points(ranks)
    o = 1 - p
    if count != 31 and (new_hands[0] or new_hands[1]):
        if not go[o] and any(count + _rank_value(c) <= 31 for c in new_hands[o]):
            return (new_hands, ranks, count, go, o), (pts[0], pts[1])
        go = (True, go[1]) if o == 0 else (go[0], True)
        if any(count + _rank_value(c) <= 31 for c in new_hands[p]):
            return (new_hands, ranks, count, go, p), (pts[0], pts[1])
    if count < 31:
        pts[p] += 1  # the last card (C9)
    if not (new_hands[0] or new_hands[1]):
        return None, (pts[0], pts[1])
    lead = o if new_hands[o] else p
    return (new_hands, (), 0, (False, False), lead), (pts[0], pts[1])


def peg_value(pos: PegPosition) -> int:
    """Seat 0's pegging points minus seat 1's from ``pos`` to the end of the play, both seats
    playing perfectly with every card known (minimax over the few cards left)."""
    known = _VALUES.get(pos)
    if known is not None:
        return known
    hands, _, count, _, p = pos
    best = None
    for r in set(hands[p]):
        if count + _rank_value(r) > 31:
            continue
        nxt, (a, b) = peg_step(pos, r)
        v = a - b + (peg_value(nxt) if nxt is not None else 0)
        if best is None or (v > best if p == 0 else v < best):
            best = v
    assert best is not None, "peg_value of a position whose seat cannot play"
    _VALUES[pos] = best
    return best


def best_peg(hand: Sequence[str], pos: PegPosition) -> str:
    """The card of ``hand`` (the seat to play's cards) that pegs best, every card known
    (``peg_value``); among equal ones the highest first (low cards win a later go), so the
    choice is deterministic."""
    _, _, count, _, p = pos
    sign = 1 if p == 0 else -1
    best = None
    for card in sorted(hand, key=lambda c: -_ORDER[c]):
        r = rank(card)
        if count + _rank_value(r) > 31:
            continue
        nxt, (a, b) = peg_step(pos, r)
        v = sign * (a - b + (peg_value(nxt) if nxt is not None else 0))
        if best is None or v > best[0]:
            best = (v, card)
    assert best is not None
    return best[1]


def peg_position(r: Any) -> PegPosition:
    """The play's position in an engine ``Round`` whose seat ``r.turn`` is to play."""
    return (
        (tuple(sorted(rank(c) for c in r.hands[0])), tuple(sorted(rank(c) for c in r.hands[1]))),
        tuple(rank(c) for _, c in r.sequence),
        r.count,
        (bool(r.go[0]), bool(r.go[1])),
        r.turn,
    )


def peg_estimates(
    six: Sequence[str],
    discards: Sequence[tuple[str, str]],
    unseen: Sequence[str],
    dealer: bool,
    budget: Budget,
    rng: random.Random,
) -> tuple[dict[tuple[str, str], float], int]:
    """The expected pegging (the seat's points minus the opponent's over the whole play) of
    keeping what each of ``discards`` leaves, estimated over sampled opponent hands: six
    unseen cards, of which it keeps four by the rollout's rule (``_quick_lay_away``), the play
    then solved exactly (``peg_value``; the pone leads, C6).  Every lay-away meets the same
    hands (common random numbers), so their differences are sharper than each mean; as many
    hands as ``budget`` allows (its ``max_iterations`` caps them).  Perfect information flatters
    both seats alike -- what the difference between two keeps is meant to show is which four
    cards peg better, which is mostly about ranks: fives, low cards for a go, pairs.  Returns
    the estimates and how many hands they rest on."""
    t0 = time.thread_time()
    keeps = {d: tuple(sorted(rank(c) for c in six if c not in d)) for d in discards}
    sums = dict.fromkeys(discards, 0.0)
    me_to_lead = 0 if not dealer else 1  # the seat is 0 in the position; the pone leads
    pool = list(unseen)
    worlds = 0
    # A margin: a world's cost varies (a fresh play costs ~1.4 ms to solve, a memo hit ~0),
    # and the memo dict's growth lands in a world now and then.
    limit = 0.85 * budget.cpu_ms / 1000.0
    cap = budget.max_iterations
    last, slowest = t0, 0.0
    while True:
        opp6 = rng.sample(pool, 6)
        opp_keep = [c for c in opp6 if c not in _quick_lay_away(opp6, not dealer).cards]
        theirs = tuple(sorted(rank(c) for c in opp_keep))
        for d in discards:
            sums[d] += peg_value(((keeps[d], theirs), (), 0, (False, False), me_to_lead))
        worlds += 1
        if cap is not None and worlds >= cap:
            break
        now = time.thread_time()
        slowest = max(slowest, now - last)
        last = now
        if now - t0 + 1.5 * slowest >= limit:  # stop before a world would overrun
            break
    return {d: s / worlds for d, s in sums.items()}, worlds


# ================================================================================================
# Hard: SO-ISMCTS over the engine
# ================================================================================================
class CribbageSearch(EngineSearch[World]):
    """Cribbage's knowledge for the search on the engine (``ismcts.EngineSearch``), to the end
    of the current hand.

    The lay-away is simultaneous; the search linearises it with the root seat first and folds
    the opponent's lay-away (which the root seat never sees) into the same step, by the
    rollout policy, so the tree never branches on a hidden choice.  What the root seat
    observes beyond an action is the starter (once cut); every card played is public.  Reward:
    the hand's points difference, squashed into [0, 1]; a game won in the hand is worth 1.
    """

    def __init__(self, memory: Observation, knowledge: Knowledge, now: int) -> None:
        super().__init__(engine_for(KIND), Determiniser(memory, knowledge), memory.seat, now)
        self.round = knowledge.round

    def mover(self, s: World) -> int | None:
        st = s.state
        if st.status != "playing" or st.round.number != self.round:
            return None
        r = st.round
        if r.phase == "lay_away":
            if r.discards[self.seat] is None:
                return self.seat
            return 1 - self.seat  # only while the root seat has laid away already
        return r.turn

    def observe(self, s: World, action: Action, events: list[Any]) -> Hashable:
        st = s.state
        r = st.round
        if action.type == "lay_away" and r.phase == "lay_away" and r.number == self.round:
            o = 1 - s.actor  # type: ignore[operator]
            if r.discards[o] is None:
                st, _ = apply(st, o, _quick_lay_away(r.hands[o], r.dealer == o), s.now)
                s.state = st
        r = st.round
        if action.type == "lay_away" and r.number == self.round:
            return r.starter
        return None

    def rollout_action(self, s: World, rng: random.Random) -> Hashable:
        seat = s.actor
        assert seat is not None
        r = s.state.round
        if r.phase == "lay_away":
            return _quick_lay_away(r.hands[seat], r.dealer == seat)
        # The rest of the play solved exactly in this world (``best_peg``): perfect-information
        # Monte Carlo over the sampled worlds, the strongest cheap policy for a few cards.
        return Action.play(best_peg(r.hands[seat], peg_position(r)))

    def rewards(self, s: World) -> Sequence[float]:
        st = s.state
        if st.status == "finished":
            return [1.0 if i in st.winners else 0.0 for i in (0, 1)]
        pts = st.history[self.round - 1] if st.round.number != self.round else st.round.points
        d = pts[0] - pts[1]
        a = min(1.0, max(0.0, 0.5 + d / 40.0))
        return [a, 1.0 - a]


def _quick_lay_away(hand: Sequence[str], dealer: bool) -> Action:
    """The rollout's lay-away: the four cards that score best on their own (starter-free: a
    card of no suit and no value that joins nothing), crib cards worth keeping together when
    dealing.  Cheap -- 15 small scorings -- which is what a rollout can afford."""
    best = None
    for d in combinations(hand, 2):
        keep = [c for c in hand if c not in d]
        sc = score_pegging_free(keep)
        pair = 2 if rank(d[0]) == rank(d[1]) else 0
        fives = sum(1 for c in d if value(c) == 5)
        crib = pair + 2 * fives + (2 if value(d[0]) + value(d[1]) == 15 else 0)
        sc += crib if dealer else -crib
        if best is None or sc > best[0]:
            best = (sc, d)
    assert best is not None
    return Action.lay_away(*best[1])


def score_pegging_free(keep: Sequence[str]) -> int:
    """A four-card hand's own points (fifteens, pairs, runs, flush), with no starter."""
    total = 0
    vals = [value(c) for c in keep]
    for n in (2, 3, 4):
        total += 2 * sum(1 for combo in combinations(vals, n) if sum(combo) == 15)
    ranks = [rank(c) for c in keep]
    total += 2 * sum(1 for a, b in combinations(ranks, 2) if a == b)
    present = set(ranks)
    for length in (4, 3):
        runs = 0
        for low in range(1, 15 - length):
            window = range(low, low + length)
            if all(r in present for r in window):
                mult = 1
                for r in window:
                    mult *= ranks.count(r)
                runs += length * mult
        if runs:
            total += runs
            break
    if len({c[1] for c in keep}) == 1:
        total += 4
    return total


class HardBot(HardLevel, CribbageBot):
    """The lay-away by exact expectation plus pegging, the play by SO-ISMCTS
    (``ismcts.search``) over ``CribbageSearch``, within a CPU budget per decision.

    The lay-away (``best_lay_away``) is not searched: playing a lay-away out to the show adds
    the show's noise to every world, and with three to five worlds per lay-away at 200 ms the
    search never passed the two-standard-error test against medium's choice (bench/RESULTS.md,
    session 5).  Instead the hand and the crib are valued exactly (``exact_discard_values``:
    every starter, every pair the opponent may lay away -- medium samples 60 cribs), and the
    pegging -- which medium ignores -- is added for the best few by the exact play solver over
    sampled opponent hands (``peg_estimates``).  Every card in the play is searched, with
    medium's card as the prior; its play-outs play the rest of the play perfectly in each
    world (``best_peg``), so a card is judged by its exact pegging value averaged over the
    worlds the seat cannot tell apart.
    """

    #: lay-aways whose pegging is estimated: the best by exact hand and crib, at most this
    #: many, and only those within ``peg_window`` points of the best (pegging rarely makes up
    #: more between two keeps)
    candidates = 6
    peg_window = 3.0

    def __init__(self, budget: Budget | None = None) -> None:
        super().__init__(budget)
        self.last_lay_away: dict[tuple[str, str], float] = {}

    def lay_away(self, memory, k, det, legal, now, rng) -> Action:  # type: ignore[no-untyped-def]
        """The exact expected hand and crib (``exact_discard_values``) plus the expected
        pegging of the kept four (``peg_estimates``) -- no search of the show: its noise is
        what kept the earlier lay-away search from ever passing the two-standard-error test."""
        trim_memos()  # before the budget is read: its cost counts against this decision
        dealer = memory.view["dealer"] == memory.seat  # type: ignore[index]
        budget = self.remaining(self.budget)
        return Action.lay_away(*self.best_lay_away(k.six, k.unseen(), dealer, budget, rng))

    def best_lay_away(
        self,
        six: Sequence[str],
        unseen: Sequence[str],
        dealer: bool,
        budget: Budget,
        rng: random.Random,
    ) -> tuple[str, str]:
        """The two cards to lay away from ``six``: the best exact hand and crib
        (``exact_discard_values``) plus estimated pegging (``peg_estimates``) among the
        lay-aways close enough to the best for the pegging to matter.  ``stats.overrides``
        counts the lay-aways the pegging moved off the exact ranking's best."""
        vals = exact_discard_values(six, unseen, dealer)
        vals.sort(reverse=True)
        top = vals[0][0]
        cands = [d for v, d in vals[: self.candidates] if v >= top - self.peg_window]
        self.last_lay_away = {d: v for v, d in vals}
        best = cands[0]
        if len(cands) > 1:
            pegs, worlds = peg_estimates(six, cands, unseen, dealer, budget, rng)
            self.stats.iterations += worlds
            best = max(cands, key=lambda d: self.last_lay_away[d] + pegs[d])
        self.stats.searches += 1
        self.stats.overrides += best != vals[0][1]
        return best

    def play(self, memory, k, det, legal, now, rng) -> Action:  # type: ignore[no-untyped-def]
        v = memory.view
        assert v is not None
        prior = safe_peg(
            v["you"]["hand"],
            [a.card for a in legal],  # type: ignore[misc]
            [x["card"] for x in v["sequence"]],
            v["count"],
            det.pool,
            k.opp_hand_size,
        )
        return self._search(memory, k, now, rng, prior=Action.play(prior))

    def _search(
        self,
        memory: Observation,
        k: Knowledge,
        now: int,
        rng: random.Random,
        prior: Action | None = None,
    ) -> Action:
        """The search of a card in the play, with medium's card as its ``prior``: kept unless
        another card is better by two standard errors of its paired advantage.  Without a
        prior hard took the best *mean* of a few dozen noisy play-outs."""
        trim_memos()  # before ``remaining``: its cost counts against this decision's budget
        action = self.search(CribbageSearch(memory, k, now), memory.seat, rng, prior)
        assert isinstance(action, Action)
        return action


#: The seat's legal actions at ``now`` (``base.Level.legal_now``).
legal_now = CribbageBot.legal_now

#: The levels, by name (``games.bots.bot_for("cribbage", level)``).
BOTS: dict[str, type[CribbageBot]] = {
    "random": RandomBot,
    "easy": EasyBot,
    "medium": MediumBot,
    "hard": HardBot,
}

__all__ = [
    "BOTS",
    "KIND",
    "CribbageBot",
    "CribbageSearch",
    "Determiniser",
    "EasyBot",
    "HardBot",
    "Knowledge",
    "MediumBot",
    "RandomBot",
    "check_view",
    "discard_values",
    "exact_crib",
    "exact_discard_values",
    "exact_hand",
    "legal_now",
    "peg_estimates",
    "safe_peg",
    "show_rank_points",
    "track",
]
