from pathlib import Path

import pytest

from ingest.parsers import get_parser
from ingest.parsers.base import ParseError

FIXTURES = Path(__file__).parents[2] / "fixtures" / "formats" / "cyclictest"
parse = get_parser("cyclictest")


def read(name: str) -> str:
    return (FIXTURES / name).read_text()


def by_thread(result) -> dict[int, dict[str, float]]:
    return {r.keys["thread"]: {m.metric: m.value for m in r.measurements} for r in result.records}


def test_quiet_summary_lines():
    threads = by_thread(parse(read("cyclictest-2.4-q.txt"), {}))
    assert threads[0] == {
        "cycles": 1000,
        "min_latency_us": 48,
        "act_latency_us": 66,
        "avg_latency_us": 76,
        "max_latency_us": 2732,
    }
    assert threads[1]["cycles"] == 676 and threads[1]["max_latency_us"] == 2665


def test_live_output_keeps_each_threads_last_line():
    result = parse(read("cyclictest-2.4-live.txt"), {})
    threads = by_thread(result)
    assert threads[0]["cycles"] == 1000 and threads[0]["max_latency_us"] == 5299
    assert threads[1]["cycles"] == 690 and threads[1]["act_latency_us"] == 88
    assert [r.line for r in result.records] == [420, 421]
    assert "superseded" in result.warnings[0]


def test_histogram_per_thread():
    result = parse(read("cyclictest-2.4-q-h50.txt"), {})
    threads = by_thread(result)
    assert threads[0]["hist_overflows"] == 931 and threads[1]["hist_overflows"] == 997
    assert threads[0]["hist_max_latency_us"] == 4700 and threads[1]["hist_min_latency_us"] == 23
    assert threads[1]["hist_total"] == 3
    hist = dict(result.records[1].histograms[0].bins)
    assert len(hist) == 50 and hist[23] == 1 and hist[33] == 1 and hist[36] == 1 and hist[0] == 0
    assert sum(dict(result.records[0].histograms[0].bins).values()) == 0


@pytest.mark.parametrize(
    ("change", "fragment", "line"),
    [
        # derived from the real -q output
        (lambda t: t.replace("Max:    2732", "Max:    27,32"), "decimal comma", 2),
        (lambda t: t.replace("Min:     48", "Min:"), "unreadable cyclictest thread line", 2),
        (lambda t: t.replace("Avg:   76", "Avg:   7.6.1"), "not a number", 2),
        (lambda t: t.replace("C:   1000", "C:      0"), "ran no cycles", 2),
        (lambda t: "# /dev/cpu_dma_latency set to 0us\n", "no cyclictest", None),
    ],
)
def test_rejects(change, fragment, line):
    with pytest.raises(ParseError) as err:
        parse(change(read("cyclictest-2.4-q.txt")), {})
    assert fragment in err.value.message
    assert err.value.line == line


def test_rejects_footer_with_wrong_thread_count():
    text = read("cyclictest-2.4-q-h50.txt").replace(
        "# Max Latencies: 04700 03633", "# Max Latencies: 04700"
    )
    with pytest.raises(ParseError, match="'# Max Latencies' has 1 values for 2 threads") as err:
        parse(text, {})
    assert err.value.line == 56
