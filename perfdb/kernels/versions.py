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
- A kernel named by git (``KernelRef``: a commit id ``6e553c6bcb``,
  ``linux-next/master@6e553c6bcb``, or a linux-next tag ``next-20240521``) carries no order
  in its name: ``ref_sort_key`` orders it by what an upload states (a ``git describe``, a
  base kernel, a commit time); with nothing stated it sorts after every versioned kernel.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, date, datetime

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
# git describe's "-N-gHASH" (commits past the tag, the commit), anywhere in a suffix: the count
# is a number, the hash's digits are none ("next-20240521-12-g6e553c6bcb", "00045-gabc-dirty").
_DESCRIBE_PART = re.compile(r"(?:^|(?<=-))(\d+)-g[0-9a-f]{7,40}(?=$|[-+])")
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
        numbers = [int(n) for n in _NUMBERS.findall(_DESCRIBE_PART.sub(r"\1", self.suffix))]
        rank = 1 if self.suffix[0].isdigit() else 2
        return (*key, int(self.plus), rank, *(min(n, _INT_MAX) for n in numbers))


# --- kernels named by git: commits and linux-next tags ------------------------------------

_COMMIT = re.compile(
    r"^(?:(?P<tree>[A-Za-z0-9][A-Za-z0-9._/-]{0,99})@)?(?P<commit>[0-9a-fA-F]{7,40})$"
)
_NEXT_TAG = re.compile(r"^next-(?P<day>\d{8})$")
_GIT_DESCRIBE = re.compile(
    r"^(?P<written>v?(?P<tag>\d{1,2}\.\d{1,3}(?:\.\d{1,3}){0,2}(?:-rc\d{1,3})?))"
    r"(?:-(?P<count>\d{1,6})-g(?P<commit>[0-9a-f]{7,40}))?$"
)
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
# The time part of a key when no time is stated: after every stated time.
_NO_TIME = (_INT_MAX, 0)
# A kernel based on another sorts right after it: its key is the base's plus its own time, two
# integers a level. A longer key (a chain of about a hundred bases) is refused: the key stays
# well inside a btree index entry (1 KiB of its 2.7 KiB).
MAX_KEY_LENGTH = 256


@dataclass(frozen=True)
class KernelRef:
    """A kernel named by git rather than by a version: a commit (``6e553c6bcb``, with the tree
    it was found on as ``linux-next/master@6e553c6bcb``) or a linux-next tag (``next-20240521``).

    The name carries no order (a hash is no number); ``sort_key`` is what the name alone
    gives — after every versioned kernel, a linux-next tag by its day — and ``ref_sort_key``
    what an upload states about it."""

    text: str  # the identity: the commit in lower case, or the tag
    tree: str = ""  # "linux-next/master" when written as tree@commit
    day: date | None = None  # a linux-next tag's day

    @property
    def commit(self) -> str:
        """The commit id, "" for a linux-next tag."""
        return "" if self.day else self.text

    @property
    def sort_key(self) -> tuple[int, ...]:
        return ref_sort_key(self)


def parse_kernel(text: str) -> KernelVersion | KernelRef:
    """Parse a kernel name: a version (``KernelVersion``) or a git commit or linux-next tag
    (``KernelRef``); raise KernelVersionError saying what is expected."""
    if not isinstance(text, str):
        raise KernelVersionError(f"kernel version must be a string, got {type(text).__name__}")
    ref = _parse_ref(text.strip())
    return ref if ref is not None else parse_version(text)


def _parse_ref(cleaned: str) -> KernelRef | None:
    commit = _COMMIT.match(cleaned)
    if commit:
        return KernelRef(text=commit.group("commit").lower(), tree=commit.group("tree") or "")
    tag = _NEXT_TAG.match(cleaned)
    if tag:
        try:
            day = datetime.strptime(tag.group("day"), "%Y%m%d").date()
        except ValueError:
            raise KernelVersionError(f"{cleaned!r}: {tag.group('day')} is not a date") from None
        return KernelRef(text=cleaned, day=day)
    return None


def parse_version(text: str) -> KernelVersion:
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
            "or 6.8.0-rc3+; or a git commit (6e553c6bcb, linux-next/master@6e553c6bcb) or a "
            "linux-next tag (next-20240521)"
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
    if isinstance(version, KernelRef):
        return None
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


# --- what an upload states about a kernel named by git -------------------------------------


def describe_version(describe: str) -> KernelVersion:
    """The kernel version a ``git describe`` names: ``v6.8-rc3-45-g5ef2dccfcc`` is
    ``6.8.0-rc3-45-g5ef2dccfcc`` (a tag of two numbers is its .0 release, as the kernel's
    Makefile prints it), ``v4.14`` is ``4.14.0``; it orders the commit exactly as that kernel."""
    match = _GIT_DESCRIBE.match(describe.strip()) if isinstance(describe, str) else None
    if not match:
        raise KernelVersionError(
            f"describe {describe!r} is not what git describe prints for a kernel tag: expected "
            "vMAJOR.MINOR[.PATCH][-rcN][-COUNT-gHASH], e.g. v4.14 or v6.8-rc3-45-g5ef2dccfcc"
        )
    tag, count, commit = match.group("tag", "count", "commit")
    release, _, stage = tag.partition("-")
    if release.count(".") == 1:
        release += ".0"
    text = release + (f"-{stage}" if stage else "") + (f"-{count}-g{commit}" if count else "")
    return parse_version(text)


