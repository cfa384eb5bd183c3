"""Crisp's bots: what a seat knows, the determiniser, the rollout policy, and the four levels.

Everything here starts from an ``Observation`` (the seat's redacted views and events, see
``observation``).  Three layers:

1. ``track(memory)`` -> ``Knowledge``: replays the round's events as the seat received them
   and keeps, per hand place, the card the seat knows to lie there (its looks, its Jack, the
   cards a Queen showed it, the cards it swapped in, a card it saw taken from the pile), which
   places hold a card swapped in from the deck (never a Jack, Queen or King, section 5), which
   places their *owner* has seen (public: everybody saw who looked, swapped, played a Jack or a
   Queen), the pile, and the deck: unknown until a turnover, after which it is the old pile in
   its known order (R7) -- a perfect memoriser knows every card drawn after a turnover.
2. ``Determiniser(memory)``: samples full hypothetical ``GameState``\\ s consistent with that
   knowledge (the unseen cards dealt at random into the places the seat does not know, with
   the "not a court card" constraint respected).  The seat's own view of every sample equals
   its view of the true state (tests/bots/test_bots_determiniser.py).  Legality at ``now`` is
   asked of the engine on a sample: ``legal_actions`` depends only on what the seat may know.
3. The levels: ``RandomBot``, ``EasyBot`` (simple, forgets), ``MediumBot`` (expected values
   from the unseen cards), ``HardBot`` (SO-ISMCTS over ``CrispSearch``, the engine's own
   ``legal_actions``/``apply`` on determinisations).

Time (docs/BOTS.md, "Time"): a bot decides *at* ``now`` with the engine's deadlines; its
legal actions are the engine's at ``now``.  It calls crisp only inside its window, deciding
once per window (a decision not to call is its own past decision, ``Observation.decisions``:
``open_window`` names the window each was taken in), and it never waits
on purpose: the service layer adds the human-like think time before submitting.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field
from typing import Any

from games.engines import engine_for
from games.engines.crisp import (
    FULL_DECK,
    PLACES,
    Action,
    GameState,
    IllegalAction,
    advance,
    card_value,
    hand_total,
    legal_actions,
)

from .base import Budget, EasyLevel, HardLevel, Level, MediumLevel, RandomLevel
from .ismcts import EngineSearch, World
from .observation import Observation, ObservationError

KIND = "crisp"
L, C, R = 0, 1, 2
CALL = Action.call()
#: R28's "no" to "Call crisp?" in a turn-based game (an engine action, unlike ``PASS``).
NO_CALL = Action.pass_()
#: The search's "do not call in this window" (not an engine action: nothing is submitted).
PASS = "pass"  # noqa: S105 - a move name, not a secret
_MEAN_CARD = sum(card_value(c) for c in FULL_DECK) / 52
_VALUE = {c: card_value(c) for c in FULL_DECK}


#: The determiniser's priors for an opponent's unseen card, by rank, relative to a uniform draw:
#: ``_KEPT_WEIGHT`` for a card its owner chose to swap in from the deck, ``_SEEN_WEIGHT`` for one
#: it looked at and left in place.  Measured (rounded) as how often each rank lies in such a
#: place at call time in 150 medium-vs-medium games -- a sensible player keeps low cards.  They
#: only shape the sampling: no card is ruled out, so every sample stays consistent.
_KEPT_WEIGHT = dict(
    zip("A23456789T", (1.1, 1.4, 1.6, 1.8, 2.2, 2.0, 1.6, 0.8, 0.5, 0.05), strict=True)
)
_SEEN_WEIGHT = dict(
    zip(
        "A23456789TJQK",
        (1, 1.1, 1.1, 1.3, 1.2, 1.3, 1.2, 1, 0.8, 0.65, 0.5, 0.5, 0.6),
        strict=True,
    )
)


def _special(card: str) -> bool:
    return card[0] in "JQK"


# ================================================================================================
# Per-game payload check (called by Memory.observe and Observation)
# ================================================================================================
def check_view(view: dict[str, Any], seat: int) -> None:
    """Refuse a Crisp view that shows what ``seat`` may not see (another seat's or the admin's
    rendering): hand cards before the reveal, another seat's drawn card from the deck."""
    if view.get("reveal") is None:
        for hand in view.get("hands") or []:
            if any(c is not None for c in hand):
                raise ObservationError("view: hand cards before the reveal")
    held = view.get("held")
    if (
        held
        and held.get("card") is not None
        and held.get("seat") != seat
        and held.get("source") != "pile"
    ):
        raise ObservationError("view: another seat's drawn card")


# ================================================================================================
# Knowledge: what the seat knows, replayed from its memory
# ================================================================================================
@dataclass(slots=True)
class Knowledge:
    """The seat's knowledge of the current round (see the module docstring)."""

    seat: int
    seats: int
    round: int
    slots: list[list[str | None]]  # the card the seat knows in each place, or None
    plain: list[list[bool]]  # the card there came from the deck by a swap: not J/Q/K
    aware: list[list[bool]]  # the place's owner has seen the card lying there
    kept: list[list[bool]]  # the owner put it there itself (a swap: chosen, so likely low)
    deck: list[str | None]  # top first; None where unknown
    pile: list[str]
    held: str | None  # the drawn card in play, if the seat knows it
    kings: list[list[Any]]  # [card, extra draws due before it], innermost last
    clock_from: int | None  # when the current draw's clock started
    last_end: list[list[Any] | None]
    turns_taken: int
    clock: int
    dealt_at: int
    complete: bool  # tracked from the deal (False: sat in mid-round)
    consistent: bool = True
    forgotten: int = 0  # private sights dropped on purpose (easy level)

    def known_cards(self) -> list[str]:
        out = [c for h in self.slots for c in h if c is not None]
        out += self.pile
        out += [k[0] for k in self.kings]
        out += [c for c in self.deck if c is not None]
        if self.held is not None:
            out.append(self.held)
        return out

    def unseen(self) -> list[str]:
        """The cards whose place the seat does not know: the pool unknown places are from."""
        known = set(self.known_cards())
        return [c for c in FULL_DECK if c not in known]


