"""The factories of tests/factories.py build valid rows that share their natural keys, as
ingest's rows do: a test that relies on them relies on what is checked here."""

from __future__ import annotations

import pytest

from perfdb.models import Kernel, PatchSet, Result, Setup
from tests.factories import (
    AlertFactory,
    CommitKernelFactory,
    KernelFactory,
    OutboxMessageFactory,
    ResultFactory,
    ResultSummaryFactory,
    RunFactory,
    SetupFactory,
    StaffFactory,
    SubscriptionFactory,
    UploadFactory,
    UserFactory,
)

pytestmark = pytest.mark.django_db


def test_a_run_is_a_stock_build_of_the_default_setup_on_a_new_kernel():
    first, second = RunFactory(), RunFactory()
    assert first.setup == second.setup and first.kernel != second.kernel
    assert first.patch_set.is_stock and first.build == first.kernel.version
    assert Setup.objects.get().params == {"rooms": 10, "messages": 1000}


def test_natural_keys_are_shared_not_duplicated():
    a = RunFactory(kernel__version="2.4.20", patch_set__name="task+sched")
    b = RunFactory(kernel__version="2.4.20", patch_set__name="task+sched")
    assert a.kernel == b.kernel and a.patch_set == b.patch_set
    assert Kernel.objects.count() == PatchSet.objects.count() == 1
    assert list(a.patch_set.items.values_list("patch__name", flat=True)) == ["task", "sched"]
    assert a.build == "2.4.20+task+sched"


def test_kernels_are_ordered_as_stored_by_the_model():
    later, earlier = KernelFactory(version="6.8.0-rc4"), KernelFactory(version="6.8.0-rc3")
    commit = CommitKernelFactory(describe="v6.8-rc3-45-g5ef2dccfcc")
    assert list(Kernel.objects.all()) == [earlier, commit, later]
    assert commit.tree == "linus/master" and str(commit) == commit.version


def test_a_result_and_a_summary_belong_to_their_runs_series():
    result = ResultFactory(value=4.5)
    assert Result.objects.get().setup == result.run.setup
    summary = ResultSummaryFactory(run=result.run, metric=result.metric)
    assert summary.metric.name == "throughput" and summary.sd_pct == 2.0
    other = SetupFactory(params={"rooms": 20})
    assert ResultFactory(run__setup=other).setup == other


def test_an_alert_is_on_its_candidates_series():
    alert = AlertFactory(candidate_run__kernel__version="2.5.25")
    assert alert.setup == alert.candidate_run.setup
    assert (alert.status, alert.direction) == ("untriaged", "regression")


def test_people_uploads_and_mail(client):
    user = UserFactory(username="lab")
    assert client.login(username="lab", password="lab-password-1")
    assert StaffFactory().is_staff and not user.is_staff
    assert UploadFactory().sha256 != UploadFactory().sha256
    message = OutboxMessageFactory(subscription=SubscriptionFactory(user=user))
    assert message.to == "lab@lab.example" and message.status == "pending"
