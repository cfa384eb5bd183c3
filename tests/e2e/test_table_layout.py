"""The table's layout on a phone (360x740) and a desktop (1366x800), measured (issue 22).

Games are driven through the service layer to the state a test wants; the browser draws it and
the test measures element boxes: seats never overlap each other and stay on the felt, running
totals are never cut off, labels are there. Screenshots go to test-artifacts/e2e/layout-*.png.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.e2e import layout_kit as kit

pytestmark = [pytest.mark.browser, pytest.mark.live]


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("viewport", ["phone", "desktop"])
@pytest.mark.parametrize("seats", [2, 4, 8])
def test_crisp_seats_never_overlap(
    chromium: Any, site: str, artifacts: Path, seats: int, viewport: str
) -> None:
    people = kit.players(seats)
    game = kit.started("crisp", people, timers=kit.QUICK_CRISP)
    page = kit.open_page(chromium, site, people[0], viewport, f"/games/{game.pk}/")
    page.wait_for_function(f"() => document.querySelectorAll('.felt .seat').length === {seats}")
    kit.shot(page, artifacts, f"crisp-{seats}-{viewport}")
    felt = kit.boxes(page, "#felt")[0]
    seat_boxes = kit.boxes(page, ".felt .seat")
    for i, a in enumerate(seat_boxes):
        assert kit.inside(a, felt), f"seat {i} {a} sticks out of the felt {felt}"
        for j, b in enumerate(seat_boxes[i + 1 :], i + 1):
            assert not kit.overlap(a, b), f"seats {i} and {j} overlap: {a} {b}"
    # Every card and chip of every seat is wholly visible, not clipped by the seat's row.
    assert kit.fully_visible(page, ".felt .seat .pcard") == []
    assert kit.fully_visible(page, ".felt .seat .dealer-chip") == []
    # Nothing of a seat hides under another seat's badge or the clock.
    chips = kit.boxes(page, ".felt .seat .dealer-chip")
    for c in chips:
        owners = [s for s in seat_boxes if kit.overlap(c, s)]
        assert len(owners) == 1, f"the dealer chip {c} touches {len(owners)} seats"
    assert page.errors == []