def _from_view(view: dict[str, Any], seat: int) -> Knowledge:
    """Public knowledge only, from one view (sitting in mid-round, or after a mismatch)."""
    n = view["seats"]
    revealed = view.get("reveal") is not None
    slots: list[list[str | None]] = (
        [list(h) for h in view["hands"]] if revealed else [[None] * 3 for _ in range(n)]
    )
    looked = view.get("looked") or [False] * n
    t = view.get("turn")
    held = view.get("held")
    return Knowledge(
        seat=seat,
        seats=n,
        round=view["round"],
        slots=slots,
        plain=[[False] * 3 for _ in range(n)],
        aware=[[bool(looked[j]), False, bool(looked[j])] for j in range(n)],
        kept=[[False] * 3 for _ in range(n)],
        deck=[None] * view["deck_size"],
        pile=list(view["pile"]),
        held=held.get("card") if held else None,
        kings=[[c, 0] for c in (t or {}).get("kings_in_play", [])],
        clock_from=None,
        last_end=[None] * n,
        turns_taken=t["no"] if t else 0,
        clock=view["now"],
        dealt_at=view["now"],  # unknown when sitting in; the rules never read it
        complete=False,
    )


def _remembers(salt: str, rnd: int, index: int, recall: float) -> bool:
    """Whether a bot with this ``recall`` keeps private sight number ``index`` of the round:
    a stable pseudo-random draw, so replaying the memory forgets the same things."""
    if recall >= 1.0:
        return True
    h = hashlib.sha256(f"{salt}:{rnd}:{index}".encode()).digest()
    return int.from_bytes(h[:4], "big") / 2**32 < recall


def track(memory: Observation, recall: float = 1.0) -> Knowledge:
    """Replay ``memory``'s round into ``Knowledge``.  ``recall`` < 1 forgets each private sight
    (a look, a drawn card once swapped in, a Jack's or Queen's look) with probability
    1 - ``recall``; public facts (the pile, who swapped what where) are always kept."""
    view = memory.view
    if view is None:
        raise ObservationError("nothing observed yet")
    me = memory.seat
    events = memory.events
    if memory.anchor is not None or not events or events[0]["type"] != "round_dealt":
        k = _from_view(memory.anchor or view, me)
    else:
        n = view["seats"]
        d0 = events[0]["data"]
        k = Knowledge(
            seat=me,
            seats=n,
            round=d0["round"],
            slots=[[None] * 3 for _ in range(n)],
            plain=[[False] * 3 for _ in range(n)],
            aware=[[False] * 3 for _ in range(n)],
            kept=[[False] * 3 for _ in range(n)],
            deck=[None] * d0["deck_size"],
            pile=[],
            held=None,
            kings=[],
            clock_from=None,
            last_end=[None] * n,
            turns_taken=0,
            clock=d0["at"],
            dealt_at=d0["at"],
            complete=True,
        )
        events = events[1:]
    held_kept = True  # the held card will be remembered once swapped in
    for i, ev in enumerate(events):
        d = ev["data"]
        typ = ev["type"]
        at = d.get("at")
        if isinstance(at, int) and at > k.clock:
            k.clock = at
        x = d.get("seat")
        if typ == "look":
            k.aware[x][L] = k.aware[x][R] = True
            if x == me and d["left"] is not None:
                if _remembers(memory.salt, k.round, i, recall):
                    k.slots[me][L], k.slots[me][R] = d["left"], d["right"]
                else:
                    k.forgotten += 1
        elif typ in ("draw_ready", "call_ready"):  # a move's clock starts (R23, R28)
            k.clock_from = at
            k.turns_taken = max(k.turns_taken, d["turn"])
        elif typ == "draw":
            if d["source"] == "deck":
                if not k.deck:
                    k.consistent = False
                    top = None
                else:
                    top = k.deck.pop(0)
                card = d["card"]
                if card is not None and top is not None and card != top:
                    k.consistent = False
                k.held = card if card is not None else top
                held_kept = x != me or _remembers(memory.salt, k.round, i, recall)
                if not held_kept:
                    k.forgotten += 1
            else:
                top = k.pile.pop() if k.pile else None
                if top != d["card"]:
                    k.consistent = False
                k.held = d["card"]
                held_kept = True
        elif typ == "swap":
            p = PLACES.index(d["place"])
            was = k.slots[x][p]
            if was is not None and was != d["card_out"]:
                k.consistent = False
            k.pile.append(d["card_out"])
            k.slots[x][p] = k.held if held_kept else None
            k.plain[x][p] = d["source"] == "deck"
            k.aware[x][p] = k.kept[x][p] = True
            k.held = None
        elif typ == "discard":
            k.pile.append(d["card"])
            k.held = None
        elif typ == "jack":
            k.aware[x][C] = True
            if x == me and d["centre"] is not None:
                if _remembers(memory.salt, k.round, i, recall):
                    k.slots[me][C] = d["centre"]
                else:
                    k.forgotten += 1
            k.pile.append(d["card"])
            k.held = None
        elif typ == "queen":
            p, ts, q = PLACES.index(d["place"]), d["target_seat"], PLACES.index(d["target_place"])
            for arr in (k.slots, k.plain, k.kept):
                arr[x][p], arr[ts][q] = arr[ts][q], arr[x][p]  # type: ignore[index]
            k.kept[x][p] = k.kept[ts][q] = False
            k.aware[x][p] = p != C
            k.aware[ts][q] = q != C
            for who, place, seen in ((x, p, d["received"]), (ts, q, d["given"])):
                if who == me and seen is not None:
                    if k.slots[who][place] is not None and k.slots[who][place] != seen:
                        k.consistent = False
                    if _remembers(memory.salt, k.round, i, recall):
                        k.slots[who][place] = seen
                    else:
                        k.slots[who][place] = None
                        k.forgotten += 1
            k.pile.append(d["card"])
            k.held = None
        elif typ == "king":
            k.kings.append([d["card"], d["extra_draws"] - 2])
            k.held = None
        elif typ == "king_discarded":
            if not k.kings or k.kings[-1][0] != d["card"]:
                k.consistent = False
            if k.kings:
                k.kings.pop()
            k.pile.append(d["card"])
        elif typ == "timeout":
            if d["stage"] == "before_draw":
                top = k.deck.pop(0) if k.deck else None
                if top is not None and top != d["card"]:
                    k.consistent = False
            k.pile.append(d["card"])
            k.held = None
        elif typ == "pile_turned":
            k.deck = list(k.pile)
            k.pile = []
        elif typ == "turn_ended":
            k.last_end[x] = [at, "timeout" if d["timeout"] else "played"]
            k.turns_taken = max(k.turns_taken, d["turn"])
        elif typ == "reveal":
            k.slots = [list(h) for h in d["hands"]]
    # The latest view is the referee: anything our replay disagrees with means we lost track
    # (a frame we never got); then only what the view itself shows is certain.
    if view["round"] != k.round:
        return _from_view(view, me)
    if view.get("reveal") is not None:
        k.slots = [list(h) for h in view["hands"]]
    held = view.get("held")
    if held and held.get("card") is not None:
        if k.held is not None and k.held != held["card"]:
            k.consistent = False
        k.held = held["card"]
    elif not held:
        k.held = None
    if k.pile != view["pile"] or len(k.deck) != view["deck_size"]:
        k.consistent = False
    kings = (view.get("turn") or {}).get("kings_in_play", [])
    if [c[0] for c in k.kings] != kings:
        k.kings = [[c, 0] for c in kings]
    cards = k.known_cards()
    if len(cards) != len(set(cards)):
        k.consistent = False
    if not k.consistent:
        fresh = _from_view(view, me)
        fresh.consistent = False
        return fresh
    return k


