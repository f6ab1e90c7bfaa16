"""The ``[kernel."…"]`` tables of a manifest: what the bundle states about kernels named by
git, which order them (docs/kernels.md, docs/bundle-format.md).

```toml
[kernel."6e553c6bcb"]
tree = "linux-next/master"
base = "ec81deb6b7"
subject = "fork: use __mt_dup() to duplicate maple tree in dup_mmap()"
```

One table per kernel, whichever runs use it (a base commit may have no run of the bundle);
the writer stores them through perfdb/kernels/commits.py.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from typing import Any

from ingest import manifest_fields as mf
from perfdb.kernels import KernelFacts, KernelVersionError, parse_kernel

_KEYS = ("tree", "describe", "base", "committed_at", "subject")


def commit_time(value: object) -> dt.datetime:
    """A commit time with its UTC offset: a TOML offset date-time, or ISO 8601 text as
    ``git log --format=%cI`` prints it (``2023-11-28T21:55:00+08:00``)."""
    if isinstance(value, str):
        try:
            value = dt.datetime.fromisoformat(value.strip())
        except ValueError:
            raise mf.Invalid(
                f"expected a date and time with its UTC offset, e.g. "
                f'"2023-11-28T21:55:00+08:00", got {mf.show(value)}'
            ) from None
    if not isinstance(value, dt.datetime):
        raise mf.Invalid(f"expected a date and time with its UTC offset, got {mf.show(value)}")
    if value.tzinfo is None or value.utcoffset() is None:
        raise mf.Invalid(
            f"{value.isoformat()} has no UTC offset; give it as git log --format=%cI prints it"
        )
    return value


def read_kernels(data: Mapping[str, Any], problems: list[str]) -> dict[str, KernelFacts] | None:
    """Each ``[kernel."…"]`` table's facts, by the kernel's text (``linux-next/master@…``
    gives its tree); None when ``kernel`` is not a table of tables."""
    section = data.get("kernel", {})
    if not isinstance(section, dict):
        problems.append(
            f"field 'kernel': expected [kernel.\"NAME\"] tables, got {mf.show(section)}"
        )
        return None
    result: dict[str, KernelFacts] = {}
    for written, raw in section.items():
        where = f"kernel {written!r}"
        if not isinstance(raw, dict):
            problems.append(f"{where}: expected a table, got {mf.show(raw)}")
            continue
        fields = mf.Fields(raw, where, problems)
        fields.check_keys(_KEYS)
        facts = KernelFacts(
            tree=fields.get("tree", mf.stripped, ""),
            describe=fields.get("describe", mf.stripped, ""),
            base=fields.get("base", mf.kernel, ""),
            committed_at=fields.get("committed_at", commit_time),
            subject=fields.get("subject", mf.stripped, ""),
        )
        if fields.count:
            continue
        try:
            name = facts.check(written)
        except KernelVersionError as error:
            fields.problem(str(error))
            continue
        if name.text in result:
            fields.problem(f"{name.text} has another table already")
            continue
        result[name.text] = KernelFacts(
            tree=facts.tree or name.tree,
            describe=facts.describe,
            base=parse_kernel(facts.base).text if facts.base else "",
            committed_at=facts.committed_at,
            subject=facts.subject,
        )
    return result
