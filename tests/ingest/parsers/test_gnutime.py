"""time: every timing in a file is a record; repeats are trials, never averaged.

Expected values are read by hand from the fixtures (see time/SOURCES.md).
"""

from pathlib import Path

import pytest

from ingest.parsers import get_parser
from ingest.parsers.base import ParseError, group_records

FIXTURES = Path(__file__).parents[2] / "fixtures" / "formats" / "time"
parse = get_parser("time")


def read(name: str) -> str:
    return (FIXTURES / name).read_text()


def values(record) -> dict[str, float]:
    return {m.metric: m.value for m in record.measurements}


def elapsed(records) -> list[float]:
    return [values(r)["elapsed_s"] for r in records]


def test_bash_time_repeated_command_gives_trials():
    # two `time make` (real\t0m0.207s) and one `time -p` (real 0.20) of the same command
    result = parse(read("debian-bash-5.2-time-make.txt"), {})
    (group,) = group_records(result.records)
    assert dict(group.keys) == {"command": "make -C /tmp/fx/mk"}
    assert [n for n, _ in group.trials] == [1, 2, 3]
    assert [values(r) for r in result.records] == [
        {"elapsed_s": 0.207, "user_s": 0.003, "system_s": 0.001},
        {"elapsed_s": 0.21, "user_s": 0.003, "system_s": 0.002},
        {"elapsed_s": 0.2, "user_s": 0.0, "system_s": 0.0},
    ]
    assert [r.line for r in result.records] == [6, 14, 21]


def test_gnu_time_verbose_and_default_with_a_failed_command():
    text = read("debian-gnu-time-1.9-v-make-false.txt")
    with pytest.raises(ParseError) as err:
        parse(text, {})
    assert err.value.line == 38
    assert "non-zero status 1" in err.value.message
    result = parse(text, {"allow_failed": True})
    assert [r.keys.get("command") for r in result.records] == [
        "true",
        "make -C /tmp/fx/mk",
        "make -C /tmp/fx/mk",
        "false",
    ]
    assert values(result.records[0]) == {
        "elapsed_s": 0.0,
        "user_s": 0.0,
        "system_s": 0.0,
        "cpu_pct": 0,
        "max_rss_kb": 1076,
        "major_faults": 0,
        "minor_faults": 72,
        # every other -v field, as printed (the rusage averages are 0: omitted, warned)
        "voluntary_context_switches": 1,
        "involuntary_context_switches": 0,
        "swaps": 0,
        "fs_inputs": 0,
        "fs_outputs": 0,
        "socket_msgs_sent": 0,
        "socket_msgs_received": 0,
        "signals_delivered": 0,
        "page_size_bytes": 4096,
    }
    assert values(result.records[1]) == {
        "elapsed_s": 0.21,
        "user_s": 0.0,
        "system_s": 0.0,
        "cpu_pct": 2,
        "max_rss_kb": 2276,
        "major_faults": 1,
        "minor_faults": 313,
    }
    assert values(result.records[2])["max_rss_kb"] == 2272
    assert values(result.records[3])["minor_faults"] == 74
    assert result.metadata["exit_status"] == 1
    assert "line 38: command exited with non-zero status 1 (kept: allow_failed)" in result.warnings


def test_kernbench_blocks_per_kernel_label():
    result = parse(read("linux-mm-bhat-kernbench-two-kernels.txt"), {})
    assert [dict(r.keys) for r in result.records] == [
        {"label": "3.7.0-rc3-vanilla-default", "load": "Optimal", "jobs": 32},
        {"label": "3.7.0-rc3-sorted-buddy-default", "load": "Optimal", "jobs": 32},
    ]
    first, second = (values(r) for r in result.records)
    assert first["elapsed_s"] == 650.742 and first["elapsed_s_stddev"] == 2.49774
    assert first["sleeps"] == 1878100  # "Sleeps 1.8781e+06 (5310.33)"
    assert second["context_switches"] == 2149600  # "Context Switches 2.1496e+06"
    assert second["cpu_pct"] == 1448.6
    assert [r.line for r in result.records] == [70, 82]
    assert not result.warnings


def test_kernbench_jobs_option_filters_blocks():
    # two real lkp kernbench logs one after the other: -j 8 (5 runs) and -j 144 (one run)
    text = read("lkp-fixture-kernbench-01.txt") + read("lkp-fixture-kernbench-02.txt")
    result = parse(text, {})
    assert [r.keys["jobs"] for r in result.records] == [8, 144]
    assert elapsed(result.records) == [28.094, 7.77]
    assert elapsed(parse(text, {"jobs": 144}).records) == [7.77]
    with pytest.raises(ParseError, match="no kernbench block with -j 4"):
        parse(text, {"jobs": 4})


def test_tcsh_timings_keyed_by_the_timed_command():
    result = parse(read("lkml-love-time-dbench-tcsh.txt"), {})
    assert [r.keys for r in result.records] == [
        {"command": f"./dbench {n}"} for n in (16, 40, 48, 16, 48)
    ]
    assert elapsed(result.records) == [73.1, 215.09, 259.19, 69.44, 278.3]
    assert values(result.records[1]) == {
        "elapsed_s": 215.09,
        "user_s": 18.69,
        "system_s": 77.98,
        "cpu_pct": 44.9,
    }
    assert "no kernel label" in result.warnings[-1]


