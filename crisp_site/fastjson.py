"""JSON through orjson wherever its result is provably the standard library's; the stdlib otherwise.

Why: at 100 tables the daphne spent more of its GIL samples in the stdlib's JSON than anywhere
else of its own (session 20's py-spy profile: `json.encoder` the largest self entry at 4.9 %,
the frames' `broadcast.encode` 2.5 %, the state's dump for the change's write 2.2 %, decoding
showing too), and a Celery worker pays the same per change. orjson does the same work in C in
a fraction of the time (bench/results/session20-json.md).

Each function here promises the *stdlib's* result, not orjson's:

* `compact(value)` is `json.dumps(value, separators=(",", ":"), ensure_ascii=False)`,
  character for character (a frame's text);
* `dumps_db(value)` is Django's `json.dumps(value)` for a JSON column, the same `jsonb` value
  once PostgreSQL has read it (only insignificant whitespace differs);
* `loads(text)` is `json.loads(text)` (or the `fallback` given): the same value, of the same
  types, or the same exception.

orjson is used only where it gives that; wherever the two could differ, that value goes through
the stdlib whole, so nothing raises that did not, and nothing reads or writes differently:

* **Integers past 64 bits**: orjson refuses to write them (its error sends the value to the
  stdlib) and *reads* them as floats, silently; so a text holding an integer of 19 digits or
  more is read by the stdlib (`_TO_STDLIB_IN`; every integer of 18 digits fits 63 bits).
* **Floats**: orjson writes some in another notation (`1e16` for `1e+16`); so any float in
  orjson's output sends the value to the stdlib (`_FLOAT_OUT`), and any number with a fraction
  or an exponent in a text sends it to the stdlib to read. NaN and the infinities are the one
  case no output check sees (orjson writes `null`, the stdlib `NaN`, which PostgreSQL's `jsonb`
  and every browser's `JSON.parse` refuse); no value of this project can hold one: client input
  refuses them (`crisp_site.parsers`), `jsonb` cannot store them, and the engines count in
  integers.
* **Keys that are not `str`**: orjson refuses them (to the stdlib, which writes `1` as `"1"`).
* **Subclasses of `str`, `int`, `float`, `dict`, `list`, `tuple`, datetimes, dataclasses**:
  handed to `default` (orjson's `OPT_PASSTHROUGH_*`), which refuses: to the stdlib, which does
  with them what it always did (an `int` enum by value, a `dict` subclass by its `items()`, a
  datetime refused).
* **What orjson refuses and the stdlib takes** (lone surrogates, `NaN` literals, nesting past
  orjson's limits, a circular value): to the stdlib, which answers as it always did.
* **What orjson takes and the stdlib refuses**: `enum.Enum` members of no built-in type and
  `uuid.UUID`s, written where the stdlib raised `TypeError` (no frame or column holds one), and
  a text nested deeper than the stdlib's recursion reaches from the caller's stack (its
  `RecursionError`; orjson reads up to 1024 levels): `crisp_site.parsers` refuses anything
  past 32 levels either way, and no stored column nests more than a few.

Proven by tests/site/test_fastjson.py (random values and texts, Hypothesis; every frame, state
and event of random games of the three games; the escapes; the edge cases above).
"""

from __future__ import annotations

import json
import re
from typing import Any

import orjson

__all__ = ["compact", "dumps_db", "loads"]

#: Everything orjson would write unlike the stdlib goes to `default` (which refuses) instead.
_OPTIONS = (
    orjson.OPT_PASSTHROUGH_SUBCLASS
    | orjson.OPT_PASSTHROUGH_DATETIME
    | orjson.OPT_PASSTHROUGH_DATACLASS
)

#: A float in orjson's compact output: a number token (at the start, or after `[`, `:` or `,`:
#: orjson writes no whitespace) with a fraction or an exponent. Every float orjson writes has
#: one; no integer has. It may also match inside a string (`"at 12:30.5"`): that value then
#: goes to the stdlib, which costs time, never correctness.
_FLOAT_OUT = re.compile(rb"(?:^|[\[:,])-?\d+[.eE]")

#: A number in a JSON text that orjson would not read as the stdlib does: one with a fraction
#: or an exponent (a float: read by `float()` or a `parse_float`), or an integer of 19 digits
#: or more (orjson turns those past 64 bits into floats). A number token is at the start or
#: after `[`, `:` or `,` and JSON's whitespace; a match inside a string only costs time.
_TO_STDLIB_IN = re.compile(r"(?:^|[\[:,])[ \t\n\r]*-?(?:\d{19}|\d+[.eE])")


