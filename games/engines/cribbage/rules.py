"""The rules of two-player cribbage to 121 (rules/cribbage.md), as pure functions of the state.

Public entry points: ``new_game``, ``legal_actions``, ``apply``, ``fire``, ``advance``.  None of
them touches its input: each clones the state and returns the changed copy with the events of
what happened, in the order it happened (C20).

Everything but the two moves is automatic (C6, C8, C23, C26): the cut for the starter, his
heels, go, the end of a count, the show and the next deal all happen inside the ``apply`` (or
the timeout) that makes them due, at that same instant.  So after any call the game is always
waiting for a move -- a lay-away or the play of a card -- or finished.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import combinations
from typing import Any

from ..base import Timers, check_new_game, placement_returns, seeded_deck, seeded_rng
from . import errors as E
from .actions import Action, Event
from .cards import FULL_DECK, rank, sort_cards, value
from .deadlines import Deadline, lay_away_deadline, pending_deadlines, play_deadline
from .scoring import score_hand, score_pegging
from .state import GameState, Round, Settings

__all__ = [
    "advance",
    "apply",
    "can",
    "cut_for_deal",
    "deck_for",
    "fire",
    "is_over",
    "legal_actions",
    "new_game",
    "result_label",
    "returns",
]

SEATS = 2


# --------------------------------------------------------------------------------------------
# Seeded randomness (CE2).  sha256 keeps the derivation stable across Python versions.
# --------------------------------------------------------------------------------------------
_rng = seeded_rng


def cut_for_deal(seed: str) -> tuple[list[list[str]], int]:
    """The cut for the first deal (C3): ``([[seat 0's card, seat 1's card], ...], dealer)``.

    Each attempt cuts two cards from a freshly shuffled deck; equal ranks cut again; the
    **higher** rank deals (the original, section 3.1).

    >>> cuts, dealer = cut_for_deal("doc")
    >>> cuts, dealer
    ([['4D', 'QH']], 1)
    """
    cuts: list[list[str]] = []
    attempt = 0
    while True:
        attempt += 1
        deck = list(FULL_DECK)
        _rng(seed, f"cut:{attempt}").shuffle(deck)
        a, b = deck[0], deck[1]
        cuts.append([a, b])
        if rank(a) != rank(b):
            return cuts, 0 if rank(a) > rank(b) else 1


def deck_for(seed: str, round_number: int) -> list[str]:
    """The deck order (top first) of hand ``round_number`` when no explicit deck was given."""
    return seeded_deck(FULL_DECK, seed, round_number)


def result_label(loser_score: int) -> str:
    """C24's statistics label for a finished game: ``skunk`` (loser at 90 or fewer),
    ``double_skunk`` (60 or fewer), else ``win``.

    >>> result_label(91), result_label(90), result_label(60)
    ('win', 'skunk', 'double_skunk')
    """
    if loser_score <= 60:
        return "double_skunk"
    if loser_score <= 90:
        return "skunk"
    return "win"


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
    """Start a two-player game: cut for the first deal (C3) and deal hand 1 at ``now``.

    Hand *n* is dealt from ``decks[n-1]`` when given (52 codes, top first: ``[0:12]`` dealt
    alternately pone first, ``[12]`` the starter, CE3), else from a deck derived from ``seed``
    and *n*.  The cut always comes from the seed (its own shuffle, C3).

    >>> st, ev = new_game(seats=2, settings=Settings(), seed="doc", now=0)
    >>> st.status, st.round_number, st.scores, [e.type for e in ev]
    ('playing', 1, [0, 0], ['cut_for_deal', 'round_dealt'])
    """
    checked = check_new_game(
        seats=seats,
        settings=settings,
        settings_type=Settings,
        seed=seed,
        now=now,
        decks=decks,
        min_seats=SEATS,  # C1: exactly two
        max_seats=SEATS,
    )
    cuts, dealer = cut_for_deal(seed)
    placeholder = Round(0, dealer, now, [], [[], []], [None, None], [None, None])
    st = GameState(
        settings=settings,
        seed=seed,
        decks=checked,
        cuts=cuts,
        first_dealer=dealer,
        status="playing",
        scores=[0, 0],
        back_pegs=[0, 0],
        winners=[],
        history=[],
        last_hand=None,
        round=placeholder,
        clock=now,
    )
    events = [Event("cut_for_deal", {"at": now, "cuts": [c[:] for c in cuts], "dealer": dealer})]
    _deal(st, 1, dealer, now, events)
    return st, events


def _deal(st: GameState, number: int, dealer: int, at: int, events: list[Event]) -> None:
    """Deal hand ``number`` (C4): six each, one at a time alternately, pone first."""
    if st.decks is not None and number <= len(st.decks):
        deck = list(st.decks[number - 1])
    else:
        deck = deck_for(st.seed, number)
    pone = 1 - dealer
    hands: list[list[str]] = [[], []]
    hands[pone] = sort_cards(deck[0:12:2])
    hands[dealer] = sort_cards(deck[1:12:2])
    st.round = Round(number, dealer, at, deck, hands, [None, None], [None, None])
    events.append(
        Event(
            "round_dealt",
            {
                "round": number,
                "dealer": dealer,
                "pone": pone,
                "at": at,
                "deck": list(deck),
                "hands": [h[:] for h in hands],
                "deadline": lay_away_deadline(st),
            },
        )
    )


# --------------------------------------------------------------------------------------------
# Public entry points
# --------------------------------------------------------------------------------------------
def apply(state: GameState, seat: int, action: Action, now: int) -> tuple[GameState, list[Event]]:
    """Apply ``action`` by ``seat`` at ``now``; return the new state and what happened.

    Every deadline due by ``now`` (``at <= now``) takes effect first, at its own instant, so
    the move is judged against the table as it really is at ``now``.  An illegal move raises
    ``IllegalAction`` and leaves ``state`` untouched (the deadlines' events are dropped too:
    call ``advance`` to apply those alone).  A ``now`` earlier than the state's last instant
    is taken as that instant (CE13).
    """
    if not isinstance(action, Action):
        raise E.IllegalAction(E.BAD_ACTION, "not an Action")
    if not isinstance(now, int) or isinstance(now, bool):
        raise E.IllegalAction(E.BAD_ACTION, "now must be int milliseconds")
    now = max(now, state.clock)
    st = state.clone()
    events: list[Event] = []
    _TIMERS.run(st, now, events)
    _check(st, seat, action)
    st.clock = now
    if action.type == "lay_away":
        assert action.cards is not None
        _lay_away(st, seat, list(action.cards), now, False, events)
    else:
        assert action.card is not None
        _play(st, seat, action.card, now, False, events)
    return st, events


def legal_actions(state: GameState, seat: int, now: int) -> list[Action]:
    """Every move ``seat`` may make at ``now`` (each would be accepted by ``apply``), in hand
    order.  Built from the seat's own cards and public facts only.

    >>> st, _ = new_game(seats=2, settings=Settings(), seed="doc", now=0)
    >>> len(legal_actions(st, 0, 0)), str(legal_actions(st, 0, 0)[0])
    (15, 'lay_away:AC+3D')
    """
    now = max(now, state.clock)
    st = _TIMERS.advanced(state, now)
    if st.status != "playing" or not _is_seat(seat):
        return []
    r = st.round
    if r.phase == "lay_away" and r.discards[seat] is None:
        return [Action.lay_away(a, b) for a, b in combinations(r.hands[seat], 2)]
    if r.phase == "play" and r.turn == seat:
        return [Action.play(c) for c in r.hands[seat] if r.count + value(c) <= 31]
    return []


def can(state: GameState, seat: int, now: int) -> list[str]:
    """The action *types* ``seat`` may take at ``now`` -- the cheap summary every view carries
    (the tests hold it equal to the types of ``legal_actions``)."""
    now = max(now, state.clock)
    ds = pending_deadlines(state)
    st = state if not ds or ds[0].at > now else _TIMERS.advanced(state, now)
    if st.status != "playing" or not _is_seat(seat):
        return []
    r = st.round
    if r.phase == "lay_away" and r.discards[seat] is None:
        return ["lay_away"]
    if r.phase == "play" and r.turn == seat:
        return ["play"]
    return []


def is_over(state: GameState) -> bool:
    """Whether the game has ended by its rules (no move, no deadline any more)."""
    return state.status == "finished"


def returns(state: GameState) -> list[float]:
    """Each seat's return in [0, 1] on the totals (``games.engines.base.placement_returns``):
    a sole winner 1, the sole last 0, ties shared.  For a finished game it is the result (the
    winners are exactly the seats with the highest return); before the end, the standing.
    Cribbage counts high: the first to 121 wins (section 2).
    """
    return placement_returns(state.scores, low_wins=False)


def fire(state: GameState, key: str, now: int) -> tuple[GameState, list[Event]]:
    """Deliver the timer for deadline ``key`` at ``now``.

    If ``key`` is pending and due, every pending deadline up to and including its instant takes
    effect, each at its own instant.  A stale key (that move was made) or an early one changes
    nothing: the same state object and no events.
    """
    return _TIMERS.fire(state, key, now)


def advance(state: GameState, now: int) -> tuple[GameState, list[Event]]:
    """Apply every pending deadline with ``at <= now``, in order (the periodic sweep); the
    same object and ``[]`` when nothing was due."""
    return _TIMERS.advance(state, now)


def _apply_deadline(st: GameState, d: Deadline, events: list[Event]) -> None:
    r = st.round
    if d.kind == "lay_away_timeout":
        seat = int(d.key.rsplit(":", 1)[1])
        _lay_away(st, seat, sort_cards(r.hands[seat])[-2:], d.at, True, events)  # C29
    elif d.kind == "play_timeout":
        seat = r.turn
        assert seat is not None
        card = next(c for c in r.hands[seat] if r.count + value(c) <= 31)  # C29: lowest
        _play(st, seat, card, d.at, True, events)
    else:  # pragma: no cover - pending_deadlines only makes the kinds above
        raise AssertionError(d.kind)


#: Deadlines take effect through the one loop every engine shares (base.Timers, R18).
_TIMERS = Timers(pending_deadlines, _apply_deadline)


# --------------------------------------------------------------------------------------------
# Legality: one function decides for apply (legal_actions builds only legal moves)
# --------------------------------------------------------------------------------------------
def _is_seat(seat: object) -> bool:
    return isinstance(seat, int) and not isinstance(seat, bool) and 0 <= seat < SEATS


def _check(st: GameState, seat: int, a: Action) -> None:
    if not _is_seat(seat):
        raise E.IllegalAction(E.BAD_SEAT, "seat must be 0 or 1")
    if st.status != "playing":
        raise E.IllegalAction(E.GAME_FINISHED, "the game is over")
    r = st.round
    hand = r.hands[seat]
    if a.type == "lay_away":
        if r.phase != "lay_away":
            raise E.IllegalAction(E.WRONG_PHASE, "the lay-away is over: this is the play")
        if r.discards[seat] is not None:
            raise E.IllegalAction(E.ALREADY_LAID_AWAY, "you have laid away already (C5)")
        if any(c not in hand for c in a.cards or ()):
            raise E.IllegalAction(E.NOT_IN_HAND, "lay away two of your own six cards")
        return
    if r.phase != "play":
        if r.discards[seat] is None:
            raise E.IllegalAction(E.WRONG_PHASE, "lay away two cards first (C5)")
        raise E.IllegalAction(E.WRONG_PHASE, "the play begins when both have laid away")
    if r.turn != seat:
        raise E.IllegalAction(E.NOT_YOUR_TURN, "it is the other player's turn")
    assert a.card is not None
    if a.card not in hand:
        raise E.IllegalAction(E.NOT_IN_HAND, "that card is not in your hand")
    if r.count + value(a.card) > 31:
        raise E.IllegalAction(
            E.OVER_THIRTY_ONE, f"the count is {r.count}: that card would take it past 31"
        )


# --------------------------------------------------------------------------------------------
# What happens
# --------------------------------------------------------------------------------------------
def _score(
    st: GameState,
    seat: int,
    points: int,
    etype: str,
    at: int,
    events: list[Event],
    data: dict[str, Any],
    *,
    pegging: bool = False,
) -> tuple[int, bool]:
    """Credit ``points`` to ``seat`` in one event of type ``etype`` (every scoring event has
    ``seat, points, scored, scores``).  C22: the winner's total stops at the target, so
    ``scored`` may be less than ``points``; the game ends the moment the target is reached.
    ``pegging``: points of the play (a card, the last card), also added to the hand's
    ``pegged`` -- here, before the end of the game files ``hand_over``, so that the play which
    ends the game is in it.  Returns ``(scored, game_over)``."""
    target = st.settings.target_score
    scored = _creditable(st, seat, points)
    if scored:
        st.back_pegs[seat] = st.scores[seat]
        st.scores[seat] += scored
    r = st.round
    r.points[seat] += scored
    if pegging:
        r.pegged[seat] += scored
    events.append(
        Event(
            etype,
            {
                "round": r.number,
                "seat": seat,
                "at": at,
                **data,
                "points": points,
                "scored": scored,
                "scores": list(st.scores),
            },
        )
    )
    if st.scores[seat] >= target:
        _finish(st, seat, at, events)
        return scored, True
    return scored, False


def _creditable(st: GameState, seat: int, points: int) -> int:
    """How many of ``points`` count: all of them, except past the target (C22)."""
    return max(0, min(points, st.settings.target_score - st.scores[seat]))


def _lay_away(
    st: GameState, seat: int, cards: list[str], at: int, timeout: bool, events: list[Event]
) -> None:
    r = st.round
    cards = sort_cards(cards)
    r.hands[seat] = [c for c in r.hands[seat] if c not in cards]
    r.kept[seat] = r.hands[seat][:]
    r.discards[seat] = cards
    events.append(
        Event(
            "laid_away",
            {"round": r.number, "seat": seat, "at": at, "cards": cards[:], "timeout": timeout},
        )
    )
    if r.discards[0] is not None and r.discards[1] is not None:
        _cut_starter(st, at, events)


def _cut_starter(st: GameState, at: int, events: list[Event]) -> None:
    """C6: the cut for the pone, at once; his heels before the play."""
    r = st.round
    r.starter = r.deck[12]
    r.phase = "play"
    events.append(
        Event("starter_cut", {"round": r.number, "at": at, "card": r.starter, "dealer": r.dealer})
    )
    if r.starter[0] == "J":
        r.his_heels = True
        if _score(st, r.dealer, 2, "his_heels", at, events, {"card": r.starter})[1]:
            return
    _set_turn(st, r.pone, at, events)


def _set_turn(st: GameState, seat: int, at: int, events: list[Event]) -> None:
    """``seat`` must play a card; its move clock starts now (C27)."""
    r = st.round
    r.turn = seat
    r.turn_since = at
    r.move_no += 1
    events.append(
        Event(
            "turn",
            {
                "round": r.number,
                "seat": seat,
                "at": at,
                "count": r.count,
                "move": r.move_no,
                "deadline": play_deadline(st),
            },
        )
    )


def _can_play(r: Round, seat: int) -> bool:
    return any(r.count + value(c) <= 31 for c in r.hands[seat])


def _play(st: GameState, seat: int, card: str, at: int, timeout: bool, events: list[Event]) -> None:
    r = st.round
    r.hands[seat].remove(card)
    r.played[seat].append(card)
    r.sequence.append([seat, card])
    r.count += value(card)
    r.last_seat = seat
    r.turn = None
    r.turn_since = None
    peg = score_pegging([c for _, c in r.sequence])
    _, over = _score(
        st,
        seat,
        peg.points,
        "play",
        at,
        events,
        {
            "card": card,
            "count": r.count,
            "sequence": [c for _, c in r.sequence],
            "items": [i.to_json() for i in peg.items],
            "timeout": timeout,
        },
        pegging=True,
    )
    if over:
        return
    _after_play(st, at, events)


def _after_play(st: GameState, at: int, events: list[Event]) -> None:
    """Who plays next (C7-C10): the opponent if they can; else they go (C8) and the same
    player plays on; else the count is over."""
    r = st.round
    p = r.last_seat
    assert p is not None
    o = 1 - p
    if r.count == 31 or (not r.hands[0] and not r.hands[1]):
        _end_count(st, at, events)
        return
    if not r.go[o] and _can_play(r, o):
        _set_turn(st, o, at, events)
        return
    if not r.go[o]:
        r.go[o] = True
        events.append(Event("go", {"round": r.number, "seat": o, "at": at, "count": r.count}))
    if _can_play(r, p):
        _set_turn(st, p, at, events)
    else:
        _end_count(st, at, events)


def _end_count(st: GameState, at: int, events: list[Event]) -> None:
    """C9/C10: last card (1, below 31; 31 itself scored with its card), reset, next lead."""
    r = st.round
    p = r.last_seat
    assert p is not None
    final = r.count
    if final < 31:
        _, over = _score(st, p, 1, "last_card", at, events, {"count": final}, pegging=True)
        if over:
            return
    r.count = 0
    r.sequence = []
    r.go = [False, False]
    o = 1 - p
    lead = None if not (r.hands[0] or r.hands[1]) else (o if r.hands[o] else p)
    events.append(
        Event(
            "count_over",
            {"round": r.number, "at": at, "count": final, "last_seat": p, "next_lead": lead},
        )
    )
    if lead is None:
        _show(st, at, events)
    else:
        _set_turn(st, lead, at, events)


def _show(st: GameState, at: int, events: list[Event]) -> None:
    """C20 steps 3-5: pone's hand, dealer's hand, crib -- each stops the game at the target."""
    r = st.round
    r.phase = "show"
    assert r.starter is not None
    crib = sort_cards([*(r.discards[0] or []), *(r.discards[1] or [])])
    for what, seat, cards, is_crib in (
        ("pone", r.pone, r.kept[r.pone], False),
        ("dealer", r.dealer, r.kept[r.dealer], False),
        ("crib", r.dealer, crib, True),
    ):
        assert cards is not None
        hs = score_hand(cards, r.starter, is_crib=is_crib)
        item = {
            "what": what,
            "cards": list(hs.cards),
            "starter": r.starter,
            "breakdown": hs.to_json(),
        }
        # filed before it is scored: if it ends the game, hand_over must already list it
        r.shows.append(
            _deep(
                {
                    "seat": seat,
                    **item,
                    "points": hs.total,
                    "scored": _creditable(st, seat, hs.total),
                }
            )
        )
        if _score(st, seat, hs.total, "show", at, events, item)[1]:
            return
    _hand_over(st, at, events)
    _deal(st, r.number + 1, r.pone, at, events)  # C28: at once; the deal alternates (C4)


def _hand_over(st: GameState, at: int, events: list[Event]) -> None:
    """The hand's public summary (ROUND_END_EVENT): by now every card in it is public (C30f-g)
    except the stock, and except which crib card came from whom (C30c)."""
    r = st.round
    crib = None
    if r.discards[0] is not None and r.discards[1] is not None:
        crib = sort_cards([*r.discards[0], *r.discards[1]])
    data = {
        "round": r.number,
        "at": at,
        "dealer": r.dealer,
        "pone": r.pone,
        "starter": r.starter,
        "hands": [None if k is None else k[:] for k in r.kept],
        "crib": crib,
        "his_heels": r.his_heels,
        "pegged": list(r.pegged),
        "shows": _deep(r.shows),
        "points": list(r.points),
        "scores": list(st.scores),
        "complete": len(r.shows) == 3,
    }
    events.append(Event("hand_over", data))
    st.history.append(list(r.points))
    st.last_hand = _deep(data)  # never shared with the event: both are handed out


def _deep(v: Any) -> Any:
    if isinstance(v, list):
        return [_deep(x) for x in v]
    if isinstance(v, dict):
        return {k: _deep(x) for k, x in v.items()}
    return v


def _finish(st: GameState, winner: int, at: int, events: list[Event]) -> None:
    """C22: the game ends at once; the last hand is filed (its unplayed cards and the crib
    become public, C30g) and ``game_over`` follows."""
    r = st.round
    st.status = "finished"
    st.winners = [winner]
    r.phase = "over"
    r.turn = None
    r.turn_since = None
    _hand_over(st, at, events)
    events.append(
        Event(
            "game_over",
            {
                "at": at,
                "round": r.number,
                "winners": [winner],
                "scores": list(st.scores),
                "result": result_label(st.scores[1 - winner]),
            },
        )
    )
