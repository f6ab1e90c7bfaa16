"""Manifest fields for a reference build and claims (docs/bundle-format.md).

* ``reference = { kernel = "2.4.20", patches = [] }`` in a ``[[run]]`` (for its setup) or a
  ``[hardware.X]`` table (for every setup on that hardware): the build re-run as a control.
* ``[[claim]]``: "on setup S, candidate C is +42.2 % against baseline B on metric M", with
  the sentence that says so; checked against the stored runs on ingest.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ingest.manifest import fields as mf

_REFERENCE_KEYS = ("kernel", "patches")
_CLAIM_KEYS = (
    "workload",
    "workload_version",
    "hardware",
    "mode",
    "params",
    "metric",
    "baseline",
    "candidate",
    "change_pct",
    "tolerance_pct",
    "source",
    "document",
)
MAX_CLAIMS = 1000


@dataclass(frozen=True)
class BuildSpec:
    """A kernel and the patches on it: a reference build, a claim's side, or what a label
    printed in a file stands for (a ``[[runs_from]]`` block's ``labels``)."""

    kernel: str  # normalized
    patches: tuple[str, ...]

    @property
    def text(self) -> str:
        return "+".join((self.kernel, *self.patches))


@dataclass(frozen=True)
class ClaimSpec:
    index: int
    workload: str
    workload_version: str
    hardware: str
    mode: str
    params: Mapping[str, mf.Scalar]
    metric: str
    baseline: BuildSpec | str  # a build, or the label of a run in this bundle
    candidate: BuildSpec | str
    change_pct: float
    tolerance_pct: float | None
    source: str
    document: str


def _build(value: object) -> BuildSpec:
    if not isinstance(value, dict):
        raise mf.Invalid(
            f"expected a table {{ kernel = ..., patches = [...] }}, got {mf.show(value)}"
        )
    unknown = sorted(set(value) - set(_REFERENCE_KEYS))
    if unknown:
        raise mf.Invalid(f"unknown key {unknown[0]!r}; allowed: kernel, patches")
    if "kernel" not in value:
        raise mf.Invalid("'kernel' is missing")
    return BuildSpec(mf.kernel(value["kernel"]), mf.name_list(value.get("patches", [])))


def reference(value: object) -> BuildSpec:
    """``reference = { kernel = "2.4.20", patches = ["O(1)"] }``."""
    return _build(value)


def _side(value: object) -> BuildSpec | str:
    if isinstance(value, str):
        return mf.name(value)
    return _build(value)


def _number(value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or value != value:
        raise mf.Invalid(f"expected a number, got {mf.show(value)}")
    return float(value)


def read_claims(data: Mapping[str, Any], problems: list[str]) -> tuple[ClaimSpec, ...]:
    raw = data.get("claim", [])
    if not isinstance(raw, list):
        problems.append(f"field 'claim': expected [[claim]] tables, got {mf.show(raw)}")
        return ()
    if len(raw) > MAX_CLAIMS:
        problems.append(f"field 'claim': {len(raw)} claims; at most {MAX_CLAIMS} per bundle")
        return ()
    claims = []
    for index, item in enumerate(raw, start=1):
        if not isinstance(item, dict):
            problems.append(f"claim {index}: expected a table, got {mf.show(item)}")
            continue
        fields = mf.Fields(item, f"claim {index}", problems)
        fields.check_keys(_CLAIM_KEYS)
        params = {}
        for name, value in (fields.get("params", mf.table, {}) or {}).items():
            try:
                params[name] = mf.param(value)
            except mf.Invalid as error:
                fields.problem(f"field 'params.{name}': {error}")
        spec = ClaimSpec(
            index=index,
            workload=fields.get("workload", mf.name, required=True),
            workload_version=fields.get("workload_version", mf.string, ""),
            hardware=fields.get("hardware", mf.name, required=True),
            mode=fields.get("mode", mf.mode, required=True),
            params=params,
            metric=fields.get("metric", mf.name, required=True),
            baseline=fields.get("baseline", _side, required=True),
            candidate=fields.get("candidate", _side, required=True),
            change_pct=fields.get("change_pct", _number, required=True),
            tolerance_pct=fields.get("tolerance_pct", _number),
            source=fields.get("source", mf.name, required=True),
            document=fields.get("document", mf.string, ""),
        )
        if not fields.count:
            claims.append(spec)
    return tuple(claims)
