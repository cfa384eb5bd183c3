"""`crisp_site.fastjson` gives the standard library's results, through orjson where it can.

Every check compares against the stdlib call the code made before (session 20): the frame's
text character for character, a JSON column's value as PostgreSQL reads it, a decoded value
with its types (`1` is not `1.0`, `0` is not `False`) and key order, and an error's type and
message. Values and texts are random (Hypothesis) and taken from random games of the three
games (every state, every seat's and the spectator's view, every event's view), with the edge
cases written out: big integers, floats, non-ASCII (ja, ru, emoji), escapes, empty containers,
subclasses, invalid JSON.
"""

from __future__ import annotations

import collections
import dataclasses
import datetime
import enum
import json
import math
import random
import re
import struct
import uuid
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from crisp_site import fastjson, parsers
from games.engines import engine_for
from games.models import Game

KINDS = ("crisp", "cribbage", "triple_crown")


def stdlib_compact(value: Any) -> str:
    """What `broadcast.encode` was."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def same(a: Any, b: Any) -> bool:
    """Equal values of the same types, dict keys in the same order (`1 == 1.0 == True` is not
    enough; floats by their bits, so `-0.0` is not `0.0`)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, float):
        return a.hex() == b.hex() or (math.isnan(a) and math.isnan(b))
    if isinstance(a, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict):
        return list(a) == list(b) and all(same(a[k], b[k]) for k in a)
    return bool(a == b)


def outcome(call: Any, *args: Any) -> tuple[str, Any]:
    """A call's value, or its exception's type and message."""
    try:
        return ("value", call(*args))
    except Exception as error:
        return ("error", (type(error), str(error)))


def same_outcome(a: tuple[str, Any], b: tuple[str, Any]) -> bool:
    return a[0] == b[0] and (same(a[1], b[1]) if a[0] == "value" else a[1] == b[1])


# --- values ------------------------------------------------------------------------------------

TEXT = st.text(
    alphabet=st.one_of(
        st.characters(codec="utf-8"),  # any code point a socket can carry, controls included
        st.sampled_from('"\\/\b\f\n\r\t\x00\x1f\x7f\u2028\u2029é漢字ёЖ😀'),
    ),
    max_size=12,
)
INTS = st.one_of(
    st.integers(-1000, 1000),
    st.integers(-(2**63), 2**64 - 1),
    st.integers(-(2**70), 2**70),  # past 64 bits: the stdlib's alone
    st.sampled_from([2**63 - 1, 2**63, -(2**63), -(2**63) - 1, 2**64 - 1, 2**64, 10**30]),
)
FLOATS = st.floats(allow_nan=False, allow_infinity=False)
SCALARS = st.one_of(st.none(), st.booleans(), INTS, TEXT)
VALUES = st.recursive(
    st.one_of(SCALARS, FLOATS),
    lambda inner: st.one_of(
        st.lists(inner, max_size=5),
        st.tuples(inner, inner),
        st.dictionaries(TEXT, inner, max_size=5),
    ),
    max_leaves=30,
)
#: What frames and states are made of (no float, `str` keys): orjson's own path.
PLAIN = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(-(2**63), 2**63 - 1), TEXT),
    lambda inner: st.one_of(st.lists(inner, max_size=5), st.dictionaries(TEXT, inner, max_size=5)),
    max_leaves=30,
)


@settings(max_examples=600, suppress_health_check=[HealthCheck.too_slow])
@given(VALUES)
def test_compact_is_the_stdlibs_text(value: Any) -> None:
    assert fastjson.compact(value) == stdlib_compact(value)


@settings(max_examples=600, suppress_health_check=[HealthCheck.too_slow])
@given(VALUES)
def test_dumps_db_is_the_stdlibs_value(value: Any) -> None:
    out = fastjson.dumps_db(value)
    assert same(json.loads(out), json.loads(json.dumps(value)))


@settings(max_examples=300)
@given(PLAIN)
def test_plain_values_take_orjson(value: Any) -> None:
    """What frames hold goes through orjson (else nothing would be faster)."""
    out = orjson.dumps(value, default=fastjson._refuse, option=fastjson._OPTIONS)
    if fastjson._plain_output(out):  # a string may hold a "." or "e-": the stdlib then
        assert fastjson.compact(value) == out.decode()
    text = json.dumps(value)
    if fastjson._plain_text(text):
        assert same(orjson.loads(text), json.loads(text))