# ================================================================================================
# The determiniser
# ================================================================================================
def _window_turns(view: dict[str, Any]) -> dict[int, int]:
    """Seat -> the turn number its open crisp window belongs to (from the deadline keys)."""
    out = {}
    rnd = view["round"]
    by_at = {d["at"]: d["key"] for d in view["deadlines"] if d["kind"] == "window_closed"}
    for w in view["windows"]:
        key = by_at.get(w["closes_at"] + 1)
        if key is not None and key.startswith(f"r{rnd}:t") and key.endswith(":window"):
            out[w["seat"]] = int(key[len(f"r{rnd}:t") : -len(":window")])
    return out


class Determiniser:
    """Samples full hypothetical states consistent with one seat's knowledge.

    Built once per decision (the knowledge replay and the template of everything public are
    shared by all samples); ``sample(rng)`` then only deals the unseen cards.
    """

    def __init__(self, memory: Observation, knowledge: Knowledge | None = None) -> None:
        view = memory.view
        if view is None:
            raise ObservationError("nothing observed yet")
        k = knowledge if knowledge is not None else track(memory)
        self.view = view
        self.knowledge = k
        n = view["seats"]
        self.seat = memory.seat
        positions: list[tuple[str, int, int]] = []  # (where, seat/index, place)
        plain_positions: list[tuple[str, int, int]] = []
        chosen_positions: list[tuple[str, int, int]] = []
        seen_positions: list[tuple[str, int, int]] = []
        for j in range(n):
            for p in range(3):
                if k.slots[j][p] is None:
                    if k.plain[j][p] and k.kept[j][p] and j != memory.seat:
                        chosen_positions.append(("hand", j, p))
                    elif k.plain[j][p]:
                        plain_positions.append(("hand", j, p))
                    elif k.aware[j][p] and j != memory.seat:
                        seen_positions.append(("hand", j, p))
                    else:
                        positions.append(("hand", j, p))
        held = view.get("held")
        self.held_source = held["source"] if held else None
        if held and k.held is None:
            positions.append(("held", 0, 0))
        for i, c in enumerate(k.deck):
            if c is None:
                positions.append(("deck", i, 0))
        pool = k.unseen()
        unknown = len(positions) + len(plain_positions) + len(chosen_positions)
        if len(pool) != unknown + len(seen_positions):
            if k.complete or k.consistent:
                # Our replay and the table disagree on how many cards are unknown: fall back
                # to what the latest view alone shows (always self-consistent).
                fresh = _from_view(view, memory.seat)
                fresh.consistent = False
                self.__init__(memory, fresh)  # type: ignore[misc]
                return
            raise ObservationError("the view's cards do not add up to one deck")
        self.pool_plain = [c for c in pool if not _special(c)]
        self.pool = pool
        self.positions = positions
        self.plain_positions = plain_positions
        self.chosen_positions = chosen_positions
        self.seen_positions = seen_positions
        self._template = self._build_template()

    def _build_template(self) -> dict[str, Any]:
        v, k = self.view, self.knowledge
        n = v["seats"]
        t = v.get("turn")
        wturns = _window_turns(v)
        tt = t["no"] if t else k.turns_taken
        dealer = v["dealer"]
        begun = [False] * n
        for no in range(1, tt):
            begun[(dealer + no) % n] = True
        if t is not None and t["begun"]:
            begun[t["seat"]] = True
        elif t is None and tt:
            begun[(dealer + tt) % n] = True
        windows = []
        last_end = [e[:] if e else None for e in k.last_end]
        for w in v["windows"]:
            no = wturns.get(w["seat"])
            if no is None:  # no deadline key (cannot happen with a well-formed view)
                no = max(i for i in range(1, max(tt, 1) + 1) if (dealer + i) % n == w["seat"])
            windows.append(
                {
                    "seat": w["seat"],
                    "turn_no": no,
                    "opened_at": w["opened_at"],
                    "closes_at": w["closes_at"],
                }
            )
            if last_end[w["seat"]] is None:
                last_end[w["seat"]] = [w["opened_at"], "played"]
        turn = None
        cfg = v["settings"]
        # The move clock: the draw clock live, ``turn_seconds`` in a turn-based game (R28).
        ds = cfg.get("turn_seconds") if cfg.get("pace") == "turn_based" else cfg["draw_seconds"]
        if t is not None:
            if t["phase"] == "start":
                clock_from = None
            elif ds is not None and t["draw_deadline"] is not None:
                clock_from = t["draw_deadline"] - ds * 1000
            else:
                clock_from = k.clock_from if k.clock_from is not None else t["start_at"]
            turn = {
                "no": t["no"],
                "seat": t["seat"],
                "phase": t["phase"],
                "start_at": t["start_at"],
                "final": t["final"],
                "begun": t["begun"],
                "draw_no": t["draw_no"],
                "clock_from": clock_from,
                "extra_draws": t["extra_draws_left"],
                "held": k.held,
                "held_from": self.held_source,
                "kings": [kk[:] for kk in k.kings],
            }
        rv = v.get("reveal")
        rnd = {
            "number": v["round"],
            "dealer": dealer,
            "dealt_at": k.dealt_at,
            "deck_order": list(FULL_DECK),  # replay material only; never read by the rules
            "deck": list(k.deck),
            "pile": list(k.pile),
            "hands": [list(h) for h in k.slots],
            "looked": list(v["looked"]),
            "begun": begun,
            "last_end": last_end,
            "turn": turn,
            "turns_taken": tt,
            "windows": windows,
            "caller": v["caller"],
            "called_at": v["called_at"],
            "finals_done": list(v["finals_done"]),
            "turnovers": v["turnovers"],
            "reveal": dict(rv) if rv is not None else None,
            "next_round_at": v["next_round_at"],
        }
        return {
            "version": 1,
            "seats": n,
            "settings": dict(v["settings"]),
            "seed": "",
            "decks": None,
            "first_dealer": (dealer - (v["round"] - 1)) % n,
            "status": v["status"],
            "scores": list(v["scores"]),
            "history": [list(h) for h in v["history"]],
            "winners": list(v["winners"]),
            "round": rnd,
            "clock": min(k.clock, v["now"]),
        }

    def sample(self, rng: random.Random) -> GameState:
        """One hypothetical state: unseen cards dealt at random into the unknown places, the
        places known to hold a deck card taking non-court cards.  Its seed is the sample's own
        (rounds after this one are dealt from it: a sampled future, not the real one)."""
        plain = self.pool_plain[:]
        chosen = []
        for _ in self.chosen_positions:
            # A card its owner chose to swap in: more likely low (a prior, never a certainty --
            # every unseen non-court card stays possible, so the sample stays consistent).
            i = rng.choices(range(len(plain)), [_KEPT_WEIGHT[c[0]] for c in plain])[0]
            chosen.append(plain.pop(i))
        rng.shuffle(plain)
        chosen += plain[: len(self.plain_positions)]
        taken = set(chosen)
        rest = [c for c in self.pool if c not in taken]
        for _ in self.seen_positions:
            # A card its owner has seen and kept so far: mildly more likely low.
            i = rng.choices(range(len(rest)), [_SEEN_WEIGHT[c[0]] for c in rest])[0]
            chosen.append(rest.pop(i))
        rng.shuffle(rest)
        tpl = self._template
        rnd = dict(tpl["round"])
        hands = [h[:] for h in rnd["hands"]]
        deck = rnd["deck"][:]
        turn = dict(rnd["turn"]) if rnd["turn"] is not None else None
        for (where, a, b), card in zip(
            [*self.chosen_positions, *self.plain_positions, *self.seen_positions, *self.positions],
            [*chosen, *rest],
            strict=True,
        ):
            if where == "hand":
                hands[a][b] = card
            elif where == "deck":
                deck[a] = card
            else:
                assert turn is not None
                turn["held"] = card
        rnd["hands"], rnd["deck"], rnd["turn"] = hands, deck, turn
        st = dict(tpl)
        st["round"] = rnd
        st["seed"] = f"bot-sample-{rng.getrandbits(64):016x}"
        return GameState.from_json(st)


