"""Kernel version strings, parsed and ordered the way kernel people read them.

    2.2.12-20 < 2.2.23 < 2.3.28 < 2.3.99-pre3 < 2.3.99-pre3-elsc < 2.4.0 < 2.4.20
    < 2.4.20-distro < 2.4-distro < 2.5.1 < 2.5.59 < 2.5.59-mm1 < 2.6.0-test11 < 2.6.0

Grammar: ``MAJOR.MINOR[.PATCH[.SUBLEVEL]][-preN|-testN|-rcN][-SUFFIX...]``.

Deliberate choices (documented in docs/kernels.md):
- Pre-releases sort before their release: ``-pre`` < ``-test`` < ``-rc`` < final.
- A suffix after the release (a distributor's build number as in Red Hat's ``2.2.12-20``, or a
  tree/build name as in ``-mm1``, ``-elsc``, ``-distro``) sorts right after its base and
  before the next release. Numeric build suffixes sort before named ones; named ones by their
  trailing number, then by name.
- A version without a patch level (``2.4-distro``, ``2.4-x``) names a kernel of that series
  whose patch level the source does not give: it sorts after every numbered release of the
  series and before the next series (2.4.20 < 2.4-distro < 2.5.0).
- ``-stock`` is dropped (``2.4.20-stock`` is ``2.4.20``): stock is an empty patch set, not a
  different kernel.
- Today's ``uname -r``: the numbers in a suffix compare as numbers, left to right
  (``6.1.0-9-amd64`` < ``6.1.0-18-amd64``, ``5.15.0-97-generic`` < ``5.15.0-105-generic``,
  Fedora's ``-300.fc39``, RHEL's ``-362.8.1.el9_3``); a ``git describe`` suffix counts its
  commits (``6.8.0-rc3-45-gabc123`` and ``-00045-g…``; the hash is no number);
  ``6.8.0-rc3+`` (a local build past the tag) sorts right after ``6.8.0-rc3``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_SERIES_END = 99999  # patch level used for "some kernel of this series, level not given"
_STAGES = {"pre": 0, "test": 1, "rc": 2}
_FINAL = 3

_VERSION = re.compile(
    r"""^(?P<major>\d{1,2})\.(?P<minor>\d{1,3})
        (?:\.(?P<patch>\d{1,3})(?:\.(?P<sublevel>\d{1,3}))?)?
        (?:-(?P<stage>pre|test|rc)(?P<stage_num>\d{1,3}))?
        (?P<plus>\+)?
        (?P<suffix>(?:-[A-Za-z0-9][A-Za-z0-9_.+]*)*)$""",
    re.VERBOSE,
)
_DESCRIBE = re.compile(r"^(\d+)-g[0-9a-f]{7,40}\+?$")  # git describe: commits since, hash
_NUMBERS = re.compile(r"\d+")
_INT_MAX = 2**31 - 1  # the keys are stored as PostgreSQL integers


class KernelVersionError(ValueError):
    """A string that is not a kernel version."""


@dataclass(frozen=True, order=False)
class KernelVersion:
    text: str
    major: int
    minor: int
    patch: int | None
    sublevel: int | None
    stage: str | None
    stage_num: int
    suffix: str  # without the leading "-", "" when none
    plus: bool = False  # "6.8.0-rc3+": a local build past the tag

    @property
    def series(self) -> str:
        return f"{self.major}.{self.minor}"

    @property
    def base(self) -> str:
        """The version without its build suffix (what a distro or patched build is based on)."""
        text = self.series if self.patch is None else f"{self.series}.{self.patch}"
        if self.sublevel is not None:
            text += f".{self.sublevel}"
        if self.stage:
            text += f"-{self.stage}{self.stage_num}"
        return text + ("+" if self.plus else "")

    @property
    def sort_key(self) -> tuple[int, ...]:
        """Integers that order versions; equal keys are tie-broken by ``text``.

        The release, its stage, a local build's ``+``, then the suffix: none, one that starts
        with a number (a distribution's build, ``git describe``'s commit count), or a named
        one; then the suffix's numbers, compared as numbers."""
        patch = _SERIES_END if self.patch is None else self.patch
        stage = _STAGES[self.stage] if self.stage else _FINAL
        key = (self.major, self.minor, patch, self.sublevel or 0, stage, self.stage_num)
        if not self.suffix:
            return (*key, int(self.plus), 0)
        described = _DESCRIBE.match(self.suffix)
        if described:
            numbers = [int(described.group(1))]  # the hash's digits are no order
        else:
            numbers = [int(n) for n in _NUMBERS.findall(self.suffix)]
        rank = 1 if self.suffix[0].isdigit() else 2
        return (*key, int(self.plus), rank, *(min(n, _INT_MAX) for n in numbers))


