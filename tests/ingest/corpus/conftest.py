from __future__ import annotations

import pytest

from tests.ingest.corpus.corpus import summary


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    terminalreporter.write_line(f"corpus: {summary()}")
