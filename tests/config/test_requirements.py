"""The compiled requirements install anywhere: no line names this machine's package mirror
or wheel folder (pip-compile --no-emit-index-url --no-emit-find-links), and every pinned
package carries its hashes (pip's --require-hashes mode, which the Dockerfile uses)."""

from __future__ import annotations

import re

import pytest

from tests.conftest import ROOT


@pytest.mark.parametrize("name", ["requirements.txt", "requirements-dev.txt"])
def test_the_compiled_requirements_name_no_machine_path(name):
    text = (ROOT / name).read_text()
    options = [line for line in text.splitlines() if line.startswith("-")]
    assert options == [], options  # no --index-url, --extra-index-url, --find-links
    assert "file://" not in text and "/opt/" not in text


@pytest.mark.parametrize("name", ["requirements.txt", "requirements-dev.txt"])
def test_every_pin_carries_a_hash(name):
    blocks = re.split(r"\n(?=[A-Za-z0-9])", (ROOT / name).read_text())
    pins = [b for b in blocks if "==" in b.splitlines()[0]]
    assert pins and all("--hash=sha256:" in b for b in pins)
