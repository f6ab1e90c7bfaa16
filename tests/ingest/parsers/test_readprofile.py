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
    # its shares add up to well under 100%: a cut listing, so no kernel total is made up
    assert len(result.warnings) == 1 and "partial listing" in result.warnings[0]


def test_opreport_kernel_ratios_use_vmlinux_rows_only():
    result = parse(read("opreport.txt"), {})
    names = ticks(result)
    assert names["libc-2.3.2.so:(no symbols)"] == 15012
    # The listing's shares add up to 68%: opreport prints no total, so a sum of the rows shown
    # would understate it. No ratios; derived: with the rest of the samples in one more row
    # (shares now 100%), the kernel ratios come from the vmlinux rows only.
    assert measured(result) == {}
    rest = "1000     31.9681  bash                     (no symbols)\n"
    complete = parse(read("opreport.txt") + rest, {})
    kernel = 52341 + 20113 + 6021
    busy = kernel - 52341
    assert measured(complete) == pytest.approx(
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
        (
            "  1834 schedule 1.1\n  1700 schedule 1.0\n",
            "listed twice in one listing with different ticks",
            2,
        ),
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


WETTER = "lkml-2001-07-12-tosatti-quoting-wetter-two-listings.txt"


def test_two_quoted_listings_in_one_mail_are_two_records():
    # LKML, Tosatti quoting Wetter 2001-07-12: two `readprofile | sort -nr | head -10`
    # listings, `> > > `-quoted, prose between them; mail headers around ("MIME-Version: 1.0").
    result = parse(read(WETTER), {})
    assert [(r.keys, r.line) for r in result.records] == [
        ({"listing": 1}, 30),
        ({"listing": 2}, 43),
    ]
    first, second = result.records
    assert ticks(first) == {
        "default_idle": 295348,
        "__rdtsc_delay": 300,
        "si_swapinfo": 215,
        "do_softirq": 138,
        "printk": 107,
        "do_wp_page": 28,
        "schedule": 17,
        "tcp_get_info": 10,
        "filemap_nopage": 10,
    }
    assert ticks(second)["__get_swap_page"] == 361961
    assert ticks(second)["__rdtsc_delay"] == 302  # the same symbol in two listings is fine
    assert measured(first)["kernel_ticks"] == 296497
    busy = 296497 - 295348
    assert measured(first)["kernel_busy_pct"] == pytest.approx(busy / 296497 * 100)
    assert measured(first)["scheduler_pct"] == pytest.approx(17 / busy * 100)
    assert measured(second)["kernel_ticks"] == 836552
    entry = next(e for e in second.profile if e.function == "default_idle")
    assert (entry.load, entry.share_pct) == (8822.25, pytest.approx(458757 / 836552 * 100))
    assert result.warnings == ()
    assert result.metadata == {"profiler": "readprofile"}


def test_a_line_naming_each_kernel_keys_the_listings_by_label():
    # Derived from the real Wetter listings: a line naming a kernel put before each (as in a
    # mail comparing two kernels).
    body = read(WETTER).splitlines()
    first, second = "\n".join(body[29:39]), "\n".join(body[42:52])
    text = f"2.4.6-ac2 profile:\n{first}\n\nand on 2.4.7-pre6:\n{second}\n"
    result = parse(text, {})
    assert [r.keys for r in result.records] == [{"label": "2.4.6-ac2"}, {"label": "2.4.7-pre6"}]
    assert [measured(r)["kernel_ticks"] for r in result.records] == [296497, 836552]


def test_the_same_label_twice_falls_back_to_listing_numbers():
    body = read(WETTER).splitlines()
    first, second = "\n".join(body[29:39]), "\n".join(body[42:52])
    text = f"2.4.6 before:\n{first}\n2.4.6 after:\n{second}\n"
    result = parse(text, {})
    assert [r.keys for r in result.records] == [
        {"listing": 1, "label": "2.4.6"},
        {"listing": 2, "label": "2.4.6"},
    ]


def test_a_command_line_naming_the_kernel_labels_a_single_listing():
    result = parse(read("readprofile-sort-nr.txt"), {})
    assert [r.keys for r in result.records] == [{"label": "2.4.18"}]


def test_listings_separated_only_by_blank_lines_cannot_be_told_apart():
    # Derived from the real Wetter listings with the prose between them removed.
    body = read(WETTER).splitlines()
    text = "\n".join(body[29:39]) + "\n\n" + "\n".join(body[42:52]) + "\n"
    with pytest.raises(ParseError, match="two listings with only blank lines") as error:
        parse(text, {})
    assert error.value.line is not None