# ================================================================================================
# Shared decision plumbing
# ================================================================================================
def open_window(view: dict[str, Any], seat: int) -> str | None:
    """The key ``"r<round>:t<turn>"`` of ``seat``'s own crisp window open in ``view`` (its
    payload), or ``None``.  ``Memory.record`` files each decision under it: a decision taken
    while the window was open and that did not call *is* the window let pass."""
    no = _window_turns(view).get(seat)
    return None if no is None else f"r{view['round']}:t{no}"


def window_closes(view: dict[str, Any], seat: int) -> int | None:
    """When ``seat``'s own open crisp window closes (inclusive, ms), or ``None``: the service
    layer decides that window at once after the move that opened it and budgets the decision
    to what is left of it (``games.services.game_bot_move``)."""
    for w in view["windows"]:
        if w["seat"] == seat:
            return int(w["closes_at"])
    return None


def _window_key(memory: Observation) -> str | None:
    view = memory.view
    assert view is not None
    return open_window(view, memory.seat)


def _declined(memory: Observation) -> list[str]:
    """The windows of this round the bot decided not to call in: its own past decisions taken
    in an open window of its that were not a call (older rounds dropped)."""
    view = memory.view
    assert view is not None
    prefix = f"r{view['round']}:"
    out: list[str] = []
    for d in memory.decisions:
        if d.window is not None and d.window.startswith(prefix) and d.window not in out:
            wire = d.wire
            if wire is None or wire.get("type") != "call":
                out.append(d.window)
    return out


