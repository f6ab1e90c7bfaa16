import random
from datetime import UTC, datetime, timedelta, timezone

import pytest

from perfdb.kernels import (
    KernelFacts,
    KernelRef,
    KernelVersionError,
    describe_version,
    kernel_label,
    parse_kernel,
    patch_tree_split,
    ref_sort_key,
    sort_kernels,
)

# Every version string the seed documents use, in the order a kernel engineer reads them.
SEED_ORDER = [
    "2.0.36",
    "2.2.7",
    "2.2.12-20",
    "2.2.23",
    "2.3",  # "2.3 development kernels", series without a patch level sorts last in it
    "2.3.28",
    "2.3.99-pre3",
    "2.3.99-pre3-elsc",
    "2.4.0",
    "2.4.17",
    "2.4.20",
    "2.4.20-distro",
    "2.4-distro",
    "2.4-x",
    "2.5.1",
    "2.5.25",
    "2.5.28",
    "2.5.33",
    "2.5.36",
    "2.5.38",
    "2.5.40",
    "2.5.59",
    "2.5.59-D7",
    "2.5.63",
    "2.5.65",
    "2.5.66",
    "2.6.0-test11",
    "2.6.0",
]


def test_seed_versions_sort_as_kernel_people_read_them():
    shuffled = SEED_ORDER[:]
    random.Random(4).shuffle(shuffled)
    got = sort_kernels(shuffled)
    # "2.3" as a bare series sorts after all its numbered releases
    expected = [v for v in SEED_ORDER if v != "2.3"]
    expected.insert(expected.index("2.3.99-pre3-elsc") + 1, "2.3")
    assert got == expected


def test_issue_chain():
    chain = [
        "2.2.12-20",
        "2.2.23",
        "2.3.28",
        "2.3.99-pre3",
        "2.4.0",
        "2.4.17",
        "2.4.20",
        "2.5.25",
        "2.5.59",
        "2.5.66",
    ]
    assert sort_kernels(list(reversed(chain))) == chain


@pytest.mark.parametrize(
    ("lower", "higher"),
    [
        ("2.4.20-pre11", "2.4.20-rc1"),
        ("2.4.20-rc1", "2.4.20"),
        ("2.6.0-test11", "2.6.0-rc1"),
        ("2.5.67-mm1", "2.5.67-mm10"),
        ("2.2.12-20", "2.2.12-mm1"),
        ("2.4.20", "2.4.20-distro"),
        ("2.4.99", "2.4-distro"),
        ("2.4-distro", "2.5.0"),
        ("2.3.99-pre3-elsc", "2.3.99-pre4"),
        ("2.6.9", "2.6.10"),
    ],
)
def test_pairs(lower, higher):
    assert parse_kernel(lower).sort_key < parse_kernel(higher).sort_key


@pytest.mark.parametrize(
    ("text", "base", "suffix"),
    [
        ("2.2.12-20", "2.2.12", "20"),
        ("2.3.99-pre3-elsc", "2.3.99-pre3", "elsc"),
        ("2.4-distro", "2.4", "distro"),
        ("2.5.59", "2.5.59", ""),
    ],
)
def test_base_and_suffix(text, base, suffix):
    version = parse_kernel(text)
    assert version.base == base
    assert version.suffix == suffix


# Today's kernels as ``uname -r`` prints them, in the order kernel people read them.
TODAY_ORDER = [
    "5.14.0-70.13.1.el9_0.x86_64",  # RHEL: release field numbers, left to right
    "5.14.0-362.8.1.el9_3.x86_64",
    "5.15.0-97-generic",  # Ubuntu: the ABI number as a number
    "5.15.0-105-generic",
    "6.1.0-9-amd64",  # Debian
    "6.1.0-18-amd64",
    "6.5.6-300.fc39.x86_64",  # Fedora
    "6.5.12-100.fc39.x86_64",
    "6.8.0-rc3",
    "6.8.0-rc3-45-gabc1234",  # git describe: 45 commits past rc3
    "6.8.0-rc3-00200-g0123456789ab",  # the kernel's own LOCALVERSION form, 200 commits
    "6.8.0-rc3+",  # a local build past the tag
    "6.8.0-rc4",
    "6.8.0",
    "6.8.0+",
    "6.9.0-rc1-next-20240410",
    "6.9.0-rc1-next-20240411",
]


def test_todays_kernels_sort_as_kernel_people_read_them():
    shuffled = TODAY_ORDER[:]
    random.Random(3).shuffle(shuffled)
    assert sort_kernels(shuffled) == TODAY_ORDER
    mixed = sort_kernels([*shuffled, *SEED_ORDER])
    assert mixed[-len(TODAY_ORDER) :] == TODAY_ORDER  # the papers' kernels keep their place


