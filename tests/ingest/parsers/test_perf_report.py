"""perf report --stdio: values read by hand from tests/fixtures/formats/perf-report."""

from pathlib import Path

import pytest

from ingest.parsers import get_parser
from ingest.parsers.base import ParseError
from ingest.parsers.perf_report import MODERN_IDLE_FUNCTIONS, MODERN_SCHEDULER_FUNCTIONS

FIXTURES = Path(__file__).parents[2] / "fixtures" / "formats" / "perf-report"
parse = get_parser("perf-report")


def read(name: str) -> str:
    return (FIXTURES / name).read_text()


def record(result, **keys):
    return next(r for r in result.records if all(r.keys.get(k) == v for k, v in keys.items()))


def test_symbol_sort_with_samples_is_one_profile():
    result = parse(read("report-symbol-n.txt"), {})
    (only,) = result.records
    assert only.keys == {"event": "cpu-clock:ppp"}
    entries = {p.function: p for p in only.profile}
    assert entries["_raw_spin_unlock_irqrestore"].ticks == 1254
    assert entries["_raw_spin_unlock_irqrestore"].share_pct == 6.06
    assert entries["finish_task_switch.isra.0"].ticks == 1204
    assert entries["__schedule"].ticks == 240
    assert entries["__vdso_clock_gettime"].ticks == 296
    assert result.metadata == {"event_count cpu-clock:ppp": 5171250000}


def test_scheduler_share_sums_the_printed_shares():
    result = parse(read("report-symbol-n.txt"), {})
    values = {m.metric: m.value for m in result.measurements}
    # finish_task_switch.isra.0 5.82 + __schedule 1.16 (the only scheduler functions listed)
    assert values["scheduler_share_pct"] == 6.98
    assert values["idle_share_pct"] == 0.0


def test_children_listing_uses_self_samples_and_warns():
    result = parse(read("report-children-n-limit2.txt"), {})
    kernel = record(result, command="hackbench", shared_object="[kernel.kallsyms]")
    assert kernel.keys["event"] == "cpu-clock:ppp"
    entries = {p.function: p for p in kernel.profile}
    assert (entries["do_syscall_64"].ticks, entries["do_syscall_64"].share_pct) == (566, 2.74)
    assert entries["vfs_read"].ticks == 168
    libc = record(result, command="hackbench", shared_object="libc.so.6")
    assert {p.function: p.ticks for p in libc.profile}["read"] == 189
    assert any("Children shares" in w for w in result.warnings)


def test_two_events_are_separate_records():
    result = parse(read("report-two-events-limit1.txt"), {})
    cpu = record(result, event="cpu-clock", command="hackbench", shared_object="[kernel.kallsyms]")
    task = record(
        result, event="task-clock", command="hackbench", shared_object="[kernel.kallsyms]"
    )
    assert {p.function: p.ticks for p in cpu.profile}["_copy_to_iter"] == 417
    assert {p.function: p.ticks for p in task.profile}["_raw_spin_unlock_irqrestore"] == 396
    fio = record(result, event="cpu-clock", command="fio")
    assert {p.function: p.share_pct for p in fio.profile}["iowrite16"] == 3.47
    assert result.metadata["event_count task-clock"] == 2757250000


@pytest.mark.parametrize(
    ("name", "line"),
    [("report-no-samples.txt", 9), ("report-g.txt", 9), ("linux-mm-autonuma-probe-g.txt", 6)],
)
def test_percentages_alone_are_not_made_into_ticks(name, line):
    with pytest.raises(ParseError, match="without a Samples column") as err:
        parse(read(name), {})
    assert err.value.line == line
    # The advice is the profile (-n), never rows mode, whose runs would be one per symbol.
    assert "perf report -n --stdio" in err.value.message
    assert "rows" not in err.value.message


def test_rows_mode_reads_percentages_of_an_old_mail_with_call_graph():
    result = parse(read("linux-mm-autonuma-probe-g.txt"), {"rows": True})
    assert len(result.records) == 4  # call-graph lines are not rows
    ntpd = record(result, command="ntpd")
    assert ntpd.keys == {
        "event": "probe:numa_hinting_fault",
        "command": "ntpd",
        "shared_object": "[kernel.kallsyms]",
        "symbol": "numa_hinting_fault",
    }
    assert [(m.metric, m.value) for m in ntpd.measurements] == [("overhead_pct", 21.45)]
    assert result.metadata == {"event_count probe:numa_hinting_fault": 345}


def test_rows_mode_keeps_children_and_self():
    result = parse(read("report-g.txt"), {"rows": True})
    fault = record(result, symbol="asm_exc_page_fault")
    assert {m.metric: m.value for m in fault.measurements} == {
        "children_pct": 33.33,
        "self_pct": 0.0,
    }


def test_modern_function_sets_name_todays_scheduler_and_idle():
    assert {"__schedule", "pick_next_task_fair", "finish_task_switch"} <= set(
        MODERN_SCHEDULER_FUNCTIONS
    )
    assert {"pv_native_safe_halt", "intel_idle", "acpi_idle_enter"} <= set(MODERN_IDLE_FUNCTIONS)


def test_rejects_a_row_before_the_header():
    # derived from report-symbol-n.txt: the header comment block cut off
    text = "\n".join(read("report-symbol-n.txt").split("\n")[11:])
    with pytest.raises(ParseError, match="before any '# Overhead") as err:
        parse(text, {})
    assert err.value.line == 1


def test_rejects_a_corrupted_sample_count():
    # derived from report-symbol-n.txt: 1254 samples corrupted to 1,25
    text = read("report-symbol-n.txt").replace("          1254  [k]", "          1,25  [k]")
    with pytest.raises(ParseError) as err:
        parse(text, {})
    assert err.value.line == 12


def test_rejects_a_row_missing_a_column():
    # derived from report-two-events-limit1.txt: the Command cell of the first row blanked
    lines = read("report-two-events-limit1.txt").split("\n")
    lines[11] = lines[11].replace("hackbench", "         ", 1)
    with pytest.raises(ParseError, match="1 values for the columns") as err:
        parse("\n".join(lines), {})
    assert err.value.line == 12
