"""JSON input with bounded nesting, for the REST API and the game WebSocket alike.

Python's `json` decoder recurses once per nesting level: a 2 KB body of 1,000 `[` raised a
RecursionError that escaped DRF's parser as a 500 on every JSON endpoint (and ended a socket
silently). No request of this API nests deeper than a handful of levels, so input nested past
`MAX_DEPTH` is refused as malformed JSON — a 400 `malformed_json`, or a `bad_frame` error frame
— before any serializer or engine walks it recursively.

Decoded by orjson where that gives the same value (`crisp_site.fastjson.loads`: no run of 19
digits, nothing orjson refuses), else by the strict stdlib decoder below, exactly as before:
the same values, the same refusals (orjson refuses NaN, the infinities and overflowing numbers
too, so those reach the stdlib's own messages).
"""

from __future__ import annotations

import json
import math
from typing import Any

from django.conf import settings
from rest_framework import parsers
from rest_framework.exceptions import ParseError

from crisp_site import fastjson

#: Deepest nesting of arrays/objects accepted (the deepest real request nests 3 levels).
MAX_DEPTH = 32


class TooDeep(ValueError):
    """JSON nested deeper than `MAX_DEPTH` (a ValueError, like every other malformed input)."""


def depth(value: Any) -> int:
    """How deeply arrays and objects nest in a decoded JSON value (iteratively: no recursion)."""
    deepest = 0
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, dict):
            children: Any = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        deepest = max(deepest, level)
        if deepest > MAX_DEPTH:
            break
        stack.extend((child, level + 1) for child in children)
    return deepest


def _no_constants(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def _finite_float(text: str) -> float:
    """A JSON number as a float, refused when it overflows to infinity (`1e999999`): Python
    would read it as `inf`, and anything echoing it back (a frame's `id`) would then write
    `Infinity`, which no browser's `JSON.parse` accepts."""
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"the number {text[:40]} is out of range")
    return value


def _strict(text: str | bytes) -> Any:
    return json.loads(text, parse_constant=_no_constants, parse_float=_finite_float)


def loads(text: str | bytes) -> Any:
    """Strict `json.loads` (no NaN/Infinity, literal or by overflow, as DRF's parser),
    refusing nesting past `MAX_DEPTH` with `TooDeep` (never a RecursionError)."""
    try:
        value = fastjson.loads(text, _strict)
    except RecursionError:
        raise TooDeep(f"JSON nested more than {MAX_DEPTH} levels deep.") from None
    if depth(value) > MAX_DEPTH:
        raise TooDeep(f"JSON nested more than {MAX_DEPTH} levels deep.")
    return value


class JSONParser(parsers.JSONParser):
    """DRF's JSON parser, with bounded nesting (`MAX_DEPTH`): too deep is a 400, not a 500."""

    def parse(
        self,
        stream: Any,
        media_type: str | None = None,
        parser_context: dict[str, Any] | None = None,
    ) -> Any:
        parser_context = parser_context or {}
        encoding = parser_context.get("encoding", settings.DEFAULT_CHARSET)
        try:
            raw = stream.read() if stream is not None else b""
            return loads(raw.decode(encoding))
        except TooDeep as error:
            raise ParseError(str(error)) from None
        except ValueError as error:  # also UnicodeDecodeError
            raise ParseError(f"JSON parse error - {error}") from None
