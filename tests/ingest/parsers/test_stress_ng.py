from pathlib import Path

import pytest

from ingest.parsers import get_parser
from ingest.parsers.base import ParseError, group_records

FIXTURES = Path(__file__).parents[2] / "fixtures" / "formats" / "stress-ng"
parse = get_parser("stress-ng")


def read(name: str) -> str:
    return (FIXTURES / name).read_text()


def by_stressor(result) -> dict[str, dict[str, float]]:
    return {r.keys["stressor"]: {m.metric: m.value for m in r.measurements} for r in result.records}


def test_metrics_brief_with_metrc_prefix():
    assert by_stressor(parse(read("stress-ng-0.15.06-cpu-metrics-brief.txt"), {}))["cpu"] == {
        "bogo_ops": 3176,
        "real_time_s": 2.00,
        "usr_time_s": 1.88,
        "sys_time_s": 0.00,
        "bogo_ops_per_s_real": 1587.48,
        "bogo_ops_per_s_usr_sys": 1685.29,
    }


def test_metrics_with_cpu_and_rss_columns():
    found = by_stressor(parse(read("stress-ng-0.15.06-cpu-vm-metrics.txt"), {}))
    assert found["vm"]["bogo_ops"] == 76851 and found["vm"]["rss_max_kb"] == 20624
    assert found["cpu"]["cpu_used_per_instance_pct"] == 47.22
    assert found["vm"]["bogo_ops_per_s_usr_sys"] == 83104.89


def test_yaml_report():
    result = parse(read("stress-ng-0.15.06-cpu.yaml"), {})
    assert by_stressor(result)["cpu"] == {
        "bogo_ops": 2715,
        "real_time_s": 2.003998,
        "usr_time_s": 1.635297,
        "sys_time_s": 0.003967,
        "bogo_ops_per_s_real": 1354.791905,
        "bogo_ops_per_s_usr_sys": 1656.231089,
        "cpu_used_per_instance_pct": 81.799690,
        "rss_max_kb": 6476,
    }
    assert result.metadata["stress_ng_version"] == "0.15.06"
    assert result.records[0].line == 28


def test_quoted_mail_with_two_tables_gives_two_trials():
    result = parse(read("lkml-2023-06-22-zheng-ramfs-metrics-brief-excerpt.txt"), {})
    (group,) = group_records(result.records)
    first, second = ({m.metric: m.value for m in r.measurements} for _, r in group.trials)
    assert first["bogo_ops"] == 880623 and first["bogo_ops_per_s_usr_sys"] == 3753.09
    assert second["bogo_ops"] == 847562 and second["sys_time_s"] == 230.22


def test_mail_wrapped_row_is_joined():
    # derived from the real output: the row wrapped after 'usr time' as a mail client would
    text = read("stress-ng-0.15.06-cpu-vm-metrics.txt").replace(
        "0.94      0.00       827.33", "0.94\n 0.00       827.33"
    )
    assert by_stressor(parse(text, {}))["cpu"]["sys_time_s"] == 0.00


@pytest.mark.parametrize(
    ("change", "fragment", "line"),
    [
        (lambda t: t.replace("       1685.29", ""), "row 'cpu' has 5 values; the header has 6", 5),
        (lambda t: t.replace("1587.48", "1587,48"), "decimal comma", 5),
        (
            lambda t: t.replace("stressor       bogo ops", "stressor  ops"),
            "no stress-ng metrics",
            None,
        ),
    ],
)
def test_rejects(change, fragment, line):
    with pytest.raises(ParseError) as err:
        parse(change(read("stress-ng-0.15.06-cpu-metrics-brief.txt")), {})
    assert fragment in err.value.message
    assert err.value.line == line