class CrispBot(Level):
    """Crisp's frame (``base.Level``): take the opening look at once (all but random), decide
    once per crisp window (``wants_call``), then the level's ``policy`` among the engine's
    legal actions (the moves of a turn)."""

    kind = KIND
    knowledge = track
    determiniser = Determiniser
    legal_actions = legal_actions
    recall = 1.0
    takes_look = True

    def track(self, memory: Observation) -> Knowledge:
        return track(memory, self.recall)

    def act(self, memory, k, det, legal, now, rng) -> Action | None:  # type: ignore[no-untyped-def]
        look = Action.look()
        if look in legal and self.takes_look:
            return look
        if NO_CALL in legal:
            # R28 (turn-based): "Call crisp?" is the turn's last step -- the same decision as
            # in a live window, from the same knowledge, answered by an action either way.
            return CALL if self.wants_call(memory, k, det, now, rng) else NO_CALL
        if CALL in legal:
            key = _window_key(memory)
            if key is not None and key in _declined(memory):
                legal = [a for a in legal if a != CALL]
            elif self.wants_call(memory, k, det, now, rng):
                return CALL
            else:  # recorded by the caller as this decision (``open_window``): not asked again
                legal = [a for a in legal if a != CALL]
        legal = [a for a in legal if a != look] if self.takes_look else legal
        if not legal:
            return None
        return self.policy(memory, k, det, legal, now, rng)

    def wants_call(
        self, memory: Observation, k: Knowledge, det: Determiniser, now: int, rng: random.Random
    ) -> bool:
        raise NotImplementedError


# ================================================================================================
# Random, easy, medium
# ================================================================================================
class RandomBot(RandomLevel, CrispBot):
    """Uniformly random among the legal actions (a call is a coin flip): the benchmark floor."""

    takes_look = False

    def wants_call(self, memory, k, det, now, rng) -> bool:  # type: ignore[no-untyped-def]
        return rng.random() < 0.5


class _Estimates:
    """Expected values of places from what is still unseen (the medium level's arithmetic)."""

    def __init__(self, k: Knowledge) -> None:
        pool = k.unseen()
        vals = [card_value(c) for c in pool]
        plain = [card_value(c) for c in pool if not _special(c)]
        low = [v for v in plain if v <= 5]
        self.mean = sum(vals) / len(vals) if vals else _MEAN_CARD
        self.mean_plain = sum(plain) / len(plain) if plain else self.mean
        self.mean_low = sum(low) / len(low) if low else self.mean_plain
        self.k = k

    def mine(self, p: int) -> float:
        c = self.k.slots[self.k.seat][p]
        if c is not None:
            return card_value(c)
        return self.mean_plain if self.k.plain[self.k.seat][p] else self.mean

    def theirs(self, j: int, p: int) -> float:
        """An opponent's place as this seat expects it: known, or a card its owner chose to
        swap in (players keep low cards: the mean of the unseen low ones), or unseen mean."""
        k = self.k
        c = k.slots[j][p]
        if c is not None:
            return card_value(c)
        if k.kept[j][p] and k.plain[j][p]:
            return self.mean_low
        return self.mean_plain if k.plain[j][p] else self.mean

    def my_total(self) -> float:
        return sum(self.mine(p) for p in range(3))

    def their_total(self, j: int) -> float:
        return sum(self.theirs(j, p) for p in range(3))


class EasyBot(EasyLevel, CrispBot):
    """Legal, simple moves; remembers each private sight only half the time.

    Swaps a drawn card in where it *remembers* a higher card, or blindly if the card is very
    low; plays a Jack when it does not remember its centre; never plays a Queen; calls when
    the cards it remembers (and a guess of 5 for each it does not) add up to 9 or less.
    """

    recall = 0.5

    def wants_call(self, memory, k, det, now, rng) -> bool:  # type: ignore[no-untyped-def]
        mine = k.slots[memory.seat]
        return sum(card_value(c) if c else 5 for c in mine) <= 9

    def policy(self, memory, k, det, legal, now, rng) -> Action:  # type: ignore[no-untyped-def]
        mine = k.slots[memory.seat]
        types = {a.type for a in legal}
        if "draw" in types:
            return Action.draw("deck")
        held = det.view["held"]["card"]
        if types == {"swap"}:  # a pile card must go in
            known = [(card_value(c), p) for p, c in enumerate(mine) if c]
            p = max(known)[1] if known else rng.randrange(3)
            return Action.swap(PLACES[p])
        if "king" in types:
            return Action.king()
        if "jack" in types:
            return Action.jack() if mine[C] is None else Action.discard()
        if "queen" in types:
            return Action.discard()
        v = card_value(held)
        higher = [(card_value(c), p) for p, c in enumerate(mine) if c and card_value(c) > v]
        if higher:
            return Action.swap(PLACES[max(higher)[1]])
        unknown = [p for p, c in enumerate(mine) if c is None]
        if v <= 3 and unknown:
            return Action.swap(PLACES[rng.choice(unknown)])
        return Action.discard()


class MediumBot(MediumLevel, CrispBot):
    """Remembers everything it saw; plays on expected values of the unseen cards.

    * A drawn number card replaces the place with the largest expected gain (known high cards
      first; an unknown place is worth the unseen mean, plus a little for learning it).
    * A Jack is played while the centre is unknown; a Queen trades the seat's worst expected
      card for the opponent's best (a known low card, or one its owner chose to swap in) when
      that gains two points or more.
    * Crisp is called when the seat's expected total is clearly below every opponent's
      expected total (a margin for its own unknown cards and their final turns), or very low.
    """

    info_bonus = 0.75

    def wants_call(self, memory, k, det, now, rng) -> bool:  # type: ignore[no-untyped-def]
        return medium_call(k)

    def policy(self, memory, k, det, legal, now, rng) -> Action:  # type: ignore[no-untyped-def]
        return medium_pick(k, det.view, legal, self.info_bonus)


def medium_call(k: Knowledge) -> bool:
    est = _Estimates(k)
    me = k.seat
    mine = est.my_total()
    unknown = sum(1 for c in k.slots[me] if c is None)
    others = min(est.their_total(j) for j in range(k.seats) if j != me)
    margin = 3.0 + 2.0 * unknown
    if k.turns_taken > 6 * k.seats:  # a long round: accept a thinner edge
        margin -= 2.0
    return mine <= 4 or mine + margin <= others