def test_the_edges_of_writing() -> None:
    class Colour(enum.IntEnum):
        RED = 1

    class Status(str, enum.Enum):  # noqa: UP042 - as Django's TextChoices
        PLAYING = "playing"

    class Shouty(str):
        def __str__(self) -> str:
            return "NOT THIS"

    class Count(int):
        def __repr__(self) -> str:
            return "NOT THIS"

        __str__ = __repr__

    class Items(dict):  # the stdlib writes a dict subclass by its items()
        def items(self) -> Any:
            return [("shown", 1)]

    @dataclasses.dataclass
    class Point:
        x: int

    point = collections.namedtuple("point", "x y")
    values: list[Any] = [
        {},
        [],
        "",
        {"": ""},
        [[], {}, [[]], {"a": {}}],
        2**63 - 1,
        -(2**63),
        2**64 - 1,
        2**64,
        -(2**64),
        10**30,
        {"big": [10**30, -(10**30)]},
        0.0,
        -0.0,
        1e16,
        1e-7,
        5e-324,
        1.7976931348623157e308,
        0.1,
        100.0,
        {"1": 1, "k": [1.5]},
        {1: "int key"},
        {True: 1, None: 2},
        {(1, 2): 3},
        Colour.RED,
        {"c": Colour.RED},
        Status.PLAYING,
        {Status.PLAYING: 1},
        {"s": Status.PLAYING},
        Items(hidden=2),
        Game.Status.PLAYING,
        {"status": Game.Status.FINISHED, Game.Status.PLAYING: 1},
        Shouty("shown"),
        {"s": [Shouty("shown"), Count(7)], "n": Count(-3)},
        Count(2**70),
        collections.OrderedDict(b=1, a=2),
        point(1, 2),
        (1, "two"),
        "\ud800 lone surrogate",
        {"\udc00": 1},
        '名前 Имя 😀 \u2028\u2029 \x7f \x00\x01\x1f " \\ / \b\f\n\r\t',
        True,
        None,
        [True, False, None, 0, 1, -1],
    ]
    deep: Any = 1
    for _ in range(300):
        deep = [deep]
    values.append(deep)
    loop: list[Any] = []
    loop.append(loop)
    values.append(loop)
    refused = [
        datetime.datetime(2026, 12, 7),
        datetime.date(2026, 12, 7),
        Point(1),
        {1.5, 2},
        b"bytes",
        object(),
        {"when": datetime.time(1, 2)},
    ]
    for value in values + refused:
        written = outcome(fastjson.compact, value)
        assert same_outcome(written, outcome(stdlib_compact, value)), value
        expected = outcome(json.dumps, value)
        got = outcome(fastjson.dumps_db, value)
        assert got[0] == expected[0], value
        if got[0] == "value":
            assert same(json.loads(got[1]), json.loads(expected[1])), value
        else:
            assert got[1] == expected[1], value


