"""kernbench output read by the `time` parser (ingest/parsers/gnutime.py), real mail samples."""

from pathlib import Path

from ingest.parsers import get_parser

FIXTURES = Path(__file__).parents[2] / "fixtures" / "formats" / "kernbench"
parse = get_parser("time")


def read(name: str) -> str:
    return (FIXTURES / name).read_text()


def block(result, jobs: int) -> dict[str, float]:
    (record,) = [r for r in result.records if r.keys.get("jobs") == jobs]
    return {m.metric: m.value for m in record.measurements}


def test_optimal_load_block_with_exponent_counts():
    values = block(parse(read("linux-mm-sorted-buddy-vanilla.txt"), {}), 32)
    assert values["elapsed_s"] == 650.742
    assert values["user_s"] == 8213.08
    assert values["system_s"] == 1273.91
    assert values["cpu_pct"] == 1457.4
    assert values["context_switches"] == 2250203
    assert values["sleeps"] == 1878100  # printed as 1.8781e+06


def test_half_and_optimal_blocks():
    result = parse(read("linux-mm-flush-tlb-one.txt"), {})
    optimal = block(result, 4)
    assert optimal["elapsed_s"] == 27.4267
    assert optimal["cpu_pct"] == 286.333
    assert optimal["sleeps"] == 15764.7
    half = block(result, 2)
    assert half["elapsed_s"] == 50.3233
    assert half["context_switches"] == 7350.33
