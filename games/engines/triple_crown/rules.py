"""The rules: new games, legal moves, applying moves and timeouts (rules/triple-crown.md).

Every public function is pure: it takes a ``GameState`` and returns a new one plus the events
that happened, never touching its input (clone once, change the clone, return it; an illegal
move drops the clone).  Time enters only as ``now`` (int ms); before a move at ``now`` every
deadline with ``at <= now`` takes effect first, at its own instant (TE2).
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any

from ..base import Timers, check_new_game, placement_returns, seeded_deck, seeded_rng
from . import errors as E
from .actions import MEMOS, TRUMPS, Action, Event
from .cards import (
    FULL_DECK,
    HIGH_CARD,
    LOW_CARD,
    SUITS,
    rank_index,
    sort_hand,
    suit,
    timeout_key,
)
from .deadlines import Deadline, move_deadline, pending_deadlines
from .errors import IllegalAction
from .scoring import HIGH_NEEDED, roles_for, score_hand
from .state import GameState, Hand, Settings

SEATS = 4
TRICKS = 13
_SUIT_SET = frozenset(SUITS)


# --------------------------------------------------------------------------------------------
# Seeded randomness (T2, T3).  sha256 keeps the derivation stable across Python versions.
# --------------------------------------------------------------------------------------------
_rng = seeded_rng


def first_dealer_for(seed: str) -> int:
    """The game's first dealer, drawn from the seed (T2).

    >>> first_dealer_for("demo") == first_dealer_for("demo")
    True
    """
    return _rng(seed, "first-dealer").randrange(SEATS)


def deck_for(seed: str, number: int) -> list[str]:
    """Hand ``number``'s deck order (top first) when no explicit deck was given (TE1)."""
    return seeded_deck(FULL_DECK, seed, number)


def deal(order: Sequence[str], dealer: int) -> list[list[str]]:
    """T3: one card at a time, clockwise from the dealer's left; each hand sorted (TE3).

    >>> hands = deal(FULL_DECK, 3)
    >>> hands[0][:3], [len(h) for h in hands]
    (['AS', 'TS', '6S'], [13, 13, 13, 13])
    """
    hands: list[list[str]] = [[] for _ in range(SEATS)]
    for i, card in enumerate(order):
        hands[(dealer + 1 + i) % SEATS].append(card)
    return [sort_hand(h) for h in hands]


# --------------------------------------------------------------------------------------------
# Tricks
# --------------------------------------------------------------------------------------------
def trick_winner(cards: Sequence[Sequence[Any]], trumps: str | None) -> int:
    """The seat that wins a complete trick ``[[seat, card], ...]`` (led card first), T13.

    ``trumps`` is a suit letter in a Double Stakes hand with trumps; ``None`` or ``"NT"``
    otherwise (Crown hands are always no-trump, §8).

    >>> trick_winner([[1, "KH"], [2, "AH"], [3, "2S"], [0, "AC"]], None)
    2
    >>> trick_winner([[1, "KH"], [2, "AH"], [3, "2S"], [0, "AC"]], "S")
    3
    """
    led = suit(cards[0][1])
    trump = trumps if trumps in _SUIT_SET else None
    if trump is not None and any(suit(c) == trump for _, c in cards):
        pool = [(s, c) for s, c in cards if suit(c) == trump]
    else:
        pool = [(s, c) for s, c in cards if suit(c) == led]
    return max(pool, key=lambda sc: rank_index(sc[1]))[0]


def legal_cards(hand: Sequence[str], trick: Sequence[Sequence[Any]]) -> list[str]:
    """The cards of ``hand`` that may go onto ``trick`` (T11, T12): any card to lead; the suit
    led if the hand holds one, else any card.

    >>> legal_cards(["AS", "KH", "2D"], [[0, "5H"]]), legal_cards(["AS", "2D"], [[0, "5H"]])
    (['KH'], ['AS', '2D'])
    """
    if not trick:
        return list(hand)
    led = suit(trick[0][1])
    follow = [c for c in hand if suit(c) == led]
    return follow or list(hand)