def parse_kernel(text: str) -> KernelVersion:
    """Parse a kernel version string; raise KernelVersionError saying what is expected."""
    if not isinstance(text, str):
        raise KernelVersionError(f"kernel version must be a string, got {type(text).__name__}")
    cleaned = text.strip()
    if cleaned.endswith("-stock"):
        cleaned = cleaned[: -len("-stock")]
    match = _VERSION.match(cleaned)
    if not match or len(cleaned) > 64:
        raise KernelVersionError(
            f"{text!r} is not a kernel version: expected MAJOR.MINOR[.PATCH][-preN|-rcN|-testN]"
            "[+][-SUFFIX], e.g. 2.4.20, 2.3.99-pre3, 2.2.12-20, 2.4-distro, 6.1.0-18-amd64 "
            "or 6.8.0-rc3+"
        )
    stage = match.group("stage")
    return KernelVersion(
        text=cleaned,
        major=int(match.group("major")),
        minor=int(match.group("minor")),
        patch=int(match.group("patch")) if match.group("patch") else None,
        sublevel=int(match.group("sublevel")) if match.group("sublevel") else None,
        stage=stage,
        stage_num=int(match.group("stage_num")) if stage else 0,
        suffix=match.group("suffix")[1:],
        plus=bool(match.group("plus")),
    )


# Patch trees: patch sets published against a release under a numbered suffix
# (2.6.0-mm1, 2.4.6-ac2, 6.6.15-rt22). A build of one is the base kernel plus a patch set,
# so a manifest writes it as ``kernel = "2.6.0", patches = ["mm1"]`` (docs/kernels.md).
PATCH_TREES = {
    "mm": "Andrew Morton's -mm tree",
    "ac": "Alan Cox's -ac tree",
    "aa": "Andrea Arcangeli's -aa tree",
    "ck": "Con Kolivas' -ck patches",
    "mjb": "Martin Bligh's -mjb tree",
    "rt": "the PREEMPT_RT patch set",
}
_TREE = re.compile(r"^(?:" + "|".join(PATCH_TREES) + r")\d+$")


def patch_tree_split(text: str) -> tuple[str, tuple[str, ...]] | None:
    """``("2.6.0", ("mm1",))`` for a version whose suffix starts with a patch tree
    (``2.6.0-mm1``; ``2.6.23-rc2-mm2-mem-v6`` gives ``("2.6.23-rc2", ("mm2", "mem-v6"))``);
    None for a kernel that is one as written (``2.2.12-20``, ``2.4-distro``, ``2.5.59``)."""
    version = parse_kernel(text)
    first, _, rest = version.suffix.partition("-")
    if not _TREE.match(first):
        return None
    return version.base, (first, rest) if rest else (first,)


def kernel_sort_key(text: str) -> tuple[tuple[int, ...], str]:
    """Key for ``sorted(versions, key=kernel_sort_key)``."""
    version = parse_kernel(text)
    return version.sort_key, version.text


def sort_kernels(versions: list[str]) -> list[str]:
    return sorted(versions, key=kernel_sort_key)
