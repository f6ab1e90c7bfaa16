"""config/gunicorn.conf.py: the master freezes what it imported before a worker forks."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_pre_fork_freezes_the_imported_app_out_of_the_collectors_reach():
    """Run as gunicorn's master would (preload_app: the app loaded, then ``pre_fork``), in a
    process of its own: the view modules are imported and the heap is frozen."""
    code = (
        "import gc, runpy, sys; "
        "from config.wsgi import application; "
        "conf = runpy.run_path('config/gunicorn.conf.py'); "
        "assert conf['preload_app'] and gc.get_freeze_count() == 0; "
        "conf['pre_fork'](None, None); "
        "print('dashboards.pages.scaling' in sys.modules, gc.get_freeze_count())"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
    )
    imported, frozen = out.stdout.split()
    assert imported == "True"
    assert int(frozen) > 50_000, frozen
