"""The rules: new games, legal actions, applying actions and deadlines.

Every public function here is pure: it takes a ``GameState`` and returns a new one (plus the
events that happened), never touching its input.  The pattern inside is always the same:
clone once, let the private ``_do_*`` helpers change the clone, return it.  If an action turns
out illegal the clone is simply dropped, so the caller's state is untouched by construction.

Time enters only as ``now`` (int ms).  Before an action at ``now`` the state is first brought
up to ``now`` by applying, each at its own instant, every deadline with ``at <= now`` (see
``deadlines`` for why that one rule gives R18's inclusive boundaries).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..base import Timers, check_new_game, placement_returns, seeded_deck, seeded_rng
from . import errors as E
from .actions import PLACE_INDEX, PLACES, Action, Event
from .cards import FULL_DECK, card_value, hand_total, is_special, rank
from .deadlines import Deadline, pending_deadlines
from .errors import IllegalAction
from .state import GameState, Round, Settings, Turn, Window

MIN_SEATS = 2
MAX_SEATS = 8


# --------------------------------------------------------------------------------------------
# Seeded randomness (R2).  sha256 keeps the derivation stable across Python versions.
# --------------------------------------------------------------------------------------------
_rng = seeded_rng


def first_dealer_for(seed: str, seats: int) -> int:
    """The first dealer of a game, drawn from the seed (R2).

    >>> first_dealer_for("demo", 4) == first_dealer_for("demo", 4)
    True
    """
    return _rng(seed, "first-dealer").randrange(seats)


def deck_for(seed: str, round_number: int) -> list[str]:
    """The deck order (top first) of a round when no explicit deck was given."""
    return seeded_deck(FULL_DECK, seed, round_number)


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
    """Start a game of ``seats`` players and deal round 1 at ``now``.

    The first dealer comes from ``seed`` (R2).  Round *n* is dealt from ``decks[n-1]`` when
    given (52 codes, top of deck first) -- the way a test or a replay sets a round up exactly --
    and otherwise from a deck order derived from ``seed`` and *n*.

    >>> st, ev = new_game(seats=3, settings=Settings(), seed="doc", now=0)
    >>> st.status, st.round_number, st.scores, [e.type for e in ev]
    ('playing', 1, [0, 0, 0], ['round_dealt'])
    """
    checked = check_new_game(
        seats=seats,
        settings=settings,
        settings_type=Settings,
        seed=seed,
        now=now,
        decks=decks,
        min_seats=MIN_SEATS,
        max_seats=MAX_SEATS,
    )
    dealer = first_dealer_for(seed, seats)
    st = GameState(
        seats=seats,
        settings=settings,
        seed=seed,
        decks=checked,
        first_dealer=dealer,
        status="playing",
        scores=[0] * seats,
        history=[],
        winners=[],
        round=None,  # type: ignore[arg-type]  # set by _deal just below
        clock=now,
    )
    events: list[Event] = []
    _deal(st, 1, dealer, now, events)
    return st, events


def _deal(st: GameState, number: int, dealer: int, at: int, events: list[Event]) -> None:
    """Deal round ``number`` (R1): from the dealer's left, one card each, three times around;
    a seat's first card is its left, the second its centre, the third its right."""
    n = st.seats
    if st.decks is not None and len(st.decks) >= number:
        order = st.decks[number - 1]
    else:
        order = deck_for(st.seed, number)
    hands: list[list[str]] = [["", "", ""] for _ in range(n)]
    for i in range(3 * n):
        hands[(dealer + 1 + i) % n][i // n] = order[i]
    st.round = Round(
        number=number,
        dealer=dealer,
        dealt_at=at,
        deck_order=list(order),
        deck=list(order[3 * n :]),
        pile=[],
        hands=hands,
        looked=[False] * n,
        begun=[False] * n,
        last_end=[None] * n,
        turn=None,
    )
    first = (dealer + 1) % n
    start = at + st.settings.memorise_period  # R28: none in a turn-based game
    events.append(
        Event(
            "round_dealt",
            {
                "round": number,
                "dealer": dealer,
                "first_seat": first,
                "at": at,
                "memorise_until": start,
                "deck_size": len(st.round.deck),
                "deck": list(order),  # full data only: event_view drops it
            },
        )
    )
    _new_turn(st, first, start, at, events)


# --------------------------------------------------------------------------------------------
# Public entry points
# --------------------------------------------------------------------------------------------
def apply(state: GameState, seat: int, action: Action, now: int) -> tuple[GameState, list[Event]]:
    """Apply ``action`` by ``seat`` at ``now``; return the new state and what happened.

    Every deadline due by ``now`` takes effect first, each at its own instant, so the action is
    judged against the table as it really is at ``now``.  An illegal action raises
    ``IllegalAction`` and leaves ``state`` untouched (its events, including those of the
    deadlines, are dropped too: call ``advance`` to apply those alone).
    """
    if not isinstance(action, Action):
        raise IllegalAction(E.BAD_ACTION, "not an Action")
    now = max(now, state.clock)
    st = state.clone()
    events: list[Event] = []
    _TIMERS.run(st, now, events)
    _check(st, seat, action, now)
    _do(st, seat, action, now, events)
    st.clock = now
    return st, events


def legal_actions(state: GameState, seat: int, now: int) -> list[Action]:
    """Everything ``seat`` may do at ``now``; each would be accepted by ``apply``.

    >>> st, _ = new_game(seats=2, settings=Settings(), seed="doc", now=0)
    >>> [str(a) for a in legal_actions(st, 0, 0)]
    ['look']
    """
    now = max(now, state.clock)
    st = _TIMERS.advanced(state, now)
    out = []
    for a in _candidates(st, seat):
        try:
            _check(st, seat, a, now)
        except IllegalAction:
            continue
        out.append(a)
    return out


def can(
    state: GameState, seat: int, now: int, deadlines: list[Deadline] | None = None
) -> list[str]:
    """The action *types* ``seat`` may take at ``now`` (``"draw_deck"``/``"draw_pile"`` for the
    two draws) -- the cheap summary every view carries.

    It answers the same question as ``legal_actions`` (the tests hold the two together) but
    without building and refusing candidate actions, because the web layer renders a view for
    every seat on every change.  ``deadlines`` may pass in ``pending_deadlines(state)`` when
    the caller has it already.
    """
    now = max(now, state.clock)
    ds = pending_deadlines(state) if deadlines is None else deadlines
    st = state if not ds or ds[0].at > now else _TIMERS.advanced(state, now)
    r = st.round
    if st.status != "playing" or r.reveal is not None or not 0 <= seat < st.seats:
        return []
    out = []
    if not r.looked[seat] and not r.begun[seat]:
        out.append("look")
    if r.caller is None and any(w.seat == seat and now <= w.closes_at for w in r.windows):
        out.append("call")
    t = r.turn
    if t is None or t.seat != seat:
        return out
    if t.phase == "call":  # R28: the turn's last step
        out += ["call", "pass"]
    elif t.phase == "play":
        held = t.held
        assert held is not None
        if t.held_from == "pile":
            out.append("swap")
        elif held[0] == "K":
            out.append("king")
        elif held[0] == "J":
            out += ["discard", "jack"]
        elif held[0] == "Q":
            out += ["discard", "queen"]
        else:
            out += ["swap", "discard"]
    elif t.phase == "draw" or now >= t.start_at:
        out.append("draw_deck")
        if st.settings.pile_draw and r.pile:
            out.append("draw_pile")
    return out


def is_over(state: GameState) -> bool:
    """Whether the game has ended by its rules (no move, no deadline any more)."""
    return state.status == "finished"


def returns(state: GameState) -> list[float]:
    """Each seat's return in [0, 1] on the totals (``games.engines.base.placement_returns``):
    a sole winner 1, the sole last 0, ties shared.  For a finished game it is the result (the
    winners are exactly the seats with the highest return); before the end, the standing.
    Crisp counts low: the lowest total wins (section 9).
    """
    return placement_returns(state.scores, low_wins=True)


def fire(state: GameState, key: str, now: int) -> tuple[GameState, list[Event]]:
    """Deliver the timer for deadline ``key`` at ``now``.

    If ``key`` is pending and due (``at <= now``), every pending deadline up to and including
    its instant takes effect, each at its own instant.  A stale key (its turn or draw is over)
    or an early one changes nothing: the same state and no events.
    """
    return _TIMERS.fire(state, key, now)


def advance(state: GameState, now: int) -> tuple[GameState, list[Event]]:
    """Apply every pending deadline with ``at <= now``, in order (the periodic sweep)."""
    return _TIMERS.advance(state, now)


def _apply_deadline(st: GameState, d: Deadline, events: list[Event]) -> None:
    r = st.round
    if d.kind == "window_closed":
        w = next(w for w in r.windows if f"r{r.number}:t{w.turn_no}:window" == d.key)
        r.windows.remove(w)
        events.append(Event("window_closed", {"seat": w.seat, "turn": w.turn_no, "at": d.at}))
    elif d.kind in ("memorise_over", "may_start"):
        _open_draw(st, d.at, events)
    elif d.kind == "draw_timeout":
        _timeout(st, d.at, events)
    elif d.kind == "call_timeout":
        _answer(st, d.at, False, True, events)  # R28: a timeout answers "no"
    elif d.kind == "next_round":
        _deal(st, r.number + 1, (r.dealer + 1) % st.seats, d.at, events)
    else:  # pragma: no cover - pending_deadlines only makes the kinds above
        raise AssertionError(d.kind)


#: Deadlines take effect through the one loop every engine shares (base.Timers, R18).
_TIMERS = Timers(pending_deadlines, _apply_deadline)


# --------------------------------------------------------------------------------------------
# Legality: one function decides, for apply and legal_actions alike
# --------------------------------------------------------------------------------------------
def _candidates(st: GameState, seat: int) -> list[Action]:
    out = [Action.look(), Action.call()]
    t = st.round.turn
    if t is None or t.seat != seat:
        return out
    if t.phase == "call":
        return [*out, Action.pass_()]
    if t.phase in ("start", "draw"):
        return [*out, Action.draw("deck"), Action.draw("pile")]
    out += [Action.swap(p) for p in PLACES]
    out += [Action.discard(), Action.jack(), Action.king()]
    if t.held is not None and rank(t.held) == "Q" and t.held_from == "deck":
        for other in range(st.seats):
            if other != seat:
                out += [Action.queen(p, other, q) for p in PLACES for q in PLACES]
    return out


def _check(st: GameState, seat: int, action: Action, now: int) -> None:
    """Raise ``IllegalAction`` unless ``seat`` may take ``action`` at ``now`` (the state has
    already been brought up to ``now``).  Reasons name only public facts and the actor's own
    drawn card, never a hidden value."""
    if not isinstance(seat, int) or isinstance(seat, bool) or not 0 <= seat < st.seats:
        raise IllegalAction(E.BAD_SEAT, f"no seat {seat!r} at this table")
    if st.status == "finished":
        raise IllegalAction(E.GAME_FINISHED, "the game is over")
    r = st.round
    if r.reveal is not None:
        raise IllegalAction(E.ROUND_OVER, "the round is over; the next one is being dealt")
    typ = action.type
    if typ == "look":
        if r.looked[seat]:
            raise IllegalAction(E.ALREADY_LOOKED, "you have already taken your opening look")
        if r.begun[seat]:
            raise IllegalAction(E.LOOK_EXPIRED, "the opening look ends when your first turn begins")
        return
    if typ == "call":
        if st.settings.turn_based:
            _check_answer(st, seat, "call")
        else:
            _check_call(st, seat, now)
        return
    if typ == "pass":
        if not st.settings.turn_based:
            raise IllegalAction(
                E.WRONG_PHASE,
                'pass answers "Call crisp?", which only a turn-based game asks; '
                "in a live game the next turn simply starts",
            )
        _check_answer(st, seat, "pass")
        return
    t = r.turn
    assert t is not None
    if t.seat != seat:
        raise IllegalAction(E.NOT_YOUR_TURN, f"it is seat {t.seat}'s turn")
    if t.phase == "call":
        raise IllegalAction(
            E.WRONG_PHASE, 'your turn is over but for its last step: answer "Call crisp?"'
        )
    if typ == "draw":
        if t.phase == "play":
            raise IllegalAction(E.WRONG_PHASE, "you already hold a drawn card: play it first")
        if t.phase == "start" and now < t.start_at:
            what = "the memorise period" if t.no == 1 else "the start delay"
            raise IllegalAction(E.TOO_EARLY, f"{what} lasts until {t.start_at}")
        if action.source == "pile":
            if not st.settings.pile_draw:
                raise IllegalAction(E.PILE_DRAW_OFF, "drawing from the discard pile is not allowed")
            if not r.pile:
                raise IllegalAction(E.PILE_EMPTY, "the discard pile is empty: draw from the deck")
        elif action.source != "deck":
            raise IllegalAction(E.BAD_ACTION, "draw from 'deck' or 'pile'")
        return
    if t.phase != "play":
        raise IllegalAction(E.WRONG_PHASE, "draw a card first")
    held = t.held
    assert held is not None
    if typ == "swap" and action.place not in PLACE_INDEX:
        raise IllegalAction(E.BAD_ACTION, "swap needs a place: left, centre or right")
    if t.held_from == "pile":
        if typ == "swap":
            return
        if typ in ("jack", "queen", "king"):
            raise IllegalAction(
                E.NO_EFFECT_FROM_PILE, "a card taken from the pile has no effect: swap it in"
            )
        raise IllegalAction(E.MUST_SWAP, "a card taken from the pile must be swapped in")
    r0 = rank(held)
    if r0 == "K" and typ != "king":
        raise IllegalAction(E.MUST_PLAY_KING, "a King drawn from the deck must be played")
    if typ == "swap":
        if is_special(held):
            raise IllegalAction(
                E.SPECIAL_NOT_SWAPPABLE, "a Jack, Queen or King from the deck cannot be swapped in"
            )
        return
    if typ == "discard":
        return
    if typ == "jack":
        if r0 != "J":
            raise IllegalAction(E.WRONG_CARD, "you do not hold a Jack drawn from the deck")
        return
    if typ == "queen":
        if r0 != "Q":
            raise IllegalAction(E.WRONG_CARD, "you do not hold a Queen drawn from the deck")
        ts = action.target_seat
        if not isinstance(ts, int) or not 0 <= ts < st.seats:
            raise IllegalAction(E.BAD_TARGET, f"no seat {ts!r} at this table")
        if ts == seat:
            raise IllegalAction(
                E.QUEEN_NEEDS_OTHER, "a Queen swaps one of your cards with another player's"
            )
        if action.place not in PLACE_INDEX or action.target_place not in PLACE_INDEX:
            raise IllegalAction(E.BAD_ACTION, "queen needs two places")
        return
    if typ == "king":
        if r0 != "K":
            raise IllegalAction(E.WRONG_CARD, "you do not hold a King drawn from the deck")
        return
    raise IllegalAction(E.BAD_ACTION, f"unknown action type {typ!r}")  # pragma: no cover


def _check_answer(st: GameState, seat: int, typ: str) -> None:
    """R28 (turn-based): ``call`` and ``pass`` answer "Call crisp?", the last step of the
    seat's own turn, and nothing else."""
    r = st.round
    t = r.turn
    if typ == "call" and r.caller is not None:
        _check_call(st, seat, st.clock)  # the live reasons: already called, final turns
    if t is None or t.seat != seat:
        raise IllegalAction(
            E.NOT_YOUR_TURN,
            '"Call crisp?" is the last step of your own turn in a turn-based game',
        )
    if t.phase != "call":
        if typ == "call" and t.final:
            raise IllegalAction(E.FINAL_TURNS, "nobody may call crisp during the final turns")
        raise IllegalAction(
            E.NO_WINDOW if typ == "call" else E.WRONG_PHASE,
            '"Call crisp?" is asked when the last card of your turn has been played',
        )


def _check_call(st: GameState, seat: int, now: int) -> None:
    r = st.round
    if r.caller is not None:
        if r.caller == seat:
            raise IllegalAction(E.ALREADY_CALLED, "you have already called crisp this round")
        t = r.turn
        if seat in r.finals_done or (t is not None and t.seat == seat and t.final):
            raise IllegalAction(E.FINAL_TURNS, "nobody may call crisp during the final turns")
        raise IllegalAction(
            E.ALREADY_CALLED, f"seat {r.caller} has already called crisp this round"
        )
    for w in r.windows:
        if w.seat == seat:
            if now > w.closes_at:  # only reachable when the state was not advanced
                raise IllegalAction(E.WINDOW_CLOSED, "your crisp window has closed")
            return
    end = r.last_end[seat]
    t = r.turn
    if t is not None and t.seat == seat and t.begun:
        raise IllegalAction(E.NO_WINDOW, "call crisp at the end of your turn, not during it")
    if end is None:
        raise IllegalAction(E.NO_WINDOW, "you have not played a turn this round yet")
    if end[1] == "timeout":
        raise IllegalAction(E.NO_WINDOW, "a turn ended by timeout opens no crisp window")
    raise IllegalAction(E.WINDOW_CLOSED, "your crisp window has closed")


# --------------------------------------------------------------------------------------------
# Doing things (on the clone)
# --------------------------------------------------------------------------------------------
def _do(st: GameState, seat: int, a: Action, now: int, events: list[Event]) -> None:
    r = st.round
    if a.type == "look":
        r.looked[seat] = True
        left, _, right = r.hands[seat]  # R17: what lies there now
        events.append(Event("look", {"seat": seat, "at": now, "left": left, "right": right}))
        return
    if a.type in ("call", "pass") and st.settings.turn_based:
        _answer(st, now, a.type == "call", False, events)
        return
    if a.type == "call":
        _call(st, seat, now, events)
        return
    t = r.turn
    assert t is not None
    if a.type == "draw":
        if t.phase == "start":
            _open_draw(st, t.start_at, events)
        _begin(st, t, now, events)
        if a.source == "deck":
            if not r.deck:
                _turnover(st, now, events)
            card = r.deck.pop(0)
        else:
            card = r.pile.pop()
        t.held, t.held_from, t.phase = card, a.source, "play"
        events.append(
            Event(
                "draw",
                {
                    "seat": seat,
                    "at": now,
                    "turn": t.no,
                    "draw_no": t.draw_no,
                    "source": a.source,
                    "card": card,
                    "deck_size": len(r.deck),
                },
            )
        )
        return
    held = t.held
    assert held is not None
    base = {"seat": seat, "at": now, "turn": t.no, "draw_no": t.draw_no}
    if a.type == "swap":
        i = PLACE_INDEX[a.place]  # type: ignore[index]
        out = r.hands[seat][i]
        r.hands[seat][i] = held
        r.pile.append(out)
        events.append(
            Event(
                "swap",
                {**base, "place": a.place, "source": t.held_from, "card_in": held, "card_out": out},
            )
        )
    elif a.type == "discard":
        r.pile.append(held)
        events.append(Event("discard", {**base, "card": held}))
    elif a.type == "jack":
        # Section 5 (originals): used, *then* discarded.  The look is immediate (R26).
        events.append(Event("jack", {**base, "card": held, "centre": r.hands[seat][1]}))
        r.pile.append(held)
    elif a.type == "queen":
        i = PLACE_INDEX[a.place]  # type: ignore[index]
        ts = a.target_seat
        assert ts is not None
        j = PLACE_INDEX[a.target_place]  # type: ignore[index]
        given, received = r.hands[seat][i], r.hands[ts][j]
        r.hands[seat][i], r.hands[ts][j] = received, given
        events.append(
            Event(
                "queen",
                {
                    **base,
                    "card": held,
                    "place": a.place,
                    "target_seat": ts,
                    "target_place": a.target_place,
                    "given": given,
                    "received": received,
                },
            )
        )
        r.pile.append(held)
    elif a.type == "king":
        # Section 5 (originals): a King is used -- its two extra draws -- and *then* discarded,
        # so it lies face up beside the player, not on the pile, during its own extra draws.
        # (R6/R25 put it on the pile first; the originals win, see rules/crisp.md X1.)  Remember
        # how many extra draws were still due before it: when the count is back there, its
        # own two are done and it goes onto the pile.
        t.kings.append([held, t.extra_draws])
        t.extra_draws += 2
        events.append(Event("king", {**base, "card": held, "extra_draws": t.extra_draws}))
    _after_play(st, now, events)


def _begin(st: GameState, t: Turn, at: int, events: list[Event]) -> None:
    """A turn begins with its first draw or its timeout (R16): the seat's opening look
    expires, and any crisp window it still had closes (it is no longer 'the end of its turn')."""
    if t.begun:
        return
    t.begun = True
    r = st.round
    r.begun[t.seat] = True
    for w in [w for w in r.windows if w.seat == t.seat]:
        r.windows.remove(w)
        events.append(Event("window_closed", {"seat": w.seat, "turn": w.turn_no, "at": at}))


def _after_play(st: GameState, now: int, events: list[Event]) -> None:
    t = st.round.turn
    assert t is not None
    t.held = t.held_from = None
    while t.kings and t.kings[-1][1] == t.extra_draws:
        _discard_king(st, now, False, events)
    if t.extra_draws > 0:
        t.extra_draws -= 1
        t.draw_no += 1
        t.phase = "start"
        _open_draw(st, now, events)  # R23: the extra draw's clock starts now
    else:
        _end_turn(st, now, False, events)


def _discard_king(st: GameState, at: int, timed_out: bool, events: list[Event]) -> None:
    """A King whose effect is over (its extra draws played, or lost to a timeout) goes onto
    the pile, innermost King first."""
    r = st.round
    t = r.turn
    assert t is not None
    card = t.kings.pop()[0]
    r.pile.append(card)
    events.append(
        Event("king_discarded", {"seat": t.seat, "at": at, "card": card, "timeout": timed_out})
    )


def _turnover(st: GameState, at: int, events: list[Event]) -> None:
    """Section 6, R7, R22: the pile, unshuffled, becomes the deck; its first-discarded card is
    the new top.  Only ever called when a deck draw meets an empty deck."""
    r = st.round
    r.deck, r.pile = r.pile, []
    r.turnovers += 1
    events.append(Event("pile_turned", {"at": at, "deck_size": len(r.deck)}))


def _new_turn(st: GameState, seat: int, start_at: int, now: int, events: list[Event]) -> None:
    r = st.round
    r.turns_taken += 1
    r.turn = Turn(
        no=r.turns_taken, seat=seat, phase="start", start_at=start_at, final=r.caller is not None
    )
    if start_at <= now:
        _open_draw(st, start_at, events)


def _open_draw(st: GameState, at: int, events: list[Event]) -> None:
    t = st.round.turn
    assert t is not None and t.phase == "start"
    t.phase = "draw"
    t.clock_from = at
    ms = st.settings.move_ms
    events.append(
        Event(
            "draw_ready",
            {
                "seat": t.seat,
                "at": at,
                "turn": t.no,
                "draw_no": t.draw_no,
                "extra_draws_left": t.extra_draws,
                "final": t.final,
                "deadline": at + ms if ms is not None else None,
            },
        )
    )


def _timeout(st: GameState, at: int, events: list[Event]) -> None:
    """Section 10 / R15: the rest of the turn is lost.  A draw not yet made is made from the
    deck and discarded; a held card is discarded unused (a pile card goes back, R21); remaining
    extra draws are lost; the turn ends with no crisp window (R10)."""
    r = st.round
    t = r.turn
    assert t is not None
    data: dict[str, Any] = {"seat": t.seat, "at": at, "turn": t.no, "draw_no": t.draw_no}
    if t.phase == "draw":
        _begin(st, t, at, events)
        if not r.deck:
            _turnover(st, at, events)
        card = r.deck.pop(0)
        data.update(stage="before_draw", source="deck", card=card)
    else:
        card = t.held  # type: ignore[assignment]
        assert card is not None
        data.update(stage="holding", source=t.held_from, card=card)
        t.held = t.held_from = None
    r.pile.append(card)
    data["extra_draws_lost"] = t.extra_draws
    t.extra_draws = 0
    events.append(Event("timeout", data))
    while t.kings:  # their effect is cut short: used, so now discarded
        _discard_king(st, at, True, events)
    _end_turn(st, at, True, events)


def _end_turn(st: GameState, at: int, timed_out: bool, events: list[Event]) -> None:
    r = st.round
    t = r.turn
    assert t is not None
    seat = t.seat
    if st.settings.turn_based and not timed_out and not t.final and r.caller is None:
        # R28: the last card of the turn is played; its last step is "Call crisp?", under
        # the same time per move.  A final turn or a timed-out one asks nothing (section 7,
        # R10), as no window opens live.
        t.phase, t.clock_from = "call", at
        ms = st.settings.move_ms
        events.append(
            Event(
                "call_ready",
                {
                    "seat": seat,
                    "at": at,
                    "turn": t.no,
                    "deadline": at + ms if ms is not None else None,
                },
            )
        )
        return
    r.last_end[seat] = [at, "timeout" if timed_out else "played"]
    closes_at = None
    if t.final:
        r.finals_done.append(seat)
    elif r.caller is None and not timed_out:
        closes_at = at + st.settings.window_ms
        r.windows.append(Window(seat, t.no, at, closes_at))
    nxt = (seat + 1) % st.seats
    last = r.caller is not None and nxt == r.caller
    next_start = at if timed_out else at + st.settings.start_delay
    events.append(
        Event(
            "turn_ended",
            {
                "seat": seat,
                "at": at,
                "turn": t.no,
                "timeout": timed_out,
                "final": t.final,
                "window_closes_at": closes_at,
                "next_seat": None if last else nxt,
                "next_start_at": None if last else next_start,
            },
        )
    )
    r.turn = None
    if last:
        _reveal(st, at, events)  # R11: the last final turn opens no window; the round ends
        return
    _new_turn(st, nxt, next_start, at, events)


def _answer(st: GameState, at: int, called: bool, timed_out: bool, events: list[Event]) -> None:
    """R28: the answer to "Call crisp?" ends the turn; the next turn starts at once.  A call
    makes every other seat's next turn a final turn (R11), as a call in a live window does
    before the next player has started.  Events: ``pass`` (a "no", ``timeout`` when the clock
    answered it), ``turn_ended``, then ``call`` for a "yes" -- the live order of a call."""
    r = st.round
    t = r.turn
    assert t is not None and t.phase == "call"
    seat = t.seat
    if not called:
        events.append(Event("pass", {"seat": seat, "at": at, "turn": t.no, "timeout": timed_out}))
    r.last_end[seat] = [at, "timeout" if timed_out else "played"]
    nxt = (seat + 1) % st.seats
    events.append(
        Event(
            "turn_ended",
            {
                "seat": seat,
                "at": at,
                "turn": t.no,
                "timeout": timed_out,
                "final": False,
                "window_closes_at": None,
                "next_seat": nxt,
                "next_start_at": at,
            },
        )
    )
    r.turn = None
    if called:
        r.caller, r.called_at = seat, at
        events.append(
            Event(
                "call",
                {
                    "seat": seat,
                    "at": at,
                    "turn": t.no,
                    "finals_done": [],
                    "final_turns_left": st.seats - 1,
                },
            )
        )
    _new_turn(st, nxt, at, at, events)


def _call(st: GameState, seat: int, now: int, events: list[Event]) -> None:
    """Section 7, R12, R20: the first valid call stands.  Every turn after the caller's --
    already finished inside the overlap, under way, or not yet begun -- is a final turn."""
    r = st.round
    w = next(w for w in r.windows if w.seat == seat)
    t = r.turn
    assert t is not None
    r.caller, r.called_at = seat, now
    for k in range(1, t.no - w.turn_no):
        r.finals_done.append((seat + k) % st.seats)
    r.windows = []  # one call per round: every other window is moot
    ends_now = t.seat == seat  # the turns of all the others are already over (R20)
    if not ends_now:
        t.final = True
    events.append(
        Event(
            "call",
            {
                "seat": seat,
                "at": now,
                "turn": w.turn_no,
                "finals_done": r.finals_done[:],
                "final_turns_left": st.seats - 1 - len(r.finals_done),
            },
        )
    )
    if ends_now:
        r.turn = None
        _reveal(st, now, events)


def _reveal(st: GameState, at: int, events: list[Event]) -> None:
    """Section 8, R13, R14: everybody's cards face up; score; maybe the game ends."""
    r = st.round
    caller = r.caller
    assert caller is not None
    totals = [hand_total(h) for h in r.hands]
    strict = all(totals[caller] < v for i, v in enumerate(totals) if i != caller)
    round_scores = totals[:]
    round_scores[caller] += -5 if strict else 5
    st.scores = [a + b for a, b in zip(st.scores, round_scores, strict=True)]
    st.history.append(round_scores)
    r.turn = None
    r.windows = []
    finished = max(st.scores) >= st.settings.target_score
    r.next_round_at = None if finished else at + st.settings.between_rounds_ms
    r.reveal = {
        "at": at,
        "totals": totals,
        "round_scores": round_scores,
        "caller_strictly_lowest": strict,
    }
    events.append(
        Event(
            "reveal",
            {
                "round": r.number,
                "at": at,
                "hands": [h[:] for h in r.hands],
                "totals": totals,
                "caller": caller,
                "caller_strictly_lowest": strict,
                "round_scores": round_scores,
                "scores": st.scores[:],
                "next_round_at": r.next_round_at,
            },
        )
    )
    if finished:
        low = min(st.scores)
        st.status = "finished"
        st.winners = [i for i, v in enumerate(st.scores) if v == low]
        events.append(
            Event("game_over", {"at": at, "winners": st.winners[:], "scores": st.scores[:]})
        )


__all__ = [
    "Deadline",
    "advance",
    "apply",
    "can",
    "card_value",
    "deck_for",
    "fire",
    "first_dealer_for",
    "is_over",
    "legal_actions",
    "new_game",
    "pending_deadlines",
    "returns",
]
