"""The determiniser never contradicts what the seat knows.

Property: in random mid-game states (real bot games, 2-5 seats, every setting), for every seat,
every sampled state

* renders the same ``view(sample, seat, now)`` as the true state (at ``now`` and later), so the
  same actions are legal in it;
* agrees with everything the seat's knowledge claims (its looks, the cards it saw moved, the
  deck order it knows after a turnover, "no court card here"), and that knowledge is true;
* holds the 52 cards exactly once.

Checked for seats that saw the whole round and for seats that sat in mid-round.
"""

from __future__ import annotations

import random

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st_
from support import crisp_states

from games.bots import Memory, bot_for
from games.bots.crisp import Determiniser, MediumBot, track
from games.engines.crisp import FULL_DECK, GameState, Settings, legal_actions, view


def _cards(state: GameState) -> list[str]:
    r = state.round
    out = (
        [c for h in r.hands for c in h]
        + r.deck
        + r.pile
        + [k[0] for k in (r.turn.kings if r.turn else [])]
    )
    if r.turn is not None and r.turn.held is not None:
        out.append(r.turn.held)
    return out


def _check_seat(state: GameState, memory: Memory, now: int, rng: random.Random) -> None:
    seat = memory.seat
    k = track(memory)
    truth = state.round
    assert k.consistent, "the replay lost track of a round it saw whole"
    for j in range(state.seats):
        for p in range(3):
            if k.slots[j][p] is not None:
                assert k.slots[j][p] == truth.hands[j][p], (seat, j, p)
            if k.plain[j][p]:
                assert truth.hands[j][p][0] not in "JQK", (seat, j, p)
    assert k.pile == truth.pile
    assert len(k.deck) == len(truth.deck)
    for i, c in enumerate(k.deck):
        if c is not None:
            assert truth.deck[i] == c, ("deck", i)
    det = Determiniser(memory, k)
    # The view at ``now``, and at later instants before anything that depends on hidden cards
    # can happen (a timeout ending a final turn reveals hands whose scores may end the game):
    # just before the next deadline, and at it when it only opens or closes something.
    dl = view(state, seat, now)["deadlines"]
    instants = [now]
    if dl:
        instants.append(max(now, dl[0]["at"] - 1))
        if dl[0]["kind"] in ("memorise_over", "may_start", "window_closed"):
            instants.append(dl[0]["at"])
    truth_views = [view(state, seat, t) for t in instants]
    truth_legal = [str(a) for a in legal_actions(state, seat, now)]
    for _ in range(2):
        sample = det.sample(rng)
        assert sample.seed != state.seed
        assert sorted(_cards(sample)) == sorted(FULL_DECK)
        for t, tv in zip(instants, truth_views, strict=True):
            assert view(sample, seat, t) == tv
        assert [str(a) for a in legal_actions(sample, seat, now)] == truth_legal
        r = sample.round
        for j in range(state.seats):
            for p in range(3):
                if k.slots[j][p] is not None:
                    assert r.hands[j][p] == k.slots[j][p]
                if k.plain[j][p]:
                    assert r.hands[j][p][0] not in "JQK"
        for i, c in enumerate(k.deck):
            if c is not None:
                assert r.deck[i] == c
        if truth.turn is not None and truth.turn.held is not None and k.held is not None:
            assert r.turn is not None and r.turn.held == k.held


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st_.integers(0, 10**6),
    seats=st_.integers(2, 5),
    pile_draw=st_.booleans(),
    draw_seconds=st_.sampled_from([None, 30]),
    levels=st_.lists(st_.sampled_from(["random", "easy", "medium"]), min_size=5, max_size=5),
)
def test_every_sample_shows_the_seat_the_table_it_saw(
    seed: int, seats: int, pile_draw: bool, draw_seconds: int | None, levels: list[str]
) -> None:
    cfg = Settings(target_score=40, pile_draw=pile_draw, draw_seconds=draw_seconds)
    bots = [bot_for("crisp", lv) for lv in levels[:seats]]
    rng = random.Random(seed)
    sitter: Memory | None = None
    sit_seat = seed % seats
    checked = 0
    for step, (state, memories, now) in enumerate(
        crisp_states(bots, seed=f"det{seed}", settings=cfg)
    ):
        if state.status != "playing":
            break
        if sitter is not None:
            sitter.observe(view=memories[sit_seat].view)
        if step == 37:
            # A bot sitting in from here: it knows only what this view shows.
            sitter = Memory("crisp", sit_seat)
            sitter.observe(view=memories[sit_seat].view)
        if step % 5:
            continue
        for m in memories:
            _check_seat(state, m, now, rng)
        if sitter is not None and sitter.anchor is not None:
            _check_seat_public(state, sitter, now, rng)
        checked += 1
        if checked >= 15:
            break
    assert checked >= 2


def _check_seat_public(state: GameState, memory: Memory, now: int, rng: random.Random) -> None:
    """A seat that sat in mid-round (no events fed here, only views): still consistent."""
    det = Determiniser(memory)
    tv = view(state, memory.seat, now)
    for _ in range(2):
        sample = det.sample(rng)
        assert sorted(_cards(sample)) == sorted(FULL_DECK)
        assert view(sample, memory.seat, now) == tv


def test_a_turnover_makes_the_deck_known_to_a_perfect_memory() -> None:
    """R7: the pile turned over is the new deck in its known order; a seat that watched the
    pile knows every card drawn from it, and the determiniser deals none of that at random."""
    bots = [_NeverCalls(), _NeverCalls()]
    for state, memories, _now in crisp_states(bots, seed="turnover", settings=Settings()):
        if state.round.turnovers and state.round.deck:
            for m in memories:
                k = track(m)
                assert k.consistent
                assert k.deck == state.round.deck  # every card known, in order
                sample = Determiniser(m, k).sample(random.Random(1))
                assert sample.round.deck == state.round.deck
            return
    raise AssertionError("no turnover")


class _NeverCalls(MediumBot):
    """Medium play without ever calling: the round runs until the pile is turned over."""

    def wants_call(self, memory, k, det, now, rng) -> bool:  # type: ignore[no-untyped-def]
        return False
