"""The manifests in docs/parsers/ work as written on the real files they name.

Each parser page ends with a real example and a format-2 manifest mapping it to runs; a user
copies that manifest, so it must validate and plan one run per record group of that file.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from ingest.manifest import parse_manifest
from ingest.parsers import get_parser, parser_names
from ingest.parsers.base import group_records
from ingest.plan import file_key, plan_runs

ROOT = Path(__file__).resolve().parents[2]
BLOCK = re.compile(r"```toml\n# file: (?P<file>\S+)\n(?P<body>.*?)```", re.DOTALL)


def _examples() -> list[tuple[str, str, str]]:
    found = []
    for doc in sorted((ROOT / "docs" / "parsers").glob("*.md")):
        for match in BLOCK.finditer(doc.read_text()):
            found.append((doc.name, match["file"], match["body"]))
    return found


EXAMPLES = _examples()


@pytest.mark.parametrize(("doc", "fixture", "toml"), EXAMPLES, ids=[e[1] for e in EXAMPLES])
def test_a_documented_manifest_plans_one_run_per_record_group(doc, fixture, toml):
    path = ROOT / fixture
    manifest = parse_manifest(toml, filename="manifest.toml", available_files=[path.name])
    (block,) = manifest.runs_from
    result = get_parser(block.parser)(path.read_text(errors="replace"), dict(block.options))
    plan = plan_runs(manifest, {file_key(path.name, block.parser, block.options): result})
    assert len(plan) == len(group_records(result.records)) >= 1, doc


def test_every_parser_has_a_documented_real_example():
    documented = {re.search(r'parser = "([^"]+)"', body)[1] for _, _, body in EXAMPLES}
    aliases = {"stress_ng"}  # the same parser as stress-ng
    assert set(parser_names()) - aliases <= documented
