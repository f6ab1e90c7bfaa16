"""Which patch of a stack moved a metric: pure, over the builds measured on one kernel.

A patch set is an ordered stack (p1, p2, …). Given the values of the builds stored for one
setup, metric and kernel — stock, prefixes (+p1, +p1+p2, …) and single patches (+p2 alone) —
each patch's change is measured against the build just below it: the previous prefix when
both prefixes were run (exact: the steps add up to the stack), else the patch alone against
stock (steps need not add up: patches may interact). Every step is judged by
``detector.policy.judge``, the rule the compare page and the detector use. A step with no runs
to measure it says which run would settle it ("run 2.5.66 + p2 alone").
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from statistics import fmean

from perfdb.detector import policy
from perfdb.detector.points import finite

Patches = tuple[str, ...]


@dataclass(frozen=True)
class Step:
    patch: str
    method: str  # "prefix" | "alone" | "unmeasured"
    base: Patches  # the build it is measured against
    candidate: Patches
    verdict: policy.Verdict | None
    delta: float | None  # candidate mean - base mean, in the metric's unit
    needed: str  # the run that would measure it, when unmeasured


@dataclass(frozen=True)
class Attribution:
    kernel: str
    stack: Patches
    stock_mean: float | None
    steps: tuple[Step, ...]
    total: policy.Verdict | None  # the whole stack against stock, when both were run
    stack_mean: float | None
    culprit: str | None  # the one patch that moved the metric, when the data can tell
    message: str
    needed: tuple[str, ...]  # runs that would settle it


def build_name(kernel: str, patches: Patches) -> str:
    return f"{kernel} + {'+'.join(patches)}" if patches else f"{kernel} stock"


def _verdict(
    base_values: Sequence[float],
    cand_values: Sequence[float],
    better: str,
    settings: policy.Settings | None,
) -> policy.Verdict | None:
    base, cand = finite(base_values), finite(cand_values)
    if not base or not cand or fmean(base) == 0:
        return None
    return policy.judge(base, cand, better, settings=settings)


def attribute(
    kernel: str,
    stack: Sequence[str],
    builds: Mapping[Patches, Sequence[float]],
    better: str,
    *,
    direction: str | None = None,
    settings: policy.Settings | None = None,
) -> Attribution:
    """Attribute the stack's change to its patches. ``builds`` maps a build's patches (``()``
    is stock) to its values (trials of every run pooled). ``direction`` ("regression" or
    "improvement") is the move to explain; by default the stack's own."""
    stack = tuple(stack)
    steps: list[Step] = []
    for i, patch in enumerate(stack):
        prev, cur = stack[:i], stack[: i + 1]
        if prev in builds and cur in builds:
            steps.append(_step(patch, "prefix", prev, cur, builds, better, settings))
        elif () in builds and (patch,) in builds:
            steps.append(_step(patch, "alone", (), (patch,), builds, better, settings))
        else:
            todo = f"run {build_name(kernel, (patch,))} alone"
            if i and prev in builds:
                todo = f"run {build_name(kernel, cur)}"
            if () not in builds and not i:
                todo = f"run {build_name(kernel, ())} and {build_name(kernel, cur)}"
            steps.append(Step(patch, "unmeasured", (), (patch,), None, None, todo))
    total = None
    if () in builds and stack in builds and stack:
        total = _verdict(builds[()], builds[stack], better, settings)
    stock_mean = fmean(builds[()]) if builds.get(()) else None
    stack_mean = fmean(builds[stack]) if builds.get(stack) else None
    want = direction or (total.direction if total else None)
    culprit, message, needed = _explain(kernel, stack, steps, total, want)
    return Attribution(
        kernel, stack, stock_mean, tuple(steps), total, stack_mean, culprit, message, needed
    )


def _step(
    patch: str,
    method: str,
    base: Patches,
    cand: Patches,
    builds: Mapping[Patches, Sequence[float]],
    better: str,
    settings: policy.Settings | None,
) -> Step:
    verdict = _verdict(builds[base], builds[cand], better, settings)
    delta = fmean(builds[cand]) - fmean(builds[base]) if builds[base] and builds[cand] else None
    return Step(patch, method, base, cand, verdict, delta, "")


def _explain(
    kernel: str,
    stack: Patches,
    steps: Sequence[Step],
    total: policy.Verdict | None,
    want: str | None,
) -> tuple[str | None, str, tuple[str, ...]]:
    measured = [(s, s.verdict) for s in steps if s.verdict is not None]
    unmeasured = [s for s in steps if s.verdict is None]
    needed = tuple(s.needed for s in unmeasured)
    if not measured:
        return None, "No run measures any patch of this stack.", needed
    moved = [
        (s, verdict)
        for s, verdict in measured
        if verdict.significant and (want is None or verdict.direction == want)
    ]
    described = ", ".join(f"{s.patch} ({verdict.change_pct:+.1f} %)" for s, verdict in moved)
    if unmeasured:
        untested = ", ".join(s.patch for s in unmeasured)
        if moved:
            return None, f"{described} moved it, but {untested} is untested.", needed
        return None, f"No measured patch moved it; {untested} is untested.", needed
    if len(moved) == 1:
        step, verdict = moved[0]
        if not step.base:
            how = "alone against stock" if step.method == "alone" else "against stock"
        else:
            how = f"on top of {'+'.join(step.base)}"
        change, reason = verdict.change_pct, verdict.reason
        text = f"{step.patch} moved it: {change:+.1f} % {how} ({reason})."
        return step.patch, text, ()
    if moved:
        return None, f"Several patches moved it: {described}.", ()
    if total is not None and total.significant and len(stack) > 1:
        return (
            None,
            "No single patch moved it significantly, though the whole stack did: the patches "
            "interact, or each step is too small to see with these runs.",
            tuple(f"more trials of {build_name(kernel, s.candidate)}" for s in steps),
        )
    return None, "No patch moved it significantly.", ()