def success_certain(h: Hand) -> str | None:
    """Whether a Double Stakes hand's success is certain on PUBLIC facts alone (§8, X1, TE6).

    Checked after every completed trick.  Returns the reason code or ``None``:

    * ``"five_tricks"`` -- the player has 5 tricks (T10, T15).
    * ``"sure_tricks"`` -- tricks so far + the player's *sure trumps* reach 5.  A card is known
      to be in the player's hand if it is A♠ or 2♦ not yet played (they made the player Double
      Stakes: public since the announcement, T8) or an unplayed card of a suit all three
      opponents have shown void in.  A known trump that outranks every unplayed trump an
      opponent could hold wins the trick it is played to, and every card is played before the
      hand ends: each is a trick the player will surely take.
    * ``"cannot_win"`` -- the player has no trick, is not on lead, every card left in their
      hand is known, none is a trump, and each is below every unplayed card of its suit an
      opponent could hold: no trick can ever fall to them, so 0 tricks is certain.

    Only public facts (cards played, voids shown, the announcement) enter, so ending a hand
    early, or not ending it, tells nobody anything they could not work out at the table (T15,
    T27h).
    """
    if h.ds_seat is None or h.trick:
        return None
    ds = h.ds_seat
    t = h.taken[ds]
    if t >= HIGH_NEEDED:
        return "five_tricks"
    played = {c for tr in h.tricks for _, c in tr["cards"]}
    unplayed = [c for c in FULL_DECK if c not in played]
    voids: list[set[str]] = [set() for _ in range(SEATS)]
    for tr in h.tricks:
        led = suit(tr["cards"][0][1])
        for s, c in tr["cards"][1:]:
            if suit(c) != led:
                voids[s].add(led)
    opp_void = set(SUITS)
    for s in range(SEATS):
        if s != ds:
            opp_void &= voids[s]
    known = {c for c in unplayed if c in (HIGH_CARD, LOW_CARD) or suit(c) in opp_void}
    maybe_opp = [c for c in unplayed if c not in known]
    trump = h.trumps if h.trumps in _SUIT_SET else None
    if trump is not None:
        top = max((rank_index(c) for c in maybe_opp if suit(c) == trump), default=-1)
        sure = sum(1 for c in known if suit(c) == trump and rank_index(c) > top)
        if t + sure >= HIGH_NEEDED:
            return "sure_tricks"
    ds_left = TRICKS - len(h.tricks)
    if t == 0 and h.tricks and h.leader != ds and len(known) == ds_left:
        for c in known:
            if trump is not None and suit(c) == trump:
                return None
            if any(suit(o) == suit(c) and rank_index(o) < rank_index(c) for o in maybe_opp):
                return None
        return "cannot_win"
    return None


# --------------------------------------------------------------------------------------------
# New game and dealing
# --------------------------------------------------------------------------------------------
def new_game(
    *,
    seats: int,
    settings: Settings,
    seed: str,
    now: int,
    decks: Sequence[Sequence[str]] | None = None,
) -> tuple[GameState, list[Event]]:
    """Start a game of four (§2) and deal hand 1 at ``now``.

    The first dealer comes from ``seed`` (T2).  Hand *n* is dealt from ``decks[n-1]`` when given
    (52 codes, top first), otherwise from a deck derived from ``seed`` and *n* (TE1).

    >>> st, ev = new_game(seats=4, settings=Settings(), seed="doc", now=0)
    >>> st.status, st.round_number, st.scores, [e.type for e in ev]
    ('playing', 1, [0, 0, 0, 0], ['round_dealt'])
    """
    checked = check_new_game(
        seats=seats,
        settings=settings,
        settings_type=Settings,
        seed=seed,
        now=now,
        decks=decks,
        min_seats=SEATS,  # §2: exactly four
        max_seats=SEATS,
    )
    dealer = first_dealer_for(seed)
    st = GameState(
        seats=SEATS,
        settings=settings,
        seed=seed,
        decks=checked,
        first_dealer=dealer,
        status="playing",
        scores=[0] * SEATS,
        history=[],
        winners=[],
        round=None,  # type: ignore[arg-type]  # set by _deal just below
        last_hand=None,
        clock=now,
    )
    events: list[Event] = []
    _deal(st, 1, dealer, now, events)
    return st, events