def test_a_status_as_the_service_layer_sets_it_takes_orjson(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """`Game.Status` members (a `str` subclass) in a frame do not send it to the stdlib."""

    def refused(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("the stdlib's json.dumps")

    frame = {"type": "update", "state": {"status": Game.Status.PLAYING, "version": 3}}
    expected = stdlib_compact(frame)
    monkeypatch.setattr(json, "dumps", refused)
    assert (
        fastjson.compact(frame)
        == expected
        == '{"type":"update","state":{"status":"playing","version":3}}'
    )


def test_nan_and_infinity_are_the_one_known_difference() -> None:
    """orjson writes NaN and the infinities as `null`, the stdlib as `NaN`/`Infinity` (not
    JSON: PostgreSQL's `jsonb` and browsers refuse it). No value here can hold one (the
    module's docstring); if orjson ever changes this, this test says so."""
    for value in (math.nan, math.inf, -math.inf):
        assert fastjson.compact({"x": value}) == '{"x":null}'
        assert stdlib_compact({"x": value}) != '{"x":null}'


def test_what_orjson_writes_where_the_stdlib_refuses() -> None:
    """The other documented difference: a plain `enum.Enum` member and a `uuid.UUID` are
    written, where the stdlib raised `TypeError` (the module's docstring: nothing here ever
    held one, since it would have failed before)."""

    class Plain(enum.Enum):
        A = 1

    for value in (Plain.A, uuid.UUID(int=1)):
        assert outcome(stdlib_compact, value)[0] == "error"
        assert outcome(fastjson.compact, value)[0] == "value"


def test_every_code_point_is_escaped_as_the_stdlib_does() -> None:
    chars = [chr(c) for c in range(0x3000)] + [chr(c) for c in range(0xE000, 0x110000, 97)]
    for i in range(0, len(chars), 256):
        chunk = "".join(chars[i : i + 256])
        value = {chunk: [chunk]}
        assert fastjson.compact(value) == stdlib_compact(value)
        assert same(fastjson.loads(json.dumps(value)), value)
        assert same(fastjson.loads(stdlib_compact(value)), value)


# --- texts -------------------------------------------------------------------------------------

EDGE_TEXTS = [
    "0", "-0", "-0.0", "0.0", "1", "-1", "1E5", "1e5", "1e-5", "1.5", "1e400", "-1e400",
    "123456789012345678", "-123456789012345678", "1234567890123456789", "-1234567890123456789",
    "9223372036854775807", "-9223372036854775808", "-9223372036854775809",
    "18446744073709551615", "18446744073709551616", "100000000000000000000000000000",
    '{"n": 18446744073709551616}', '[1,18446744073709551616]', '{"a":[1, 2.5]}',
    "[1,]", '{"a":1,}', "{'a':1}", "01", "-01", "+1", ".5", "1.", "1.e5", "0x10", "1_000",
    "NaN", "Infinity", "-Infinity", "nan", "inf", '[NaN]', '{"a": Infinity}',
    '"\\ud800"', '"\\udc00\\ud800"', '"\\ud83d\\ude00"', '"\\uD83D\\uDE00"', '"\\u00e9"',
    '"\x00"', '"\t"', '"\n"', '"\x1f"', '"\x7f"', '"\\u0000"', '"\\x41"', '"\\/"', '"\\a"',
    '"\\u12"', '"\\u12G4"', '"abc', 'abc"', '"\\"', '"\u2028"',
    "\ufeff{}", "{}\ufeff", " {} ", "\u00a0{}", "\x0b{}", "\x0c{}", "\t\n\r {}\t\n\r ",
    '{"a":1,"b":2,"a":3}', '{"a":{"x":1},"a":[]}', '{"b":1,"a":2}',
    '"a" "b"', "[1 2]", '{"a" 1}', '{"a":1 "b":2}', "/*c*/1", "1 // c", "tru", "nul",
    "true", "false", "null", "True", "None", "", " ", "[", "]", "{", "}", ":", ",",
    "[[[]]]", '{"":{"":{"":[]}}}', "[{}]", '{"a":[]}',
    '{"名前": "ゲーム", "имя": "игра", "e": "😀"}', '"名前"',
    "[" * 1100 + "]" * 1100, "[" * 1000 + "]" * 1000, "[" * 40 + "1" + "]" * 40,
    '{"a":' * 300 + "1" + "}" * 300, '{"type":"act","action":{"type":"draw","source":"deck"},'
    '"version":12,"id":3,"idempotency_key":"k-1"}',
    '{"type":"resync","version":99999999999999999999}',
    '{"type":"ping","id":1.5}', '{"id":1e999999}', '{"id":-1e999999}', '{"id":12:30.5}',
    '"12:30.5"', '{"t":"at 12:30.5, [1.5"}',
]  # fmt: skip


def stdlib_strict_loads(text: Any) -> Any:
    """`crisp_site.parsers.loads` as it was (session 19): strict stdlib, then the depth."""
    try:
        value = json.loads(
            text, parse_constant=parsers._no_constants, parse_float=parsers._finite_float
        )
    except RecursionError:
        raise parsers.TooDeep(f"JSON nested more than {parsers.MAX_DEPTH} levels deep.") from None
    if parsers.depth(value) > parsers.MAX_DEPTH:
        raise parsers.TooDeep(f"JSON nested more than {parsers.MAX_DEPTH} levels deep.")
    return value


def check_text(text: str) -> None:
    expected = outcome(json.loads, text)
    if expected[0] == "error" and expected[1][0] is RecursionError:
        # Deeper than the stdlib's recursion reaches from here (a depth that depends on the
        # caller's stack): orjson reads up to 1024 levels (documented). parsers.loads refuses
        # both alike, below.
        got = outcome(fastjson.loads, text)
        assert got[0] == "value" or got == expected
    else:
        assert same_outcome(outcome(fastjson.loads, text), expected), repr(text)
    strict = outcome(parsers.loads, text)
    assert same_outcome(strict, outcome(stdlib_strict_loads, text)), repr(text)


@pytest.mark.parametrize("text", EDGE_TEXTS)
def test_the_edges_of_reading(text: str) -> None:
    check_text(text)


def test_a_clients_frame_is_read_by_orjson(monkeypatch: pytest.MonkeyPatch) -> None:
    """The consumer's frames (`parsers.loads`) take orjson's path: the stdlib is not called."""
    frame = '{"type":"act","id":7,"version":12,"action":{"type":"draw","source":"deck"}}'

    def refused(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("the stdlib's json.loads")

    monkeypatch.setattr(json, "loads", refused)
    assert parsers.loads(frame) == {
        "type": "act",
        "id": 7,
        "version": 12,
        "action": {"type": "draw", "source": "deck"},
    }


def test_texts_orjson_would_read_otherwise_are_the_stdlibs() -> None:
    """Why `_plain_text` exists: orjson reads an integer past 64 bits as a float, silently."""
    assert isinstance(orjson.loads("18446744073709551616"), float)
    assert isinstance(orjson.loads("-9223372036854775809"), float)
    for text in ("18446744073709551616", '{"a": [-9223372036854775809]}', "1" * 19):
        assert not fastjson._plain_text(text)
        assert same(fastjson.loads(text), json.loads(text))
    assert fastjson._plain_text("[" + "1" * 18 + ', "x"]')


def finite_floats(rng: random.Random) -> list[float]:
    """Every binade (both signs, the subnormals, the extremes) and random bit patterns."""
    out = [0.0, -0.0, 5e-324, 2.2250738585072014e-308, 1.7976931348623157e308, 0.1, 1e16]
    for exponent in range(-1074, 1024):
        for mantissa in (1.0, 1.5, 1.9999999999999998, 1 + rng.random()):
            value = math.ldexp(mantissa, exponent)
            if math.isfinite(value):
                out += [value, -value]
    out += [rng.uniform(-1e6, 1e6) for _ in range(2000)]
    for _ in range(20000):
        value = struct.unpack("<d", struct.pack("<Q", rng.getrandbits(64)))[0]
        if math.isfinite(value):
            out.append(value)
    return out


def test_every_float_orjson_writes_is_seen_and_reads_back() -> None:
    """`_plain_output`'s premise: orjson writes every float with a `.` or `e+`/`e-`; and its
    reading of what it (or the stdlib) wrote is the float itself."""
    for value in finite_floats(random.Random(20)):
        out = orjson.dumps(value)
        assert re.fullmatch(rb"-?\d+\.\d+|-?\d+(\.\d+)?e[+-]\d+", out), (value, out)
        assert not fastjson._plain_output(out)
        assert not fastjson._plain_output(orjson.dumps({"k": [value]}))
        for text in (out.decode(), repr(value), json.dumps(value)):
            assert same(fastjson.loads(text), value) and same(parsers.loads(text), value)


def test_orjson_reads_any_number_as_float_does() -> None:
    """What orjson is trusted with when reading: a number with a fraction or an exponent gives
    exactly `float(text)` (correctly rounded), up to 40 digits and every exponent; an
    overflow is refused, so the stdlib answers."""
    rng = random.Random(25)
    for _ in range(40000):
        whole = "".join(rng.choice("0123456789") for _ in range(rng.randint(1, 22)))
        text = ("-" if rng.random() < 0.5 else "") + (whole.lstrip("0") or "0")
        if rng.random() < 0.8:
            text += "." + "".join(rng.choice("0123456789") for _ in range(rng.randint(1, 18)))
        if rng.random() < 0.5:
            sign = rng.choice(["", "+", "-"])
            text += rng.choice("eE") + sign + str(rng.randint(0, 330))
        check_text(text)


SEPARATORS = st.sampled_from([(",", ":"), (", ", ": "), (" ,", " : "), (",\n", ":\t")])


@st.composite
def json_texts(draw: Any) -> str:
    """JSON texts as the stdlib, PostgreSQL (`jsonb`'s `", "` and `": "`) or a browser writes
    them, and some mangled: a character cut, doubled or swapped in."""
    value = draw(VALUES)
    text = json.dumps(
        value,
        separators=draw(SEPARATORS),
        ensure_ascii=draw(st.booleans()),
        indent=draw(st.sampled_from([None, None, 1])),
    )
    for _ in range(draw(st.integers(0, 2))):
        at = draw(st.integers(0, len(text)))
        how = draw(st.sampled_from(["cut", "double", "swap"]))
        if how == "cut":
            text = text[:at] + text[at + 1 :]
        elif how == "double":
            text = text[:at] + text[at : at + 1] * 2 + text[at + 1 :]
        else:
            text = text[:at] + draw(st.sampled_from(list('[]{},:"\\ -.e0159tfn\x00é'))) + text[at:]
    return text


@settings(max_examples=1500, suppress_health_check=[HealthCheck.too_slow])
@given(json_texts())
def test_reading_random_texts_is_the_stdlibs(text: str) -> None:
    check_text(text)


# --- random games ------------------------------------------------------------------------------

JUMPS = (0, 0, 1, 700, 2000, 3001, 31_000)


def random_game(kind: str, seed: int) -> list[Any]:
    """Every value a random game of `kind` puts in a frame or a column: each state snapshot,
    every seat's and the spectator's view of it, every event's data and its every view."""
    engine = engine_for(kind)
    rng = random.Random(seed)
    seats = rng.randint(engine.MIN_SEATS, min(engine.MAX_SEATS, 6))
    now = 1_800_000_000_000 + rng.randrange(10**6)
    state, events = engine.new_game(
        seats=seats, settings=engine.host_settings({}), seed=f"json-{seed}", now=now
    )
    out: list[Any] = []
    for _ in range(400):
        out.append(state.to_json())
        for viewer in [*range(seats), None]:
            out.append(engine.view(state, viewer, now))
            out.extend(engine.event_view(event, viewer) for event in events)
        out.extend(event.to_json() for event in events)
        if engine.is_over(state):
            break
        now += rng.choice(JUMPS)
        options = [(s, a) for s in range(seats) for a in engine.legal_actions(state, s, now)]
        deadlines = engine.pending_deadlines(state)
        if deadlines and (not options or rng.random() < 0.1):
            due = rng.choice(deadlines)
            now = max(now, due.at)
            state, events = engine.fire(state, due.key, now)
        elif options:
            seat, action = rng.choice(options)
            state, events = engine.apply(state, seat, action, now)
        else:
            state, events = engine.advance(state, now + 1000)
    return out


@pytest.mark.parametrize("kind", KINDS)
def test_random_games_write_and_read_as_the_stdlib(kind: str) -> None:
    fast = 0
    values = [v for seed in range(6) for v in random_game(kind, seed)]
    assert len(values) > 500
    for value in values:
        text = fastjson.compact(value)
        assert text == stdlib_compact(value)
        assert same(json.loads(fastjson.dumps_db(value)), json.loads(json.dumps(value)))
        for stored in (json.dumps(value), text):  # as jsonb gives it back; as a frame
            assert same(fastjson.loads(stored), json.loads(stored))
        out = orjson.dumps(value, default=fastjson._refuse, option=fastjson._OPTIONS)
        fast += fastjson._plain_output(out) and fastjson._plain_text(json.dumps(value))
    # The games' values are what orjson's path is for: (nearly) none goes to the stdlib.
    assert fast >= 0.99 * len(values)
