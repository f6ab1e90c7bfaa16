"""scripts/perfdb-upload loaded as a module, to call its functions (helpers, not tests)."""

from __future__ import annotations

import importlib.machinery
import importlib.util
import sys
from types import ModuleType

from tests.conftest import ROOT

SCRIPT = ROOT / "scripts" / "perfdb-upload"


def load_script() -> ModuleType:
    """The script as a module, to call its functions (it has no .py name)."""
    loader = importlib.machinery.SourceFileLoader("perfdb_upload", str(SCRIPT))
    spec = importlib.util.spec_from_loader("perfdb_upload", loader)
    module = importlib.util.module_from_spec(spec)
    sys.modules["perfdb_upload"] = module
    loader.exec_module(module)
    return module