def _deal(st: GameState, number: int, dealer: int, at: int, events: list[Event]) -> None:
    """Deal hand ``number`` (T3) and announce Double Stakes if the deal made one (T8)."""
    if st.decks is not None and len(st.decks) >= number:
        order = list(st.decks[number - 1])
    else:
        order = deck_for(st.seed, number)
    hands = deal(order, dealer)
    roles = roles_for(hands)
    ds = roles.index("double") if "double" in roles else None
    first = (dealer + 1) % SEATS
    st.round = Hand(
        number=number,
        dealer=dealer,
        dealt_at=at,
        deck_order=order,
        roles=roles,
        hands=hands,
        ds_seat=ds,
        trumps=None,
        memo=None,
        phase="declare" if ds is not None else "play",
        leader=first,
        turn=ds if ds is not None else first,
        clock_from=at,
        trick=[],
        tricks=[],
        taken=[0] * SEATS,
    )
    events.append(
        Event(
            "round_dealt",
            {
                "round": number,
                "dealer": dealer,
                "at": at,
                "leader": first,
                "double_stakes": ds,
                "hands": [h[:] for h in hands],  # event_view: the receiver's own only
                "deck": order,  # event_view: nobody
                "deadline": _deadline_of(st),
            },
        )
    )


def _deadline_of(st: GameState) -> int | None:
    """The awaited move's last on-time instant, carried by events so clients can count down."""
    return move_deadline(st)


# --------------------------------------------------------------------------------------------
# Public entry points
# --------------------------------------------------------------------------------------------
def apply(state: GameState, seat: int, action: Action, now: int) -> tuple[GameState, list[Event]]:
    """Apply ``action`` by ``seat`` at ``now``; return the new state and what happened.

    Deadlines due by ``now`` take effect first, each at its own instant.  An illegal move
    raises ``IllegalAction`` and leaves ``state`` untouched (the deadline events are dropped
    with it: ``advance`` applies those alone).  A ``now`` before the state's last instant is
    taken as that instant (TE2).
    """
    if not isinstance(action, Action):
        raise IllegalAction(E.BAD_ACTION, "not an Action")
    if not isinstance(now, int) or isinstance(now, bool):
        raise IllegalAction(E.BAD_ACTION, "now must be int milliseconds")
    now = max(now, state.clock)
    st = state.clone()
    events: list[Event] = []
    _TIMERS.run(st, now, events)
    _check(st, seat, action)
    if action.type == "declare":
        _declare(st, action.trumps, action.memo, now, False, events)  # type: ignore[arg-type]
    else:
        _play(st, seat, action.card, now, False, events)  # type: ignore[arg-type]
    st.clock = max(st.clock, now)
    return st, events


def legal_actions(state: GameState, seat: int, now: int) -> list[Action]:
    """Every move ``seat`` may make at ``now``; each would be accepted by ``apply``.

    It depends only on public facts and the seat's own hand (T27b): the seat on turn gets its
    cards that follow suit (T12), the Double Stakes seat its ten declarations; anybody else
    nothing.

    >>> st, _ = new_game(seats=4, settings=Settings(), seed="doc", now=0)
    >>> seat = st.round.turn
    >>> len(legal_actions(st, seat, 0)) > 0, legal_actions(st, (seat + 1) % 4, 0)
    (True, [])
    """
    now = max(now, state.clock)
    st = _TIMERS.advanced(state, now)
    h = st.round
    if st.status != "playing" or not isinstance(seat, int) or isinstance(seat, bool):
        return []
    if seat != h.turn:
        return []
    if h.phase == "declare":
        return [Action.declare(t, m) for t in TRUMPS for m in MEMOS]
    return [Action.play(c) for c in legal_cards(h.hands[seat], h.trick)]