def test_a_describe_hash_is_no_number():
    """The hash's digits say nothing of order: 45 commits come before 200 whatever they
    hash to."""
    assert (
        parse_kernel("6.8.0-rc3-45-g9999999").sort_key
        < parse_kernel("6.8.0-rc3-200-g0000000").sort_key
    )


def test_a_local_build_keeps_its_plus():
    version = parse_kernel("6.8.0-rc3+")
    assert (version.text, version.base, version.plus) == ("6.8.0-rc3+", "6.8.0-rc3+", True)
    assert (
        parse_kernel("6.8.0-rc3").sort_key < version.sort_key < parse_kernel("6.8.0-rc4").sort_key
    )


def test_stock_is_the_plain_kernel():
    assert parse_kernel("2.4.20-stock").text == "2.4.20"
    assert parse_kernel(" 2.5.66-stock ").text == "2.5.66"


@pytest.mark.parametrize(
    "garbage",
    [
        "",
        "linux",
        "2",
        "2.",
        "2.x",
        "2..4",
        "v2.4.20",
        "2.4.20 ; drop table",
        "2.4.20-",
        "2.4.20--x",
        None,
        2.4,
    ],
)
def test_garbage_is_rejected_with_a_clear_error(garbage):
    with pytest.raises(KernelVersionError) as err:
        parse_kernel(garbage)
    assert "kernel version" in str(err.value)


@pytest.mark.django_db
def test_the_database_orders_todays_kernels_as_read():
    """PostgreSQL orders the stored integer arrays the way ``sort_kernels`` does, and the
    migration that computed them anew puts an old-shaped key right."""
    from importlib import import_module

    from django.apps import apps

    from perfdb.models import Kernel
    from tests.factories import KernelFactory

    shuffled = TODAY_ORDER[:]
    random.Random(5).shuffle(shuffled)
    for version in shuffled:
        KernelFactory(version=version)
    stored = list(Kernel.objects.order_by("sort_key", "version").values_list("version", flat=True))
    assert stored == TODAY_ORDER
    # a key of the old shape (the suffix's trailing number only: 64 for both Debian kernels)
    Kernel.objects.filter(version="6.1.0-9-amd64").update(sort_key=[6, 1, 0, 0, 3, 0, 2, 64])
    migration = import_module("perfdb.migrations.0018_kernel_sort_key_numbers")
    migration.recompute(apps, None)
    stored = list(Kernel.objects.order_by("sort_key", "version").values_list("version", flat=True))
    assert stored == TODAY_ORDER


# --- kernels named by git ------------------------------------------------------------------
#
# Commits from real reports: the kernel test robot's (LKP) base and tested commits
# (tests/fixtures/formats/lkp/: will-it-scale poll2 2025 on linus/master, reaim 2020 on
# linux-next/master), Linaro's LKFT summary of v4.14 ("git commit: bebc6082da0a…, git
# describe: v4.14", https://lists.spinics.net stable msg198045) and a Fixes: tag
# (be42f00b73a0, "rcu: Add RCU stall diagnosis information").

# A held-out list of today's kernel names as kernel people read them, with what an upload
# states about the git-named ones (the names are real; the bases and times are the test's).
HELD_OUT: list[tuple[str, KernelFacts]] = [
    ("2.4.20", KernelFacts()),
    ("2.6.0-test11", KernelFacts()),
    ("2.6.0", KernelFacts()),
    ("4.14.0-rc8", KernelFacts()),
    ("4.14.0", KernelFacts()),
    ("bebc6082da0a9f5d47a1ea2edc099bf671058bd4", KernelFacts(describe="v4.14")),  # the tag
    ("4.14.0-3-gbebc6082da0a", KernelFacts()),  # uname of a build 3 commits past it
    ("5.14.0-362.8.1.el9_3.x86_64", KernelFacts()),
    ("5.15.0-105-generic", KernelFacts()),
    ("6.1.0-18-amd64", KernelFacts()),
    ("6.7.0-rc3", KernelFacts()),
    # the robot's base commit and the commit tested on it, stated based on -rc3
    ("d000e073ca", KernelFacts(base="6.7.0-rc3", subject="convert do_select()")),
    ("8935989798", KernelFacts(base="d000e073ca", tree="linus/master")),
    ("6.7.0-rc3-45-gabc1234", KernelFacts()),
    ("be42f00b73a0", KernelFacts(describe="v6.7-rc3-00200-gbe42f00b73a0")),
    ("6.7.0-rc3-00201-g0123456789ab-dirty", KernelFacts()),
    ("6.7.0-rc3-next-20231128", KernelFacts()),
    ("6.7.0-rc3+", KernelFacts()),
    ("6.7.0-rc4", KernelFacts()),
    ("6.7.0", KernelFacts()),
    ("6.7.0+", KernelFacts()),
    # nothing orders these among the versions: after all of them, by day or commit time
    ("next-20231128", KernelFacts()),
    ("9f68395333", KernelFacts(committed_at=datetime(2023, 11, 28, 21, 55, tzinfo=UTC))),
    ("070f5e860e", KernelFacts(base="9f68395333")),  # right after its base
    ("next-20231129", KernelFacts()),
    ("2a26d99b251b", KernelFacts()),  # nothing stated: last
]


