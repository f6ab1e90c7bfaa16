from pathlib import Path

import pytest

from ingest.parsers import get_parser
from ingest.parsers.base import ParseError

FIXTURES = Path(__file__).parents[2] / "fixtures" / "formats"


def read(tool: str, name: str) -> str:
    return (FIXTURES / tool / name).read_text()


def values(result) -> dict[str, float]:
    return {m.metric: m.value for m in result.measurements}


@pytest.mark.parametrize(
    ("parser", "tool", "name", "throughput", "latency", "clients"),
    [
        ("dbench", "dbench", "lkp-fixture-dbench-01.txt", 13563.9, 53.132, 128),
        ("dbench", "dbench", "dbench-1.x-glued.txt", 27.3983, None, 4),
        ("tbench", "tbench", "lkp-fixture-tbench-02.txt", 3789.19, 0.470, 32),
    ],
)
def test_result_line(parser, tool, name, throughput, latency, clients):
    result = get_parser(parser)(read(tool, name), {})
    found = values(result)
    assert found["throughput"] == pytest.approx(throughput)
    assert found.get("max_latency_ms") == (pytest.approx(latency) if latency else None)
    assert result.metadata["clients"] == clients


def test_units():
    result = get_parser("dbench")(read("dbench", "lkp-fixture-dbench-01.txt"), {})
    assert [(m.metric, m.unit, m.better) for m in result.measurements] == [
        ("throughput", "MB/s", "higher"),
        ("max_latency_ms", "ms", "lower"),
    ]
    assert result.metadata["version"] == "4.00"


def test_progress_lines_become_samples():
    result = get_parser("dbench")(read("dbench", "lkp-fixture-dbench-01.txt"), {})
    rates = [s for s in result.samples if s.column == "mb_per_s"]
    assert len(rates) == 5  # the execute lines only, warmup excluded
    assert rates[0].value == pytest.approx(13565.79)
    assert rates[-1].timestamp == "599 sec"


def test_tbench_iterations_are_averaged_with_a_warning():
    # the fixture runs tbench twice; terminal garbage is glued to a progress line
    result = get_parser("tbench")(read("tbench", "lkp-fixture-tbench-01.txt"), {})
    assert values(result)["throughput"] == pytest.approx((23775.4 + 20853) / 2)
    assert values(result)["max_latency_ms"] == pytest.approx(8.632)
    assert result.metadata["iterations"] == 2
    assert "lines 68, 132" in result.warnings[0]


def test_dbench1_nb_figure_is_metadata():
    result = get_parser("dbench")(read("dbench", "dbench-1.x-glued.txt"), {})
    assert result.metadata["nb_mb_per_s"] == pytest.approx(34.2479)


@pytest.mark.parametrize(("clients", "expected"), [(4, 27.3983), (16, 31.0412)])
def test_client_option_picks_a_run(clients, expected):
    text = read("dbench", "dbench-two-client-counts.txt")
    result = get_parser("dbench")(text, {"clients": clients})
    assert values(result)["throughput"] == pytest.approx(expected)


@pytest.mark.parametrize(
    ("text", "fragment", "line"),
    [
        (None, "client counts [4, 16] (lines 2, 4)", None),
        ("Throughput 27,3983 MB/sec  4 procs\n", "decimal comma", 1),
        ("...........+++\n", "no 'Throughput N MB/sec' line", None),
    ],
)
def test_rejects(text, fragment, line):
    text = text or read("dbench", "dbench-two-client-counts.txt")
    with pytest.raises(ParseError) as err:
        get_parser("dbench")(text, {})
    assert fragment in err.value.message
    assert err.value.line == line
