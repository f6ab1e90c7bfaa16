import pytest

from ingest.parsers.base import ParseError
from ingest.parsers.numbers import parse_number, parse_optional


@pytest.mark.parametrize(
    ("token", "kwargs", "expected"),
    [
        ("42", {}, 42.0),
        ("-3.5", {}, -3.5),
        ("115.", {}, 115.0),
        ("13.K", {"suffixes": True}, 13000.0),
        ("10.2K", {"suffixes": True}, 10200.0),
        ("3.1M", {"suffixes": True}, 3100000.0),
        ("1.0E7", {}, 1.0e7),
        ("1,987,024", {"thousands": True}, 1987024.0),
        ("95%", {"percent": True}, 95.0),
    ],
)
def test_accepts_the_grammar(token, kwargs, expected):
    assert parse_number(token, **kwargs) == pytest.approx(expected)


@pytest.mark.parametrize(
    ("token", "kwargs", "message"),
    [
        ("1,234", {}, "decimal comma"),
        ("NaN", {}, "not a number"),
        ("inf", {}, "not a number"),
        ("13.K", {}, "not a number"),
        ("1,987,024", {}, "not a number"),
        ("12abc", {}, "not a number"),
    ],
)
def test_rejects_with_line(token, kwargs, message):
    with pytest.raises(ParseError) as err:
        parse_number(token, line=7, what="throughput", **kwargs)
    assert message in str(err.value)
    assert err.value.line == 7
    assert "throughput" in str(err.value)


def test_missing_cells_are_none():
    assert parse_optional("....") is None
    assert parse_optional("") is None
    assert parse_optional("2.5") == 2.5


@pytest.mark.parametrize(("token", "expected"), [("4.06M", 4060000.0), ("2.01M", 2010000.0)])
def test_suffixed_values_are_exact(token, expected):
    assert parse_number(token, suffixes=True) == expected