def _keys(statements: list[tuple[str, KernelFacts]]) -> dict[str, tuple[int, ...]]:
    """Each kernel's key as the database computes it: a stated base's key first."""
    facts = {parse_kernel(name).text: stated for name, stated in statements}
    keys: dict[str, tuple[int, ...]] = {}

    def key(text: str) -> tuple[int, ...]:
        if text not in keys:
            name = parse_kernel(text)
            stated = facts.get(text, KernelFacts())
            if isinstance(name, KernelRef):
                keys[text] = ref_sort_key(
                    name,
                    describe=stated.describe,
                    base_key=key(parse_kernel(stated.base).text) if stated.base else None,
                    committed_at=stated.committed_at,
                )
            else:
                keys[text] = name.sort_key
        return keys[text]

    for text in facts:
        key(text)
    return keys


def test_todays_kernels_with_commits_sort_as_kernel_people_read_them():
    keys = _keys(HELD_OUT)
    shuffled = list(keys)
    random.Random(7).shuffle(shuffled)
    assert sorted(shuffled, key=lambda t: (keys[t], t)) == [name for name, _ in HELD_OUT]


def test_a_describe_orders_a_commit_exactly_as_the_kernel_it_names():
    commit = parse_kernel("5ef2dccfcc")
    assert isinstance(commit, KernelRef)
    described = ref_sort_key(commit, describe="v6.8-rc3-45-g5ef2dccfcc")
    assert described == parse_kernel("6.8.0-rc3-45-g5ef2dccfcc").sort_key
    assert describe_version("v4.14").text == "4.14.0"  # a tag of two numbers is its .0
    assert describe_version("v2.6.12-rc2").text == "2.6.12-rc2"
    assert describe_version("v6.7.5").text == "6.7.5"


def test_a_chain_of_bases_sorts_base_first_and_siblings_by_time():
    base = parse_kernel("6.8.0-rc3").sort_key
    first, second = (parse_kernel(c) for c in ("d000e073ca", "8935989798"))
    assert isinstance(first, KernelRef) and isinstance(second, KernelRef)
    early = ref_sort_key(first, base_key=base, committed_at=datetime(2024, 2, 5, tzinfo=UTC))
    late = ref_sort_key(second, base_key=base, committed_at=datetime(2024, 2, 6, tzinfo=UTC))
    on_early = ref_sort_key(second, base_key=early)  # based on the early one, no time
    assert base < early < on_early < late < parse_kernel("6.8.0-rc3-1-gabc1234").sort_key
    with pytest.raises(KernelVersionError, match="chain"):
        ref_sort_key(first, base_key=(1,) * 255)  # the key must fit its index entry


def test_a_commit_time_is_exact_to_the_second_and_needs_its_offset():
    commit = parse_kernel("9f68395333")
    assert isinstance(commit, KernelRef)
    at = datetime(2023, 11, 28, 21, 55, 0, tzinfo=timezone(timedelta(hours=8)))
    assert ref_sort_key(commit, committed_at=at) == (2**31 - 1, 19689, 13 * 3600 + 55 * 60)
    assert ref_sort_key(commit, committed_at=at) < ref_sort_key(
        commit, committed_at=at + timedelta(seconds=1)
    )
    with pytest.raises(KernelVersionError, match="UTC offset"):
        ref_sort_key(commit, committed_at=datetime(2023, 11, 28, 21, 55))


@pytest.mark.parametrize(
    ("text", "identity", "tree"),
    [
        ("6e553c6bcb", "6e553c6bcb", ""),
        (
            "linux-next/master@6E553C6BCB7746ABAD29CE63E0CB7A18348E88FB",
            "6e553c6bcb7746abad29ce63e0cb7a18348e88fb",
            "linux-next/master",
        ),
        ("linus/master@b46c89c08f41", "b46c89c08f41", "linus/master"),
        ("next-20240521", "next-20240521", ""),
    ],
)
def test_commits_and_linux_next_tags_are_kernels(text, identity, tree):
    name = parse_kernel(text)
    assert isinstance(name, KernelRef)
    assert (name.text, name.tree) == (identity, tree)
    assert name.sort_key > parse_kernel("99.999.999-rc999+-zzz").sort_key  # after all versions
    assert patch_tree_split(text) is None