def describe_check(ref: KernelRef, describe: str) -> None:
    """Refuse a describe that names another commit (its hash and the kernel's disagree)."""
    match = _GIT_DESCRIBE.match(describe.strip())
    described = match.group("commit") if match else None
    if described and ref.commit:
        common = min(len(described), len(ref.commit))
        if described[:common] != ref.commit[:common]:
            raise KernelVersionError(
                f"describe {describe!r} names commit {described}, not {ref.commit}"
            )


def time_key(when: datetime | None) -> tuple[int, int]:
    """(days since 1970-01-01 UTC, seconds into that day): a commit time as two integers,
    exact to the second and within PostgreSQL's int32 whatever the year."""
    if when is None:
        return _NO_TIME
    if when.tzinfo is None:
        raise KernelVersionError(f"commit time {when.isoformat()} has no UTC offset")
    days, seconds = divmod(int((when - _EPOCH).total_seconds()), 86400)
    return days, seconds


def ref_sort_key(
    ref: KernelRef,
    *,
    describe: str = "",
    base_key: tuple[int, ...] | None = None,
    committed_at: datetime | None = None,
) -> tuple[int, ...]:
    """The order of a kernel named by git, from what is stated about it, first that applies:

    1. a ``git describe``: exactly the key of the kernel it names (``v6.8-rc3-45-g…`` sorts
       as ``6.8.0-rc3-45-g…``: after 6.8.0-rc3 and its first 44 commits, before -rc4);
    2. a base kernel (``base_key``, its stored key): right after it, siblings of one base by
       their commit times (``base_key`` + the time), so a chain sorts base first;
    3. neither: after every versioned kernel (a first element no version reaches), by commit
       time — a linux-next tag's day when none is stated — and last when there is none.
    Equal keys are tie-broken by the name, as for versions."""
    if describe:
        return describe_version(describe).sort_key
    when = committed_at
    if when is None and ref.day is not None:
        when = datetime(ref.day.year, ref.day.month, ref.day.day, tzinfo=UTC)
    if base_key is None:
        return (_INT_MAX, *time_key(when))
    if len(base_key) + 2 > MAX_KEY_LENGTH:
        raise KernelVersionError(
            f"{ref.text} is based on a chain of about {len(base_key) // 2} kernels: state a "
            "describe for one of them, which orders it (and those based on it) by itself"
        )
    return (*base_key, *time_key(when))


def kernel_label(text: str, *, subject: str = "", describe: str = "", tree: str = "") -> str:
    """How a person reads a kernel: a version as written; a commit as its first 12 hex
    digits (the kernel's ``Fixes:`` length) with its subject as a ``Fixes:`` tag quotes it,
    else where its describe puts it (``6e553c6bcb (v6.7-rc3+45)``), else its tree."""
    name = parse_kernel(text)
    if isinstance(name, KernelVersion) or not name.commit:
        return name.text
    short = name.text[:12]
    if subject:
        return f'{short} ("{subject}")'
    match = _GIT_DESCRIBE.match(describe.strip()) if describe else None
    if match:
        count = f"+{int(match.group('count'))}" if match.group("count") else ""
        return f"{short} ({match.group('written')}{count})"
    return f"{short} ({tree})" if tree else short


@dataclass(frozen=True)
class KernelFacts:
    """What an upload states about a kernel named by git; "" (or None) is not stated."""

    tree: str = ""  # "linux-next/master": where the commit was found
    describe: str = ""  # "v6.7-rc3-45-g6e553c6bcb": orders it exactly
    base: str = ""  # the kernel it is based on (a version, a commit): sorts right after it
    committed_at: datetime | None = None  # orders it among commits of one base or tree
    subject: str = ""  # its subject line, for its label

    def check(self, kernel: str) -> KernelRef:
        """The kernel these facts are about, parsed; KernelVersionError naming the first
        fact that cannot be (a version orders itself, a describe of another commit, …)."""
        name = parse_kernel(kernel)
        if isinstance(name, KernelVersion):
            raise KernelVersionError(
                f"{name.text} is a version, ordered by its name: describe, base, committed_at, "
                "tree and subject are stated for a git commit or a linux-next tag"
            )
        if self.tree and name.tree and self.tree != name.tree:
            raise KernelVersionError(f"tree {self.tree!r}, but the kernel is named {kernel!r}")
        if len(self.tree) > 100 or any(c.isspace() for c in self.tree):
            raise KernelVersionError(f"tree {self.tree!r}: expected a name such as linus/master")
        if self.describe:
            describe_version(self.describe)
            describe_check(name, self.describe)
        if self.base and parse_kernel(self.base).text == name.text:
            raise KernelVersionError(f"{name.text} cannot be based on itself")
        if self.committed_at is not None:
            time_key(self.committed_at)  # refuses a time without its UTC offset
        if len(self.subject) > 300 or "\n" in self.subject:
            raise KernelVersionError("subject: expected one line of at most 300 characters")
        return name
