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
  stdlib) and *reads* them as floats, silently; so a text holding a run of 19 digits or more
  (every integer of 18 digits fits 63 bits) is read by the stdlib (`_plain_text`).
* **Floats**: orjson writes some in another notation (`0.00001` for `1e-05`); every float it
  writes has a `.` or an exponent with its sign (`e+`/`e-`: checked over every binade in the
  tests), so output with any of those goes to the stdlib (`_plain_output`; a string holding
  one only costs time). Read, orjson gives exactly `float(text)` (correctly rounded, as the
  stdlib; overflow refused, which sends the text to the stdlib): the tests compare the two over
  random texts of up to 40 digits and every exponent. NaN and the infinities are the one case
  no output check sees (orjson writes `null`, the stdlib `NaN`, which PostgreSQL's `jsonb` and
  every browser's `JSON.parse` refuse); no value of this project can hold one: client input
  refuses them (`crisp_site.parsers`), `jsonb` cannot store them, and the engines count in
  integers.
* **Keys that are not `str`**: orjson refuses them (to the stdlib, which writes `1` as `"1"`).
* **Subclasses of `str` and `int`** (Django's `TextChoices`: a game's `status` as the service
  layer sets it): handed to `default` (orjson's `OPT_PASSTHROUGH_SUBCLASS`), which gives
  orjson the plain `str`/`int` underneath, as the stdlib writes them (the string's own
  characters, `int.__repr__`), not what a subclass's `__str__` says.
* **Subclasses of `float`, `dict`, `list`, `tuple`, datetimes, dataclasses**: handed to
  `default`, which refuses them: to the stdlib, which does with them what it always did (a
  `dict` subclass by its `items()`, a datetime refused).
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
from typing import Any

import orjson

__all__ = ["compact", "dumps_db", "loads"]

#: Everything orjson would write unlike the stdlib goes to `default` (which refuses) instead.
_OPTIONS = (
    orjson.OPT_PASSTHROUGH_SUBCLASS
    | orjson.OPT_PASSTHROUGH_DATETIME
    | orjson.OPT_PASSTHROUGH_DATACLASS
)

#: Digits to `0`, so that a run of them is one substring search (bytes.translate: C speed; a
#: regular expression scanned a 1.6 KB state for longer than the stdlib took to decode it).
_DIGITS = bytes.maketrans(b"123456789", b"000000000")
_LONG_RUN = b"0" * 19


def _plain_output(out: bytes) -> bool:
    """No float in orjson's output: no `.`, no `e+`, no `e-` anywhere (single-byte searches
    first: frames rarely hold a `+` or a `-`)."""
    return b"." not in out and b"+" not in out and (b"-" not in out or b"e-" not in out)


def _plain_text(text: str) -> bool:
    """No run of 19 digits in `text` (so no integer orjson would read as a float)."""
    return _LONG_RUN not in text.encode("utf-8", "surrogatepass").translate(_DIGITS)


def _refuse(value: Any) -> Any:
    """orjson's `default`: a `str` or `int` subclass as the plain value the stdlib writes for
    it; anything else refused (the whole value then goes to the stdlib)."""
    if isinstance(value, str):
        return str.__str__(value)  # the characters themselves, whatever `__str__` says
    if isinstance(value, int) and not isinstance(value, bool):
        return int(int.__repr__(value))  # as the stdlib's encoder writes an int subclass
    raise TypeError(f"{type(value).__name__} goes to the standard library")


def _orjson(value: Any) -> bytes | None:
    """orjson's compact bytes for `value` where they are provably the stdlib's compact text,
    else None (the caller asks the stdlib)."""
    try:
        out = orjson.dumps(value, default=_refuse, option=_OPTIONS)
    except TypeError:  # orjson.JSONEncodeError: a type, a key, an int, a depth it leaves alone
        return None
    return out if _plain_output(out) else None


def compact(value: Any) -> str:
    """`json.dumps(value, separators=(",", ":"), ensure_ascii=False)`, character for character:
    orjson's output when it provably is that, else the stdlib's own."""
    out = _orjson(value)
    if out is None:
        return json.dumps(value, separators=(",", ":"), ensure_ascii=False)
    return out.decode()


def dumps_db(value: Any) -> bytes | str:
    """A JSON column's value as psycopg sends it (`Jsonb(value, dumps=dumps_db)`): the same
    `jsonb` as Django's `json.dumps(value)` (compact bytes instead of spaced text; `jsonb` keeps
    no whitespace), or that very text where orjson could differ."""
    out = _orjson(value)
    return json.dumps(value) if out is None else out


def loads(text: Any, fallback: Any = json.loads) -> Any:
    """`fallback(text)` (default `json.loads`): orjson's value when it is the same, else
    `fallback`'s value or exception. `fallback` must read numbers and strings as `json.loads`
    does and may refuse more (constants, infinities: orjson refuses those too, so they reach
    `fallback`)."""
    if type(text) is str and _plain_text(text):
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
    handed to Django's original. Called once from `CrispSiteConfig.ready()`, before any query:
    a compiled read (`crisp_site.prepared.Prepared`) binds each column's `from_db_value` when it
    is first compiled, so switching later does not reach reads compiled before.
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
