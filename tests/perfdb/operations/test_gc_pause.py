"""perfdb/operations/gc_pause.py: the cycle collector is paused around a parse or a check, and
always comes back as it was."""

from __future__ import annotations

import gc

import pytest

from ingest.parsers import ParseError
from perfdb.operations.gc_pause import collector_paused


def test_the_collector_is_off_inside_and_back_on_after():
    assert gc.isenabled()
    with collector_paused():
        assert not gc.isenabled()
    assert gc.isenabled()


def test_a_parse_error_still_turns_the_collector_back_on():
    with pytest.raises(ParseError), collector_paused():
        raise ParseError("bad line", 3)
    assert gc.isenabled()


def test_a_collector_already_off_is_left_off():
    gc.disable()
    try:
        with collector_paused():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_a_cached_computation_and_its_reads_run_with_the_collector_paused():
    """A scope chart computed from ~100 cached pieces unpickles ~100,000 tuples that stay
    alive until it is drawn: collections walking them were half of its CPU."""
    from perfdb import cache as page_cache

    seen = []
    value = page_cache.cached("gc-pause-test", lambda: seen.append(gc.isenabled()) or 1)
    assert value == 1 and seen == [False]
    assert gc.isenabled()
