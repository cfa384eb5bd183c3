"""`presence.report_unavailable`: one line per interval, counting what it stands for."""

from __future__ import annotations

import logging

import pytest

from games import presence


def test_failures_within_the_interval_are_counted_into_the_next_line(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    clock = [1000.0]
    monkeypatch.setattr(presence.time, "monotonic", lambda: clock[0])
    monkeypatch.setitem(presence._reported, "at", float("-inf"))
    monkeypatch.setitem(presence._reported, "missed", 0)
    caplog.set_level(logging.WARNING, logger="games.presence")
    for i in range(50):
        presence.report_unavailable(i, TimeoutError("pool"))
        clock[0] += 0.1  # 50 failures in 5 s: one line
    assert [r.getMessage() for r in caplog.records] == [
        "presence unavailable (game 0: TimeoutError: pool)"
    ]
    clock[0] += presence.REPORT_EVERY_SECONDS
    presence.report_unavailable(99, OSError("gone"))
    assert caplog.records[-1].getMessage() == (
        "presence unavailable (game 99: OSError: gone); 49 more failures since the last report"
    )
    assert all(r.exc_info is None for r in caplog.records)
