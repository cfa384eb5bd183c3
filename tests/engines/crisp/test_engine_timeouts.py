"""rules/crisp.md section 10 (setting 2, time per draw) and rulings R10, R15, R16, R21, R23: what a
timeout does at each stage, and the clock of every draw.

Timeline: 3 seats, dealer 0, memorise until 5000, 30 s per draw.  Seat 1's first draw's clock
starts at 5000: on time up to 35000 inclusive, timed out from 35001 (R18).
"""

from __future__ import annotations

from engine_support import Table, of_type, types

from games.engines.crisp import event_view, pending_deadlines

HANDS = {0: ["AC", "2C", "3C"], 1: ["4S", "5S", "6S"], 2: ["7D", "8D", "9D"]}


def table(top, **kw) -> Table:
    return Table(3, HANDS, top=top, draw_seconds=30, **kw)


def test_r23_draw_deadline_reported_and_inclusive():
    t = table(["AH"])
    t.advance(5000)
    assert [(d.key, d.kind, d.at) for d in pending_deadlines(t.state)] == [
        ("r1:t1:d1:timeout", "draw_timeout", 35001)
    ]
    assert t.view(None)["turn"]["draw_deadline"] == 35000
    t.do(1, "draw", at=34000)
    t.do(1, "discard", at=35000)  # the play is covered by the same clock, boundary on time
    assert t.t.seat == 2


def test_timeout_stage1_not_drawn_yet_top_card_drawn_and_discarded():
    t = table(["AH", "2H"])
    ev = t.advance(35001)
    to = of_type(ev, "timeout")[0]
    assert to.data | {} == {
        "seat": 1, "at": 35001, "turn": 1, "draw_no": 1, "stage": "before_draw",
        "source": "deck", "card": "AH", "extra_draws_lost": 0,
    }  # fmt: skip
    assert event_view(to, None)["data"]["card"] == "AH"  # discarded: public
    assert t.pile == ["AH"] and t.hand(1) == HANDS[1]
    # Stage 4: the turn ends with no crisp window; the next player may start at once (R10).
    te = of_type(ev, "turn_ended")[0]
    assert te.data["timeout"] and te.data["window_closes_at"] is None
    assert te.data["next_start_at"] == 35001
    assert types(ev)[-1] == "draw_ready" and t.t.seat == 2 and t.t.phase == "draw"
    t.refuse(1, "call", "no_window")
    t.do(2, "draw", at=35001)


def test_timeout_stage2_drawn_card_discarded_unused_even_a_queen():
    t = table(["QH"])
    t.do(1, "draw", at=6000)
    ev = t.advance(35001)
    to = of_type(ev, "timeout")[0]
    assert (to.data["stage"], to.data["card"], to.data["source"]) == ("holding", "QH", "deck")
    assert t.pile == ["QH"] and t.hand(1) == HANDS[1] and t.t.seat == 2


def test_timeout_stage2_a_king_held_gives_no_extra_draws():
    t = table(["KH", "AH"])
    t.do(1, "draw", at=6000)
    ev = t.advance(35001)
    assert of_type(ev, "timeout")[0].data["extra_draws_lost"] == 0
    assert t.pile == ["KH"] and t.t.seat == 2 and t.deck_left[0] == "AH"


def test_timeout_stage3_extra_draws_left_are_lost_r15():
    t = table(["KH", "AH", "2H", "3H"])
    t.do(1, "draw", "king", at=6000)
    # R23: the extra draw's clock starts when the King was played: 6000 -> 36000 inclusive.
    assert t.deadlines()["draw_timeout"] == 36001
    ev = t.advance(36001)
    to = of_type(ev, "timeout")[0]
    # R15: before an extra draw, too, the top card is drawn for the player and discarded.
    assert to.data["stage"] == "before_draw" and to.data["card"] == "AH"
    assert to.data["draw_no"] == 2 and to.data["extra_draws_lost"] == 1
    # The King's effect is cut short: used, so now discarded (rules/crisp.md X1).
    assert types(ev)[:3] == ["timeout", "king_discarded", "turn_ended"]
    assert t.pile == ["AH", "KH"] and t.deck_left[0] == "2H"
    assert t.t.seat == 2


def test_timeout_holding_an_extra_draw_card_with_draws_still_due():
    t = table(["KH", "KD", "AH"])
    t.do(1, "draw", "king", "draw", "king", at=6000)
    t.do(1, "draw", at=7000)  # AH held; 2 extra draws still due; two Kings in play
    ev = t.advance(36001)
    to = of_type(ev, "timeout")[0]
    assert to.data["stage"] == "holding" and to.data["extra_draws_lost"] == 2
    assert t.pile == ["AH", "KD", "KH"]  # unused card, then the Kings innermost first


def test_timeout_per_draw_clocks_r10_r23():
    t = table(["KH", "AH", "2H"])
    t.do(1, "draw", at=34000)
    t.do(1, "king", at=35000)  # on time; the extra draw's own clock starts now
    assert t.deadlines()["draw_timeout"] == 65001
    t.do(1, "draw", "discard", at=65000)
    assert t.deadlines()["draw_timeout"] == 95001
    t.do(1, "draw", "discard", at=95000)
    assert t.t.seat == 2 and t.t.start_at == 97000


def test_timeout_clock_after_a_window_starts_at_may_start():
    t = table(["AH", "2H"])
    t.do(1, "draw", "discard", at=5000)
    assert t.deadlines() == {"may_start": 7000, "window_closed": 8001}
    t.advance(7000)
    assert t.deadlines() == {"window_closed": 8001, "draw_timeout": 37001}


def test_timeout_pile_card_goes_back_on_the_pile_r21():
    t = table(["AH", "2H"], pile_draw=True)
    t.do(1, "draw", "discard", at=5000)
    t.do(2, "draw:pile", at=7000)
    ev = t.advance(37001)
    to = of_type(ev, "timeout")[0]
    assert (to.data["source"], to.data["card"]) == ("pile", "AH") and t.pile == ["AH"]


def test_timeout_forced_draw_may_turn_the_pile_over_r22():
    t = Table(2, {0: ["AC", "2C", "3C"], 1: ["4S", "5S", "6S"]}, dealer=1, draw_seconds=1)
    # Let timeouts alone empty the deck (no calls possible after a timeout).
    while t.r.turnovers == 0:
        d = pending_deadlines(t.state)[0]
        t.fire(d.key, d.at)
    turned = [e for e in t.events if e.type == "pile_turned"]
    assert len(turned) == 1
    nxt = t.events[t.events.index(turned[0]) + 1]
    assert nxt.type == "timeout" and nxt.data["stage"] == "before_draw"


def test_timeout_on_the_first_turn_ends_the_opening_look_r16():
    t = table(["AH"])
    t.advance(35001)
    t.refuse(1, "look", "look_expired")
    t.do(2, "look")


def test_no_limit_means_no_draw_deadline():
    t = Table(3, HANDS)
    t.advance(5000)
    assert t.deadlines() == {}
    t.do(1, "draw", at=10**9)  # whenever
    assert t.view(1)["turn"]["draw_deadline"] is None


def test_stale_timeout_key_changes_nothing():
    t = table(["AH", "2H"])
    t.do(1, "draw", "discard", at=5000)
    t.advance(7000)
    before = t.state
    assert t.fire("r1:t1:d1:timeout", 10**9) == []
    assert t.state is before