def medium_pick(
    k: Knowledge, view: dict[str, Any], legal: list[Action], info_bonus: float = 0.75
) -> Action:
    est = _Estimates(k)
    me = k.seat
    types = {a.type for a in legal}
    gains = [est.mine(p) + (info_bonus if k.slots[me][p] is None else 0.0) for p in range(3)]
    if "draw" in types:
        pile = view["pile"]
        if any(a.type == "draw" and a.source == "pile" for a in legal) and pile:
            top = card_value(pile[-1])
            if max(gains) - top >= 3.0:
                return Action.draw("pile")
        return Action.draw("deck")
    held = view["held"]["card"]
    if types == {"swap"}:
        return Action.swap(PLACES[max(range(3), key=lambda p: gains[p])])
    if "king" in types:
        return Action.king()
    if "jack" in types:
        return Action.jack() if k.slots[me][C] is None else Action.discard()
    if "queen" in types:
        give = max(range(3), key=lambda p: (est.mine(p), p != C))
        best = None
        for j in range(k.seats):
            if j == me:
                continue
            for q in range(3):
                val = est.theirs(j, q)
                if best is None or val < best[0]:
                    best = (val, j, q)
        assert best is not None
        if est.mine(give) - best[0] >= 2.0:
            return Action.queen(PLACES[give], best[1], PLACES[best[2]])
        return Action.discard()
    v = card_value(held)
    p = max(range(3), key=lambda p: gains[p])
    if gains[p] - v > 0.0:
        return Action.swap(PLACES[p])
    return Action.discard()


# ================================================================================================
# Hard: SO-ISMCTS over the engine
# ================================================================================================
@dataclass(slots=True)
class _Sim(World):
    """One determinisation during one search iteration, with what each seat knows in it."""

    aware: list[list[bool]] = field(default_factory=list)  # per seat, per place: it knows it
    kept: list[list[bool]] = field(default_factory=list)  # per seat, place: swapped in itself
    plain: list[list[bool]] = field(default_factory=list)  # ... from the deck (no court card)
    declined: set[int] = field(default_factory=set)  # turns whose window its owner let pass
    first: int | None = None  # the root seat moves first (its own window before anybody's)
    #: the root seat's public record (``plain``, ``kept``) as the other seats' call rule reads
    #: it: frozen at the decision in a move search (``CrispSearch(frozen_record=True)``)
    record: tuple[list[bool], list[bool]] | None = None
    window: int | None = None  # when to_move is a window owner: that window's turn number
    horizon: int = 0