def _refuse(value: Any) -> Any:
    """orjson's `default`: never converts anything (the value then goes to the stdlib)."""
    raise TypeError(f"{type(value).__name__} goes to the standard library")


def compact(value: Any) -> str:
    """`json.dumps(value, separators=(",", ":"), ensure_ascii=False)`, character for character:
    orjson's output when it provably is that, else the stdlib's own."""
    try:
        out = orjson.dumps(value, default=_refuse, option=_OPTIONS)
    except TypeError:  # orjson.JSONEncodeError: a type, a key, an int, a depth it leaves alone
        return json.dumps(value, separators=(",", ":"), ensure_ascii=False)
    if _FLOAT_OUT.search(out) is not None:
        return json.dumps(value, separators=(",", ":"), ensure_ascii=False)
    return out.decode()


def dumps_db(value: Any) -> bytes | str:
    """A JSON column's value as psycopg sends it (`Jsonb(value, dumps=dumps_db)`): the same
    `jsonb` as Django's `json.dumps(value)` (compact bytes instead of spaced text; `jsonb` keeps
    no whitespace), or that very text where orjson could differ."""
    try:
        out = orjson.dumps(value, default=_refuse, option=_OPTIONS)
    except TypeError:
        return json.dumps(value)
    if _FLOAT_OUT.search(out) is not None:
        return json.dumps(value)
    return out


def loads(text: Any, fallback: Any = json.loads) -> Any:
    """`fallback(text)` (default `json.loads`): orjson's value when it provably is the same,
    else `fallback`'s value or exception. `fallback` must read integers and strings as
    `json.loads` does (its own floats and constants are fine: orjson never reads those here)."""
    if type(text) is str and _TO_STDLIB_IN.search(text) is None:
        try:
            return orjson.loads(text)
        except orjson.JSONDecodeError:
            pass  # refused: the stdlib's answer, value or error, is the one given
    return fallback(text)


# --- Django's JSON columns ---------------------------------------------------------------------

_installed: dict[str, Any] = {}


def install_django(enabled: bool = True) -> None:
    """Route Django's JSON columns through `dumps_db` and `loads` (`enabled=False`: back to
    Django's own functions; the bench's A/B and the tests switch it).

    Where, and why there: psycopg's `set_json_dumps`/`set_json_loads` do not reach these
    columns. Django's PostgreSQL backend wraps every `JSONField` value as
    `Jsonb(value, dumps=json.dumps)` (`DatabaseOperations.adapt_json_value`; the wrapper's own
    `dumps` beats psycopg's global one) and registers a text loader for `jsonb`, decoding in
    `JSONField.from_db_value` with `json.loads`. So those two are replaced: for a field with no
    `encoder`/`decoder` of its own (every field of this project), and with every other case
    handed to Django's original. Called once from `CrispSiteConfig.ready()`.
    """
    from django.db.backends.postgresql.operations import DatabaseOperations
    from django.db.models import JSONField
    from psycopg.types.json import Jsonb

    if not _installed:
        _installed["adapt"] = DatabaseOperations.adapt_json_value
        _installed["from_db"] = JSONField.from_db_value
    django_adapt, django_from_db = _installed["adapt"], _installed["from_db"]
    if not enabled:
        DatabaseOperations.adapt_json_value = django_adapt  # type: ignore[method-assign]
        JSONField.from_db_value = django_from_db  # type: ignore[method-assign]
        return

    def adapt_json_value(self: Any, value: Any, encoder: Any) -> Any:
        if encoder is None:
            return Jsonb(value, dumps=dumps_db)
        return django_adapt(self, value, encoder)

    def from_db_value(self: Any, value: Any, expression: Any, connection: Any) -> Any:
        if self.decoder is None and type(value) is str:
            try:
                return loads(value)
            except json.JSONDecodeError:  # as Django's: text that is not JSON stays text
                return value
        return django_from_db(self, value, expression, connection)

    adapt_json_value.__doc__ = django_adapt.__doc__
    from_db_value.__doc__ = django_from_db.__doc__
    DatabaseOperations.adapt_json_value = adapt_json_value  # type: ignore[method-assign]
    JSONField.from_db_value = from_db_value  # type: ignore[method-assign]