@pytest.mark.parametrize(
    "garbage",
    [
        "abc123",
        "next-20241340",
        "next-2024052",
        "g6e553c6bcb",
        "a@b@6e553c6bcb",
        "6e553c6bcb7746abad29ce63e0cb7a18348e88fb0",
    ],
)
def test_almost_commits_are_refused(garbage):
    with pytest.raises(KernelVersionError):
        parse_kernel(garbage)


@pytest.mark.parametrize(
    ("text", "facts", "label"),
    [
        ("2.6.0", KernelFacts(), "2.6.0"),
        ("next-20240521", KernelFacts(), "next-20240521"),
        (
            "89359897983825dbfc08578e7ee807aaf24d9911",
            KernelFacts(subject="do_pollfd(): convert to CLASS(fd)", describe="v4.14"),
            '893598979838 ("do_pollfd(): convert to CLASS(fd)")',
        ),
        (
            "be42f00b73a0",
            KernelFacts(describe="v6.7-rc3-00200-gbe42f00b73a0"),
            "be42f00b73a0 (v6.7-rc3+200)",
        ),
        (
            "bebc6082da0a9f5d47a1ea2edc099bf671058bd4",
            KernelFacts(describe="v4.14"),
            "bebc6082da0a (v4.14)",
        ),
        ("b46c89c08f41", KernelFacts(tree="linus/master"), "b46c89c08f41 (linus/master)"),
        ("2a26d99b251b", KernelFacts(), "2a26d99b251b"),
    ],
)
def test_a_kernel_label_is_what_a_person_reads(text, facts, label):
    assert (
        kernel_label(text, subject=facts.subject, describe=facts.describe, tree=facts.tree) == label
    )


@pytest.mark.parametrize(
    ("kernel", "facts", "message"),
    [
        ("6.8.0", KernelFacts(describe="v6.8"), "is a version"),
        ("be42f00b73a0", KernelFacts(describe="v6.7-rc3-200-g0123456789"), "names commit"),
        ("be42f00b73a0", KernelFacts(describe="6.7-rc3 plus some"), "git describe"),
        ("be42f00b73a0", KernelFacts(base="be42f00b73a0"), "itself"),
        ("be42f00b73a0", KernelFacts(base="linux"), "not a kernel version"),
        ("linus/master@be42f00b73a0", KernelFacts(tree="linux-next/master"), "tree"),
        ("be42f00b73a0", KernelFacts(committed_at=datetime(2024, 1, 1)), "UTC offset"),
        ("be42f00b73a0", KernelFacts(subject="two\nlines"), "one line"),
    ],
)
def test_facts_that_cannot_be_are_refused(kernel, facts, message):
    with pytest.raises(KernelVersionError, match=message):
        facts.check(kernel)


def test_a_describe_part_counts_commits_wherever_it_is_in_a_suffix():
    """The hash's digits are no number in a linux-next build past its tag, nor dirty."""
    low = parse_kernel("6.9.0-rc1-next-20240410-12-g9999999999").sort_key
    high = parse_kernel("6.9.0-rc1-next-20240410-200-g0000000000").sort_key
    assert low < high
    assert low[-2:] == (20240410, 12)
    dirty = parse_kernel("6.8.0-rc3-00045-g5ef2dccfcc-dirty").sort_key
    assert dirty == parse_kernel("6.8.0-rc3-45-g5ef2dccfcc").sort_key


@pytest.mark.django_db
def test_the_database_orders_mixed_kernels_as_the_pure_order():
    """Stored int32 arrays, ordered by PostgreSQL, agree with the pure keys (test_kernels)."""
    from perfdb.kernels.commits import kernels_state
    from perfdb.models import Kernel
    from tests.factories import KernelFactory

    shuffled = HELD_OUT[:]
    random.Random(11).shuffle(shuffled)
    kernels_state({name: facts for name, facts in shuffled if facts != KernelFacts()})
    for name, facts in shuffled:
        if facts == KernelFacts():
            KernelFactory(version=name)
    stored = Kernel.objects.order_by("sort_key", "version").values_list("version", flat=True)
    assert list(stored) == [name for name, _ in HELD_OUT]
    assert (
        max(abs(n) for key in Kernel.objects.values_list("sort_key", flat=True) for n in key)
        < 2**31
    )