def can(state: GameState, seat: int, now: int) -> list[str]:
    """The move *types* ``seat`` may make at ``now`` -- the summary every view carries."""
    return sorted({a.type for a in legal_actions(state, seat, now)})


def is_over(state: GameState) -> bool:
    """Whether the game has ended by its rules (no move, no deadline any more)."""
    return state.status == "finished"


def returns(state: GameState) -> list[float]:
    """Each seat's return in [0, 1] on the totals (``games.engines.base.placement_returns``):
    a sole winner 1, the sole last 0, ties shared.  For a finished game it is the result (the
    winners are exactly the seats with the highest return); before the end, the standing.
    Triple Crown counts high: the highest total wins (T21).
    """
    return placement_returns(state.scores, low_wins=False)


def fire(state: GameState, key: str, now: int) -> tuple[GameState, list[Event]]:
    """Deliver the timer of deadline ``key`` at ``now``: if pending and due, it (and anything
    before it) takes effect at its own instant; a stale or early key changes nothing (the same
    object and ``[]``)."""
    return _TIMERS.fire(state, key, now)


def advance(state: GameState, now: int) -> tuple[GameState, list[Event]]:
    """Apply every pending deadline with ``at <= now``, in order; the same object and ``[]``
    when nothing was due."""
    return _TIMERS.advance(state, now)


def _apply_deadline(st: GameState, d: Deadline, events: list[Event]) -> None:
    """T24: a declaration timeout declares no-trump / Low; a play timeout plays the lowest
    legal card (rank, then clubs, diamonds, hearts, spades)."""
    h = st.round
    if d.kind == "declare_timeout":
        _declare(st, "NT", "low", d.at, True, events)
    elif d.kind == "play_timeout":
        assert h.turn is not None
        card = min(legal_cards(h.hands[h.turn], h.trick), key=timeout_key)
        _play(st, h.turn, card, d.at, True, events)
    else:  # pragma: no cover - pending_deadlines makes only the kinds above
        raise AssertionError(d.kind)


#: Deadlines take effect through the one loop every engine shares (base.Timers, R18).
_TIMERS = Timers(pending_deadlines, _apply_deadline)


# --------------------------------------------------------------------------------------------
# Legality: one function decides for apply; legal_actions offers exactly what passes it
# --------------------------------------------------------------------------------------------
def _check(st: GameState, seat: int, a: Action) -> None:
    if st.status != "playing":
        raise IllegalAction(E.GAME_FINISHED, "the game is over")
    if not isinstance(seat, int) or isinstance(seat, bool) or not 0 <= seat < SEATS:
        raise IllegalAction(E.BAD_SEAT, "seats are 0 to 3")
    h = st.round
    if a.type == "declare":
        if h.ds_seat is None:
            raise IllegalAction(E.NO_DECLARATION, "only a Double Stakes hand has a declaration")
        if h.phase != "declare":
            raise IllegalAction(E.NO_DECLARATION, "the declaration has been made; it is final")
        if seat != h.ds_seat:
            raise IllegalAction(E.NOT_YOUR_TURN, "only the Double Stakes player declares")
        return
    if h.phase == "declare":
        raise IllegalAction(E.AWAITING_DECLARATION, "the Double Stakes player has not declared yet")
    if seat != h.turn:
        raise IllegalAction(E.NOT_YOUR_TURN, f"it is seat {h.turn}'s turn to play")
    card = a.card
    assert card is not None
    if card not in h.hands[seat]:
        raise IllegalAction(E.NOT_IN_HAND, f"you do not hold {card}")
    if card not in legal_cards(h.hands[seat], h.trick):
        led = suit(h.trick[0][1])
        raise IllegalAction(E.MUST_FOLLOW, f"you must follow suit: {led} was led")


