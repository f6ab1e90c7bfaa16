from pathlib import Path

import pytest

from ingest.parsers import ParseError, get_parser

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "formats" / "readprofile"
parse = get_parser("readprofile")


def read(name: str) -> str:
    return (FIXTURES / name).read_text()


def measured(result) -> dict[str, float]:
    return {m.metric: m.value for m in result.measurements}


def ticks(result) -> dict[str, float]:
    return {e.function: e.ticks for e in result.profile}


# The hand-written 2.4 profile, as (function, ticks): the test's own copy of the numbers.
PROFILE_24 = {
    "default_idle": 112,
    "__switch_to": 9,
    "schedule": 1834,
    "goodness": 412,
    "reschedule_idle": 97,
    "__wake_up": 133,
    "sys_sched_yield": 41,
    "do_page_fault": 388,
    "csum_partial_copy_generic": 210,
    ".text.lock.namei": 64,
}
SCHED_24 = ("schedule", "goodness", "reschedule_idle", "__wake_up", "sys_sched_yield")


def test_unsorted_profile_with_total_last():
    result = parse(read("readprofile-2.4-unsorted.txt"), {})
    assert ticks(result) == PROFILE_24
    busy = 3300 - PROFILE_24["default_idle"]
    sched = sum(PROFILE_24[name] for name in SCHED_24)
    assert measured(result) == pytest.approx(
        {
            "kernel_ticks": 3300,
            "kernel_busy_pct": busy / 3300 * 100,
            "scheduler_pct": sched / busy * 100,
        }
    )
    entry = next(e for e in result.profile if e.function == "goodness")
    assert entry.load == pytest.approx(3.6786)
    assert entry.share_pct == pytest.approx(412 / 3300 * 100)
    assert result.metadata == {"profiler": "readprofile", "total_load": 0.0027}
    assert result.warnings == ()


@pytest.mark.parametrize(
    "name", ["readprofile-sort-nr.txt", "readprofile-v.txt", "readprofile-quoted-mail.txt"]
)
def test_total_position_and_columns_do_not_matter(name):
    result = parse(read(name), {})
    assert measured(result)["kernel_ticks"] == 3300
    for function, count in ticks(result).items():
        assert count == PROFILE_24[function]
    share = {e.function: e.share_pct for e in result.profile}
    assert share["schedule"] == pytest.approx(1834 / 3300 * 100)


def test_v_listing_keeps_dotted_symbols():
    assert ".text.lock.namei" in ticks(parse(read("readprofile-v.txt"), {}))


def test_repeated_listing_in_mail_is_counted_once():
    result = parse(read("readprofile-quoted-mail.txt"), {})
    assert len(result.profile) == 3
    assert any("repeats" in w for w in result.warnings)


def test_a_partial_listing_keeps_ticks_but_derives_nothing():
    result = parse(read("readprofile-no-total.txt"), {})
    assert result.measurements == ()  # no invented kernel/scheduler shares
    assert sorted(p.ticks for p in result.profile) == [112, 412, 1834]
    assert all(p.share_pct is None for p in result.profile)
    assert any("no 'total' row" in w for w in result.warnings)


def test_scheduler_functions_option():
    result = parse(read("readprofile-2.4-unsorted.txt"), {"scheduler_functions": "goodness"})
    busy = 3300 - 112
    assert measured(result)["scheduler_pct"] == pytest.approx(412 / busy * 100)


def test_idle_functions_option():
    result = parse(
        read("readprofile-2.4-unsorted.txt"), {"idle_functions": ["default_idle", "__switch_to"]}
    )
    assert measured(result)["kernel_busy_pct"] == pytest.approx((3300 - 121) / 3300 * 100)


def test_kerneltop():
    result = parse(read("kerneltop-2.5.txt"), {})
    assert result.metadata["profiler"] == "kerneltop"
    assert ticks(result)["try_to_wake_up"] == 615
    busy = 6120 - 1904
    assert measured(result)["scheduler_pct"] == pytest.approx((2412 + 615) / busy * 100)
    assert get_parser("kerneltop") is parse


def test_op_time_listing_uses_printed_share():
    result = get_parser("oprofile")(read("oprofile-op-time-l.txt"), {})
    assert result.metadata["profiler"] == "oprofile"
    entry = next(e for e in result.profile if e.function == "schedule")
    assert (entry.ticks, entry.share_pct, entry.load) == (20113, pytest.approx(15.8332), None)
    assert result.warnings == ()


def test_opreport_kernel_ratios_use_vmlinux_rows_only():
    result = parse(read("opreport.txt"), {})
    names = ticks(result)
    assert names["libc-2.3.2.so:(no symbols)"] == 15012
    kernel = 52341 + 20113 + 6021
    busy = kernel - 52341
    assert measured(result) == pytest.approx(
        {"kernel_ticks": kernel, "kernel_busy_pct": busy / kernel * 100, "scheduler_pct": 100.0}
    )


def test_units_and_directions():
    result = parse(read("readprofile-2.4-unsorted.txt"), {})
    assert {(m.metric, m.unit, m.better) for m in result.measurements} == {
        ("kernel_ticks", "ticks", "none"),
        ("kernel_busy_pct", "%", "none"),
        ("scheduler_pct", "%", "lower"),
    }


@pytest.mark.parametrize(
    ("text", "fragment", "line"),
    [
        ("  1834 schedule 1,1466\n  3300 total 0.0027\n", "decimal comma", 1),
        ("  1834 schedule NaN\n", "is not a number", 1),
        ("  1834 schedule 1.1\n  1700 schedule 1.0\n", "listed twice with different ticks", 2),
        (
            "  1834 schedule 1.1\n  3300 total 0.1\n  3400 total 0.1\n",
            "several different 'total'",
            3,
        ),
    ],
)
def test_broken(text, fragment, line):
    with pytest.raises(ParseError, match=fragment) as error:
        parse(text, {})
    assert error.value.line == line


@pytest.mark.parametrize("text", ["", "no profile here\n", "  3300 total 0.0027\n"])
def test_nothing_to_read(text):
    with pytest.raises(ParseError, match="no readprofile profile rows"):
        parse(text, {})


def test_unreadable_numeric_row_is_skipped_with_warning():
    result = parse("  1834 schedule 1.1 extra words\n   412 goodness 3.6\n", {})
    assert ticks(result) == {"goodness": 412}
    assert any(w.startswith("line 1:") for w in result.warnings)