class CrispSearch(EngineSearch[_Sim]):
    """Crisp's knowledge for the search on the engine (``ismcts.EngineSearch``: the engine's
    ``legal_actions``/``apply`` on determinisations), linearised in time.

    The search clock: every action happens at the search's ``now`` (bots do not dawdle); when
    nobody can act the clock jumps to the next deadline (``advance``).  A crisp window is one
    decision of its owner, *call* or *pass*, taken the moment the turn ends -- exactly how the
    bots play it for real.  Opening looks change no card and are left out.  The search stops at
    the reveal or ``horizon_turns`` turns ahead (10 per seat by default: past almost every
    round's reveal, so a call is compared with what waiting really scores, the later call and
    its +-5 included), where hands are scored as they lie.

    Two rules keep a search of this seat's *moves* from learning to steer the simulated
    opponents (medium's rules read public signals) rather than to improve its own hand:

    * ``frozen_record``: the other seats' call rule reads this seat's public record (which of
      its places it swapped in, from the deck or the pile) as it was at the decision, not as
      the searched move changes it.  A call search leaves it live (its outcome *is* what the
      others do next, and it was measured so).
    * Another seat's crisp window still open at the decision counts as passed: its owner
      decides the moment its turn ends (every level does, see ``CrispBot``), so an open
      window at our decision is one it let pass -- re-deciding it after our move would let
      the search buy a pass with a move.
    """

    def __init__(
        self,
        memory: Observation,
        knowledge: Knowledge,
        now: int,
        horizon_turns: int | None = None,
        frozen_record: bool = False,
    ) -> None:
        super().__init__(engine_for(KIND), Determiniser(memory, knowledge), memory.seat, now)
        self.det: Determiniser
        k = self.det.knowledge
        self.round = k.round
        n = k.seats
        self.aware0 = [row[:] for row in k.aware]
        self.aware0[self.seat] = [c is not None for c in k.slots[self.seat]]
        looked = self.det.view["looked"]
        for j in range(n):
            if j != self.seat and not looked[j]:
                self.aware0[j][L] = self.aware0[j][R] = True  # they will take their look
        tt = self.det._template["round"]["turns_taken"]
        self.horizon = tt + (horizon_turns if horizon_turns is not None else 10 * n)
        prefix = f"r{k.round}:t"
        self.declined0 = {int(x[len(prefix) :]) for x in _declined(memory) if x.startswith(prefix)}
        for j, no in _window_turns(self.det.view).items():
            if j != self.seat:
                self.declined0.add(no)  # open at the decision: its owner let it pass
        self.kept0 = [row[:] for row in k.kept]
        self.plain0 = [row[:] for row in k.plain]
        self.frozen_record = frozen_record

    def world(self, state: GameState) -> _Sim:
        return _Sim(
            state=state,
            now=self.now,
            aware=[row[:] for row in self.aware0],
            kept=[row[:] for row in self.kept0],
            plain=[row[:] for row in self.plain0],
            declined=set(self.declined0),
            first=self.seat,
            record=(self.plain0[self.seat][:], self.kept0[self.seat][:])
            if self.frozen_record
            else None,
            horizon=self.horizon,
        )

    def record_of(self, s: _Sim, j: int) -> tuple[list[bool], list[bool]]:
        """Seat ``j``'s public record (``plain``, ``kept`` per place) as the other seats' call
        rule reads it in ``s``: this seat's frozen at the decision in a move search."""
        if j == self.seat and s.record is not None:
            return s.record
        return s.plain[j], s.kept[j]

    def mover(self, s: _Sim) -> int | None:
        """Who decides next: a window's owner (call or pass) before the seat on turn, the root
        seat's own window or turn first; the clock jumps over a start delay (``advance``)."""
        while True:
            st, _ = advance(s.state, s.now)
            s.state = st
            r = st.round
            if st.status != "playing" or r.reveal is not None or r.number != self.round:
                return None
            if r.turns_taken > s.horizon:
                return None
            s.window = None
            t = r.turn
            assert t is not None
            if t.phase == "call":
                # R28: "Call crisp?" is its seat's call-or-pass decision, like a live window.
                s.window, s.actor = t.no, t.seat
                return t.seat
            open_ = []
            if r.caller is None and r.windows:
                open_ = [w for w in r.windows if w.turn_no not in s.declined]
            if s.first is not None:
                # The root decision: the root seat's own window, else its own turn.
                mine = [w for w in open_ if w.seat == s.first]
                if mine:
                    s.window, s.actor = mine[0].turn_no, s.first
                    return s.first
                if t.seat == s.first and (t.phase != "start" or t.start_at <= s.now):
                    s.actor = t.seat
                    return t.seat
            if open_:
                w = open_[0]
                s.window, s.actor = w.turn_no, w.seat
                return w.seat
            if t.phase == "start" and t.start_at > s.now:
                s.now = t.start_at
                continue
            s.actor = t.seat
            return t.seat

    def actions(self, s: _Sim) -> Sequence[Hashable]:
        if s.window is not None:
            return (CALL, PASS)  # a window: its owner calls or lets it pass (no engine action)
        return [a for a in super().actions(s) if a.type not in ("look", "call")]

    def apply_action(self, s: _Sim, action: Hashable) -> Hashable:
        s.first = None
        t = s.state.round.turn
        if action == PASS and t is not None and t.phase == "call":
            return super().apply_action(s, NO_CALL)  # R28: "no" is the engine's ``pass``
        if action == PASS:
            assert s.window is not None
            s.declined.add(s.window)
            return None
        return super().apply_action(s, action)

    def observe(self, s: _Sim, action: Action, events: list[Any]) -> Hashable:
        """Who now knows which place (swaps, a Jack's or Queen's look) and what the root seat
        saw: its drawn card, its Jack's centre, its Queen's trade."""
        seen: list[str] = []
        me = self.seat
        for e in events:
            d = e.data
            t = e.type
            if t == "swap":
                p = PLACES.index(d["place"])
                s.aware[d["seat"]][p] = s.kept[d["seat"]][p] = True
                s.plain[d["seat"]][p] = d["source"] == "deck"
            elif t == "jack":
                s.aware[d["seat"]][C] = True
                if d["seat"] == me:
                    seen.append(d["centre"])
            elif t == "queen":
                p, q = PLACES.index(d["place"]), PLACES.index(d["target_place"])
                s.aware[d["seat"]][p] = p != C
                s.aware[d["target_seat"]][q] = q != C
                s.kept[d["seat"]][p] = s.kept[d["target_seat"]][q] = False
                a, b = s.plain[d["seat"]], s.plain[d["target_seat"]]
                a[p], b[q] = b[q], a[p]
                if d["seat"] == me and p != C:
                    seen.append(d["received"])
                if d["target_seat"] == me and q != C:
                    seen.append(d["given"])
            elif t == "draw" and d["seat"] == me:
                seen.append(d["card"])
        return tuple(seen) if seen else None

    def rollout_action(self, s: _Sim, rng: random.Random) -> Hashable:
        """The medium level itself (``medium_call``/``medium_pick``), played by every seat on
        what *it* knows in this world: its own places it has seen, the public facts about the
        others (who swapped what in from where), and the means of the cards it has not seen
        (``_sim_means``).  The real opponent of a medium-vs-hard table plays exactly so.  In a
        search of a move the others' call rule reads the searching seat's record frozen at the
        decision (``record_of``), so the search cannot steer it through its public moves."""
        seat = s.actor
        assert seat is not None
        st = s.state
        r = st.round
        hand = r.hands[seat]
        known = s.aware[seat]
        plain = s.plain
        mean, mean_plain, mean_low = self._sim_means(s, seat)
        mine = [
            _VALUE[hand[p]] if known[p] else (mean_plain if plain[seat][p] else mean)
            for p in range(3)
        ]

        def their(j: int, q: int) -> float:
            if plain[j][q]:
                return mean_low if s.kept[j][q] else mean_plain
            return mean

        if s.window is not None:

            def recorded(j: int, q: int) -> float:
                j_plain, j_kept = self.record_of(s, j)
                if j_plain[q]:
                    return mean_low if j_kept[q] else mean_plain
                return mean

            total = sum(mine)
            others = min(
                sum(recorded(j, q) for q in range(3)) for j in range(st.seats) if j != seat
            )
            margin = 3.0 + 2.0 * (3 - sum(known))
            if r.turns_taken > 6 * st.seats:
                margin -= 2.0
            return CALL if total <= 4 or total + margin <= others else PASS
        t = r.turn
        assert t is not None
        gains = [mine[p] + (0.0 if known[p] else 0.75) for p in range(3)]
        worst = max(range(3), key=lambda p: gains[p])
        if t.phase != "play":
            if st.settings.pile_draw and r.pile and gains[worst] - _VALUE[r.pile[-1]] >= 3.0:
                return Action.draw("pile")
            return Action.draw("deck")
        held = t.held
        assert held is not None
        if t.held_from == "pile":
            return Action.swap(PLACES[worst])
        rk = held[0]
        if rk == "K":
            return Action.king()
        if rk == "J":
            return Action.jack() if not known[C] else Action.discard()
        if rk == "Q":
            give = max(range(3), key=lambda p: (mine[p], p != C))
            best = min((their(j, q), j, q) for j in range(st.seats) if j != seat for q in range(3))
            if mine[give] - best[0] >= 2.0:
                return Action.queen(PLACES[give], best[1], PLACES[best[2]])
            return Action.discard()
        if gains[worst] - _VALUE[held] > 0.0:
            return Action.swap(PLACES[worst])
        return Action.discard()

    def _sim_means(self, s: _Sim, seat: int) -> tuple[float, float, float]:
        """``_Estimates``' three means for ``seat`` in this world: of all cards it has not
        seen, of the non-court ones, of the non-court ones <= 5.  Seen: the pile, Kings in play,
        its own drawn card (any pile card), its places it knows, and the whole deck after a
        turnover (the old pile, in known order)."""
        r = s.state.round
        seen = list(r.pile)
        t = r.turn
        if t is not None:
            seen += [kk[0] for kk in t.kings]
            if t.held is not None and (t.seat == seat or t.held_from == "pile"):
                seen.append(t.held)
        if r.turnovers:
            seen += r.deck
        hand = r.hands[seat]
        seen += [hand[p] for p, a in enumerate(s.aware[seat]) if a]
        n, tot, n_plain, t_plain, n_low, t_low = 52, 340, 40, 220, 20, 60
        for c in seen:
            v = _VALUE[c]
            n -= 1
            tot -= v
            if c[0] not in "JQK":
                n_plain -= 1
                t_plain -= v
                if v <= 5:
                    n_low -= 1
                    t_low -= v
        mean = tot / n if n else _MEAN_CARD
        mean_plain = t_plain / n_plain if n_plain else mean
        return mean, mean_plain, (t_low / n_low if n_low else mean_plain)

    def rewards(self, s: _Sim) -> Sequence[float]:
        st = s.state
        r = st.round
        if r.number == self.round and r.reveal is not None:
            scores = r.reveal["round_scores"]
        elif r.number == self.round:
            scores = [hand_total(h) for h in r.hands]
        else:  # pragma: no cover - to_move stops at the reveal
            scores = st.history[self.round - 1]
        n = len(scores)
        out = []
        for i in range(n):
            others = (sum(scores) - scores[i]) / (n - 1)
            out.append(min(1.0, max(0.0, 0.5 + (others - scores[i]) / 70.0)))
        return out


