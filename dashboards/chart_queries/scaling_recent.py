"""A setup's piece of a scaling chart cut to its newest builds, for the chart's default view.

A scope's scaling chart shows its newest builds (12 by default:
dashboards/page_data/scaling.py), yet its pieces held every run of every setup: a scope of
~100 setups with 300 runs each is 30,000 points unpickled to draw ~1,200, and a lab's series
only grow (bench/load.py found the pages' warm-up 16x slower in wall time than its CPU, so
far behind that the first visitor after an upload computed the chart). A *recent piece*
keeps each setup's builds (for the chart's build picker) and only the points of its
``newest`` builds.

That is enough for any view of the scope's ``newest`` newest builds: a build among the
scope's newest ``newest`` has fewer than ``newest`` builds of the scope after it, so fewer
of any one setup's, so it is among the newest ``newest`` of each setup that has it. Builds
are ordered by ``build_order`` (kernel order, then patches, then the name: a total order,
so the scope and each setup cut at the same place).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from dashboards.chart_queries.charts import PiecePoint
from perfdb.kernels import kernel_sort_key

# A build as a picker lists it: (name, kernel, patches), e.g. ("2.6.3+o1", "2.6.3", ("o1",)).
Build = tuple[str, str, tuple[str, ...]]
# A setup's builds, in build order, and the points of its newest ones.
RecentPiece = tuple[tuple[Build, ...], tuple[PiecePoint, ...]]


def build_order(build: Build) -> tuple[Any, ...]:
    """Kernel order, stock before patched, then the name (two spellings of one version)."""
    name, kernel, patches = build
    return (kernel_sort_key(kernel), patches, name)


def _ordered(builds: Iterable[Build]) -> list[Build]:
    """Each build once, in build order."""
    return sorted({build[0]: build for build in builds}.values(), key=build_order)


def _builds(points: Iterable[PiecePoint]) -> list[Build]:
    """The points' builds (the build name; the RunInfo's kernel and patches), in order."""
    return _ordered((point[1], point[5][1], point[5][2]) for point in points)


def recent_piece(points: Sequence[PiecePoint], newest: int) -> RecentPiece:
    """A setup's builds and the points of its ``newest`` newest builds."""
    builds = _builds(points)
    kept = {name for name, _, _ in builds[-newest:]}
    return tuple(builds), tuple(p for p in points if p[1] in kept)


def scaling_builds(pieces: Iterable[Sequence[PiecePoint]]) -> list[str]:
    """The whole pieces' builds (kernel+patches), in build order."""
    return [name for name, _, _ in _builds(p for piece in pieces for p in piece)]


def newest_builds(pieces: Iterable[RecentPiece], newest: int) -> set[str]:
    """The scope's ``newest`` newest builds, from the pieces as they are now: the views
    their points are enough for (each is among every setup's newest, so only those are
    merged)."""
    newer = _ordered(build for builds, _ in pieces for build in builds[-newest:])
    return {name for name, _, _ in newer[-newest:]}


def builds_of(pieces: Iterable[RecentPiece]) -> list[str]:
    """Every build of the pieces' setups, in build order: ``scaling_builds`` of the whole
    pieces they were cut from."""
    return [name for name, _, _ in _ordered(build for builds, _ in pieces for build in builds)]