def test_zero_rss_and_question_mark_cpu_are_omitted_with_warnings():
    result = parse(read("gnu-default-2.4.txt"), {})
    assert result.warnings == (
        "line 1: maximum resident set size is 0 (kernels before 2.6.32 do not report it); "
        "max_rss_kb omitted",
    )
    result = parse(read("gnu-default-zero-elapsed.txt"), {})
    assert "cpu_pct" not in values(result.records[0])
    assert "CPU percentage is '?'" in result.warnings[0]


@pytest.mark.parametrize(
    ("name", "change", "fragment", "line"),
    [
        (
            "debian-bash-5.2-time-make.txt",
            ("0m0.207s", "0m0,207s"),
            "decimal comma (localized output); re-run with LC_ALL=C",
            6,
        ),
        ("debian-bash-5.2-time-make.txt", ("0m0.210s", "0mNaNs"), "not a number", 14),
        (
            "debian-bash-5.2-time-make.txt",
            ("real\t0m0.207s\n", ""),
            "a timing without an elapsed",
            6,
        ),
        ("debian-gnu-time-1.9-v-make-false.txt", ("0:00.00\n", "1:2:3:4\n"), "is not [h:]m:ss", 6),
    ],
)
def test_rejects_broken_variants(name, change, fragment, line):
    # Each variant is derived from a real file by corrupting or deleting one value.
    text = read(name).replace(*change, 1)
    with pytest.raises(ParseError) as err:
        parse(text, {"allow_failed": True})
    assert fragment in err.value.message
    assert err.value.line == line


def test_no_timing_at_all():
    with pytest.raises(ParseError, match="no elapsed time found"):
        parse("make: *** [all] Error 2\n", {})


def test_bare_uname_label_kernbench_blocks_and_bash_minutes_over_the_hour():
    # Three kernbench sections, each under the bare label line "2.6.23-rc2-mm2-mem-v6", run
    # simultaneously: one "within the container of 800 MB", two "within the default
    # container" (the titles over dashed rules): those two are trials, the first another run.
    # The two ebizzy timings below come after the prose "ebizzy on top of rc2-mm2 (without
    # mem-controller) gave this": neither the label nor the last kernbench block reaches them.
    result = parse(read("linux-mm-balbir-kernbench-containers-ebizzy.txt"), {})
    found = {
        (
            g.keys.get("label"),
            g.keys.get("load"),
            g.keys.get("jobs"),
            str(g.keys.get("heading", "")).rsplit(" ", 2)[-2:][0],
        ): elapsed(r for _, r in g.trials)
        for g in group_records(result.records)
    }
    assert found == {
        ("2.6.23-rc2-mm2-mem-v6", "Half", 4, "800"): [466.548],
        ("2.6.23-rc2-mm2-mem-v6", "Optimal", 32, "800"): [423.496],
        ("2.6.23-rc2-mm2-mem-v6", "Half", 4, "default"): [424.17, 465.038],
        ("2.6.23-rc2-mm2-mem-v6", "Optimal", 32, "default"): [407.092, 426.25],
        (None, None, None, "Ebizzy"): [354.362, 375.561],  # real 5m54.362s, real 6m15.561s
    }
    ebizzy = [values(r) for r in result.records[-2:]]
    assert ebizzy[0] == {"elapsed_s": 354.362, "user_s": 2029.707, "system_s": 251.1}
    assert ebizzy[1]["user_s"] == 2162.203  # user    36m2.203s
    assert values(result.records[1])["context_switches_stddev"] == 123397


def test_gnu_time_verbose_runs_read_every_field_keyed_by_command():
    result = parse(read("talapas-bbmap-time-v-two-runs.txt"), {})
    assert [r.keys["command"] for r in result.records] == [
        "stats.sh in=DanioLongProtein2.fa out=Zfish_LP_stats.txt",
        "stats.sh in=HumanLongProtein2.fa out=Human_LP_stats.txt",
    ]
    second = values(result.records[1])
    assert second["elapsed_s"] == 0.51
    assert second["max_rss_kb"] == 45216
    assert second["voluntary_context_switches"] == 112
    assert second["involuntary_context_switches"] == 22
    assert second["fs_outputs"] == 64
    assert second["page_size_bytes"] == 4096
    assert "avg_rss_kb" not in second  # Linux prints 0: omitted with one warning per run
    assert len(result.warnings) == 2 and "never fills" in result.warnings[1]


def test_gnu_time_verbose_fields_wrapped_by_a_mail_client_are_joined():
    # the real two-run log, as a mail client breaks the Elapsed label after "time"
    text = read("talapas-bbmap-time-v-two-runs.txt").replace(
        "Elapsed (wall clock) time (h:mm:ss",
        "Elapsed (wall clock) time\n> (h:mm:ss",
    )
    result = parse(text, {})
    assert elapsed(result.records) == [0.69, 0.51]
    assert [r.line for r in result.records] == [3, 30]


def test_gnu_time_verbose_reflowed_fields_are_refused_at_their_line():
    text = read("lkml-2003-08-27-chubb-quoting-fedyk-time-v-reflowed.txt")
    with pytest.raises(ParseError) as err:
        parse(text, {})
    assert err.value.line == 1 and "non-zero status 100" in err.value.message
    with pytest.raises(ParseError) as err:
        parse(text, {"allow_failed": True})
    assert err.value.line == 2 and "one 'Label: value' field per line" in err.value.message


def test_a_file_without_a_timing_is_refused_at_its_first_line():
    with pytest.raises(ParseError) as err:
        parse("\n\nmake: Nothing to be done for 'all'.\n", {})
    assert err.value.line == 3
