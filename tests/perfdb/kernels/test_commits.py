"""Kernels named by git in the database: facts stated, keys kept in order, refusals.

Commits from the kernel test robot's reports (tests/fixtures/formats/lkp/): the 2025
will-it-scale poll2 report (base d000e073ca "convert do_select()", tested 8935989798 on
linus/master) and the 2020 reaim one (base 9f68395333, tested 070f5e860e on
linux-next/master, beside v5.7); LKFT's v4.14 summary (commit bebc6082da0a…, describe v4.14).
The names and LKFT's describe are real; other bases, describes and times are the tests'.
"""

from __future__ import annotations

from datetime import UTC, datetime
from importlib import import_module

import pytest
from django.apps import apps
from django.db import IntegrityError, transaction

from perfdb.kernels.commits import KernelFacts, KernelFactsError, kernel_state, kernels_state
from perfdb.models import Kernel
from tests.factories import KernelFactory

pytestmark = pytest.mark.django_db

LKFT = "bebc6082da0a9f5d47a1ea2edc099bf671058bd4"


def order() -> list[str]:
    return list(Kernel.objects.order_by("sort_key", "version").values_list("version", flat=True))


def test_the_robots_base_then_tested_commit():
    base = kernel_state(
        kernel="d000e073ca", facts=KernelFacts(base="6.13.0", subject="convert do_select()")
    )
    tested = kernel_state(
        kernel="linus/master@8935989798",
        facts=KernelFacts(base="d000e073ca", subject="do_pollfd(): convert to CLASS(fd)"),
    )
    KernelFactory(version="6.13.0-rc1")
    KernelFactory(version="6.14.0-rc1")
    assert order() == ["6.13.0-rc1", "6.13.0", "d000e073ca", "8935989798", "6.14.0-rc1"]
    assert tested.base == base and tested.tree == "linus/master"
    assert tested.display == '8935989798 ("do_pollfd(): convert to CLASS(fd)")'
    assert str(tested) == "8935989798"  # the identity: pages match it again


def test_a_chain_stated_in_one_call_in_any_order():
    rows = kernels_state(
        {
            "070f5e860e": KernelFacts(base="9f68395333", tree="linux-next/master"),
            "9f68395333": KernelFacts(subject="sched/pelt: Add a new runnable average signal"),
        }
    )
    KernelFactory(version="5.7.0")
    assert rows["070f5e860e"].base == rows["9f68395333"]
    # nothing orders the base among the versions: after all of them, its commit right after
    assert order() == ["5.7.0", "9f68395333", "070f5e860e"]


def test_an_order_stated_later_moves_the_commit_and_those_based_on_it():
    KernelFactory(version=LKFT)  # first uploaded with nothing stated
    kernel_state(kernel="070f5e860e", facts=KernelFacts(base=LKFT))
    for version in ("4.14.0-rc8", "4.14.0", "4.15.0-rc1"):
        KernelFactory(version=version)
    assert order() == ["4.14.0-rc8", "4.14.0", "4.15.0-rc1", LKFT, "070f5e860e"]
    kernel_state(kernel=LKFT, facts=KernelFacts(describe="v4.14"))
    assert order() == ["4.14.0-rc8", "4.14.0", LKFT, "070f5e860e", "4.15.0-rc1"]
    assert Kernel.objects.get(version=LKFT).display == "bebc6082da0a (v4.14)"


def test_a_fact_never_changes_but_a_missing_one_is_filled_in():
    kernel_state(kernel="linus/master@b46c89c08f41", facts=KernelFacts(describe="v6.13"))
    again = kernel_state(
        kernel="linux-next/master@b46c89c08f41",  # the same commit found on another tree
        facts=KernelFacts(describe="v6.13", subject="Merge tag 'x'"),
    )
    assert (again.tree, again.subject) == ("linus/master", "Merge tag 'x'")  # first tree kept
    with pytest.raises(KernelFactsError, match=r"describe 'v6.14' \(stored: 'v6.13'\)"):
        kernel_state(kernel="b46c89c08f41", facts=KernelFacts(describe="v6.14"))
    kernel_state(kernel="b46c89c08f41", facts=KernelFacts(base="6.13.0"))
    with pytest.raises(KernelFactsError, match=r"base 6.12.0 \(stored: 6.13.0\)"):
        kernel_state(kernel="b46c89c08f41", facts=KernelFacts(base="6.12.0"))
    assert not Kernel.objects.filter(version="6.12.0").exists()  # all or nothing


def test_a_cycle_of_bases_is_refused_and_nothing_is_stored():
    kernel_state(kernel="d000e073ca", facts=KernelFacts(base="8935989798"))
    with pytest.raises(KernelFactsError, match="based on it"):
        kernel_state(kernel="8935989798", facts=KernelFacts(base="d000e073ca"))
    assert Kernel.objects.get(version="8935989798").base is None
    with pytest.raises(KernelFactsError, match="based on itself"):
        kernels_state(
            {
                "9f68395333": KernelFacts(base="070f5e860e"),
                "070f5e860e": KernelFacts(base="9f68395333"),
            }
        )
    assert not Kernel.objects.filter(version__in=["9f68395333", "070f5e860e"]).exists()
    with pytest.raises(IntegrityError), transaction.atomic():  # and the database's own check
        Kernel.objects.filter(version="d000e073ca").update(
            base=Kernel.objects.get(version="d000e073ca")
        )


def test_a_version_takes_no_facts():
    with pytest.raises(KernelFactsError, match="is a version"):
        kernel_state(kernel="6.8.0", facts=KernelFacts(describe="v6.8"))
    assert not Kernel.objects.exists()


def test_the_migration_recomputes_describe_parts_of_suffixes():
    KernelFactory(version="6.9.0-rc1-next-20240410-12-g5ef2dccfcc")
    old = [6, 9, 0, 0, 2, 1, 0, 2, 20240410, 12, 5, 2]  # the hash's digits counted
    Kernel.objects.update(sort_key=old)
    import_module("perfdb.migrations.0020_kernel_commits").recompute(apps, None)
    assert Kernel.objects.get().sort_key == [6, 9, 0, 0, 2, 1, 0, 2, 20240410, 12]


def test_a_commit_time_orders_commits_of_one_tree():
    later = kernel_state(
        kernel="9f68395333",
        facts=KernelFacts(committed_at=datetime(2020, 2, 24, 10, 13, 2, tzinfo=UTC)),
    )
    earlier = kernel_state(
        kernel="070f5e860e",
        facts=KernelFacts(committed_at=datetime(2020, 2, 24, 10, 13, 1, tzinfo=UTC)),
    )
    assert earlier.sort_key < later.sort_key
    assert later.committed_at == datetime(2020, 2, 24, 10, 13, 2, tzinfo=UTC)
