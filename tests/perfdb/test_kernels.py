import random

import pytest

from perfdb.kernels import KernelVersionError, parse_kernel, sort_kernels

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

    shuffled = TODAY_ORDER[:]
    random.Random(5).shuffle(shuffled)
    for version in shuffled:
        Kernel.objects.create(version=version)
    stored = list(Kernel.objects.order_by("sort_key", "version").values_list("version", flat=True))
    assert stored == TODAY_ORDER
    # a key of the old shape (the suffix's trailing number only: 64 for both Debian kernels)
    Kernel.objects.filter(version="6.1.0-9-amd64").update(sort_key=[6, 1, 0, 0, 3, 0, 2, 64])
    migration = import_module("perfdb.migrations.0018_kernel_sort_key_numbers")
    migration.recompute(apps, None)
    stored = list(Kernel.objects.order_by("sort_key", "version").values_list("version", flat=True))
    assert stored == TODAY_ORDER
