"""Every engine's ``Settings`` JSON round trip, read once per distinct JSON (session 19).

``JsonSettings.from_json`` keeps the instances it made, by class and JSON -- each name with its
value's type and value -- so a game's stored settings are not checked again on every change.
These pin that what it gives is what a fresh read gives, and that it refuses what it refused.
"""

from __future__ import annotations

from typing import Any

import pytest

from games.engines import KINDS, engine_for
from games.engines.base import IllegalAction


def _settings(kind: str) -> Any:
    return engine_for(kind).Settings


@pytest.mark.parametrize("kind", list(KINDS))
def test_the_same_json_gives_an_equal_instance_and_the_round_trip_is_exact(kind: str) -> None:
    cls = _settings(kind)
    stored = cls().to_json()
    first = cls.from_json(dict(stored))
    again = cls.from_json(dict(stored))
    assert first == again == cls(**stored)
    assert again is first  # remembered: a frozen instance, shared safely
    assert again.to_json() == stored
    assert list(again.to_json()) == [f for f in stored]  # field order kept


def test_a_value_of_another_type_is_checked_not_remembered() -> None:
    """``True`` and ``1`` are equal and hash alike: the type is part of what is remembered."""
    from games.engines.crisp import Settings

    stored = Settings().to_json()
    assert Settings.from_json({**stored, "pile_draw": True}).pile_draw is True
    for _ in range(2):
        with pytest.raises(IllegalAction, match="pile_draw must be a bool"):
            Settings.from_json({**stored, "pile_draw": 1})
    assert Settings.from_json({**stored, "target_score": 1}).target_score == 1
    with pytest.raises(IllegalAction, match="target_score must be a positive int"):
        Settings.from_json({**stored, "target_score": True})


@pytest.mark.parametrize("kind", list(KINDS))
def test_what_was_refused_is_refused_every_time(kind: str) -> None:
    cls = _settings(kind)
    stored = cls().to_json()
    for _ in range(2):
        with pytest.raises(IllegalAction, match="unknown settings"):
            cls.from_json({**stored, "no_such_setting": 1})
        with pytest.raises(IllegalAction, match="bad_settings"):
            cls.from_json("not an object")
        with pytest.raises(IllegalAction, match="bad_settings"):
            cls.from_json({**stored, "pace": ["a", "list"]})  # no scalar: not remembered either


def test_crisp_settings_from_stored_json_are_checked_once_per_json() -> None:
    from games.engines.crisp import Settings

    stored = {**Settings().to_json(), "target_score": 7919}
    calls = []
    checks = Settings.__post_init__

    def counting(self: Any) -> None:
        calls.append(1)
        checks(self)

    Settings.__post_init__ = counting  # type: ignore[method-assign]
    try:
        a = Settings.from_json(dict(stored))
        b = Settings.from_json(dict(stored))
        c = Settings.from_json({**stored, "target_score": 7920})
    finally:
        Settings.__post_init__ = checks  # type: ignore[method-assign]
    assert a is b and a.target_score == 7919 and c.target_score == 7920
    assert len(calls) == 2


@pytest.mark.parametrize("kind", list(KINDS))
def test_settings_stored_before_a_field_existed_load_with_its_default(kind: str) -> None:
    """A game stored before ``pace`` and ``turn_seconds`` (issue 26) loads as it did: the
    defaults fill them, the first time and every time after."""
    cls = _settings(kind)
    stored = {k: v for k, v in cls().to_json().items() if k not in ("pace", "turn_seconds")}
    for _ in range(2):
        loaded = cls.from_json(dict(stored))
        assert loaded == cls(**stored) == cls()
        assert loaded.to_json() == cls().to_json()