# --------------------------------------------------------------------------------------------
# Doing things (on a clone)
# --------------------------------------------------------------------------------------------
def _declare(
    st: GameState, trumps: str, memo: str, at: int, timeout: bool, events: list[Event]
) -> None:
    h = st.round
    h.trumps, h.memo = trumps, memo
    h.phase = "play"
    h.turn = h.leader
    h.clock_from = at
    events.append(
        Event(
            "declared",
            {
                "seat": h.ds_seat,
                "at": at,
                "trumps": trumps,
                "memo": memo,  # event_view: the Double Stakes seat only, until the reveal
                "timeout": timeout,
                "next_seat": h.turn,
                "deadline": _deadline_of(st),
            },
        )
    )


def _play(st: GameState, seat: int, card: str, at: int, timeout: bool, events: list[Event]) -> None:
    h = st.round
    h.hands[seat].remove(card)
    h.trick.append([seat, card])
    no = len(h.tricks) + 1
    done = len(h.trick) == SEATS
    h.turn = None if done else (seat + 1) % SEATS
    h.clock_from = at
    events.append(
        Event(
            "card_played",
            {
                "seat": seat,
                "at": at,
                "trick": no,
                "card": card,
                "timeout": timeout,
                "next_seat": h.turn,
                "deadline": None if done else _deadline_of(st),
            },
        )
    )
    if not done:
        return
    winner = trick_winner(h.trick, h.trumps)
    h.tricks.append({"no": no, "leader": h.leader, "cards": h.trick, "winner": winner, "at": at})
    h.trick = []
    h.taken[winner] += 1
    h.leader = winner
    certain = success_certain(h)
    ends = no == TRICKS or certain is not None
    h.turn = None if ends else winner
    events.append(
        Event(
            "trick_won",
            {
                "trick": no,
                "at": at,
                "winner": winner,
                "cards": [c[:] for c in h.tricks[-1]["cards"]],
                "taken": h.taken[:],
                "next_seat": h.turn,
                "deadline": None if ends else _deadline_of(st),
            },
        )
    )
    if ends:
        _end_hand(st, at, certain if no < TRICKS else None, events)


def _end_hand(st: GameState, at: int, early: str | None, events: list[Event]) -> None:
    """T16, T20, T21: score, reveal everything of the hand, then end the game or deal on."""
    h = st.round
    score = score_hand(h.roles, h.taken, h.memo, assured=early == "sure_tricks")
    st.scores = [a + b for a, b in zip(st.scores, score.points, strict=True)]
    st.history.append(list(score.points))
    result: dict[str, Any] = {
        "round": h.number,
        "at": at,
        "dealer": h.dealer,
        "kind": "double_stakes" if h.ds_seat is not None else "crown",
        "roles": h.roles[:],
        "double_stakes": h.ds_seat,
        "trumps": h.trumps,
        "memo": h.memo,
        "tricks": h.taken[:],
        "tricks_played": len(h.tricks),
        "early_end": early,
        "unplayed": [x[:] for x in h.hands],
        "points": list(score.points),
        "reasons": score.to_json()["reasons"],
        "scores": st.scores[:],
    }
    h.result = result
    h.phase = "over"
    h.turn = None
    st.last_hand = result
    events.append(Event("hand_over", copy.deepcopy(result)))
    if max(st.scores) >= st.settings.target_score:
        top = max(st.scores)
        st.status = "finished"
        st.winners = [i for i, v in enumerate(st.scores) if v == top]
        events.append(
            Event("game_over", {"at": at, "winners": st.winners[:], "scores": st.scores[:]})
        )
        return
    _deal(st, h.number + 1, (h.dealer + 1) % SEATS, at, events)


__all__ = [
    "SEATS",
    "TRICKS",
    "advance",
    "apply",
    "can",
    "deal",
    "deck_for",
    "fire",
    "first_dealer_for",
    "is_over",
    "legal_actions",
    "legal_cards",
    "new_game",
    "returns",
    "success_certain",
    "trick_winner",
]
