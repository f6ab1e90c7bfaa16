import pytest

from perfdb.tasks import ping


@pytest.mark.worker
@pytest.mark.django_db(transaction=True)
def test_a_real_worker_runs_a_task_end_to_end(celery_worker):
    result = ping.delay("kernel")
    assert result.get(timeout=30) == "pong:kernel"