class HardBot(HardLevel, CrispBot):
    """SO-ISMCTS (``ismcts.search``) over ``CrispSearch`` within a CPU budget per decision.

    Hard is medium plus a search of every decision with more than one option, medium's
    choice as the prior: the search replaces it only when the paired difference over the
    same sampled worlds is ``confidence`` standard errors (``ismcts.search``), so an
    underpowered search falls back on medium rather than on noise.  Each option is played out
    with every seat -- this one too, afterwards -- playing the medium level
    (``CrispSearch.rollout_action``), to the reveal or ``horizon_turns`` turns ahead: one
    step of policy improvement over medium.

    * **The crisp call**, in every window: call against pass.  Medium's relative rule
      ("clearly below every opponent's expected total") becomes an estimate, over the worlds
      this seat's knowledge allows, of what calling now and what waiting would score.
    * **The moves of a turn** (``search_picks``; draw from the deck or the pile, which place
      to swap, Jack, Queen).  Searched with ``frozen_record``: the simulated opponents' call
      rule reads this seat's public swaps as they were at the decision, so the search cannot
      learn to steer their call (a swap or a discard made to keep an opponent from calling)
      instead of lowering its own hand -- a trick that would work on medium only.  Another
      seat's window still open at the decision counts as passed (``CrispSearch``).

    Searching only the final turn after another seat's call was tried and gained nothing
    measurable (bench/RESULTS.md): the determiniser does not condition the caller's cards on
    its call.  The look is taken at once, as by every level; the budget defaults to 200 ms of
    CPU per decision.
    """

    #: standard errors by which a searched move must beat the medium choice (``ismcts.search``):
    #: one, not the search's default two -- the play-outs model medium itself, so the estimate
    #: is nearly unbiased against medium; chosen on development runs in which 0, 1 and 2
    #: differed inside their intervals (bench/RESULTS.md, "Crisp")
    confidence = 1.0
    #: search the moves of a turn too, not only the crisp call (medium's move is the prior)
    search_picks = True

    def __init__(self, budget: Budget | None = None, horizon_turns: int | None = None) -> None:
        super().__init__(budget)
        self.horizon_turns = horizon_turns

    def wants_call(self, memory, k, det, now, rng) -> bool:  # type: ignore[no-untyped-def]
        prior = CALL if medium_call(k) else PASS
        return self._search(memory, k, now, rng, prior) == CALL

    def policy(self, memory, k, det, legal, now, rng) -> Action:  # type: ignore[no-untyped-def]
        if len(legal) == 1:
            return legal[0]
        prior = medium_pick(k, det.view, legal)
        if not self.search_picks:
            return prior
        choice = self._search(memory, k, now, rng, prior, frozen_record=True)
        if not isinstance(choice, Action) or choice not in legal:
            raise AssertionError(f"search chose {choice!r}, not a legal action")  # pragma: no cover
        return choice

    def _search(
        self,
        memory: Observation,
        k: Knowledge,
        now: int,
        rng: random.Random,
        prior: Hashable,
        frozen_record: bool = False,
    ) -> Hashable:
        game = CrispSearch(memory, k, now, self.horizon_turns, frozen_record=frozen_record)
        return self.search(game, memory.seat, rng, prior)  # type: ignore[no-any-return]


#: The seat's legal actions at ``now`` (``base.Level.legal_now``).
legal_now = CrispBot.legal_now

#: The levels, by name (``games.bots.bot_for("crisp", level)``).
BOTS: dict[str, type[CrispBot]] = {
    "random": RandomBot,
    "easy": EasyBot,
    "medium": MediumBot,
    "hard": HardBot,
}

__all__ = [
    "BOTS",
    "CALL",
    "KIND",
    "NO_CALL",
    "PASS",
    "CrispBot",
    "CrispSearch",
    "Determiniser",
    "EasyBot",
    "HardBot",
    "IllegalAction",
    "Knowledge",
    "MediumBot",
    "RandomBot",
    "check_view",
    "legal_now",
    "medium_call",
    "medium_pick",
    "open_window",
    "track",
    "window_closes",
]
