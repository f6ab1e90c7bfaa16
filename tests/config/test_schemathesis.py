"""The whole API against its own OpenAPI schema (schemathesis), as part of the suite.

Every operation of ``/api/schema/`` gets generated requests, valid and invalid, with a staff
token, through the WSGI app against the test database holding a few runs and an alert. All
of schemathesis's checks run: no 500, every status, content type, header and body as the
schema states, invalid input refused and valid input accepted. Seeded and bounded
(``MAX_EXAMPLES`` per operation) so it takes well under a minute; ``SCHEMATHESIS_SEED`` and
``SCHEMATHESIS_EXAMPLES`` change them for a deeper run.
"""

from __future__ import annotations

import os

import pytest
import schemathesis
from hypothesis import HealthCheck, seed, settings
from schemathesis.specs.openapi.checks import positive_data_acceptance

from config.wsgi import application

SEED = int(os.environ.get("SCHEMATHESIS_SEED", 14))
MAX_EXAMPLES = int(os.environ.get("SCHEMATHESIS_EXAMPLES", 6))

schema = schemathesis.openapi.from_wsgi("/api/schema/", application)
# The coverage phase (boundaries, empty and missing values, each enum member) runs whole; the
# random fuzzing after it is bounded by MAX_EXAMPLES.
schema.config.phases.coverage.unexpected_methods = set()

# Operations whose valid input a schema cannot state, so a schema-valid request may rightly
# be a 400: whether bytes are a result bundle; that compare's two sides hold different runs;
# which setups and builds have a kernel profile (the profile diff); which set-up and metric
# names exist (the series, whose unknown or ambiguous name is a 400 naming it).
NOT_SCHEMA_EXPRESSIBLE = {
    ("GET", "/api/series/"),
    ("POST", "/api/uploads/"),
    ("POST", "/api/uploads/preview/"),
    ("GET", "/api/compare/"),
    ("GET", "/api/profile-diff/"),
}


@pytest.fixture(scope="module")
def api_data(django_db_setup, django_db_blocker, tmp_path_factory):
    """Runs, an alert and a staff user with an address, made once for the module (each
    generated request then runs in its test's rolled-back transaction)."""
    from django.core.management import call_command

    from perfdb.operations.accounts import token_get
    from tests.factories import StaffFactory
    from tests.perfdb.alerting.builds import check, ingest_runs

    tmp = tmp_path_factory.mktemp("api")
    from ingest import queue

    with django_db_blocker.unblock(), pytest.MonkeyPatch.context() as patch:
        patch.setattr(queue, "ingest_upload", lambda **kwargs: None)
        staff = StaffFactory(username="fuzz-staff", email="boss@example.org")
        check(ingest_runs(tmp, "a.tar.gz", [("2.4.20", "[]", (13000, 13100, 12950))]))
        check(ingest_runs(tmp, "b.tar.gz", [("2.4.20", '["O(1)"]', (11000, 11100, 11050))]))
        token = token_get(user=staff)
    yield token
    with django_db_blocker.unblock():
        call_command("flush", interactive=False, verbosity=0)


@pytest.fixture(autouse=True)
def _in_process(monkeypatch):
    """Requests run inside the test's transaction, as Django's test client runs them (the
    WSGI handler would close the connection after each); uploads the fuzzer makes are
    stored, never queued to a worker."""
    from django.core import signals
    from django.db import close_old_connections

    from ingest import queue

    signals.request_started.disconnect(close_old_connections)
    signals.request_finished.disconnect(close_old_connections)
    monkeypatch.setattr(queue, "ingest_upload", lambda **kwargs: None)
    yield
    signals.request_started.connect(close_old_connections)
    signals.request_finished.connect(close_old_connections)


@pytest.mark.django_db
@schema.parametrize()
@settings(
    max_examples=MAX_EXAMPLES,
    deadline=None,
    derandomize=False,
    database=None,
    suppress_health_check=list(HealthCheck),
)
@seed(SEED)
def test_the_api_keeps_its_schema(case, api_data):
    excluded = []
    if (case.method, case.path) in NOT_SCHEMA_EXPRESSIBLE:
        excluded.append(positive_data_acceptance)
    # The WSGI transport reads bodies as sent; an HTTP client decodes a compressed one.
    headers = {"Authorization": f"Token {api_data}", "Accept-Encoding": "identity"}
    case.call_and_validate(headers=headers, excluded_checks=excluded)


@pytest.mark.django_db
def test_a_refused_retry_is_the_documented_409(api_data):
    """A done upload is not sent again: the 409 and its body are the schema's."""
    from perfdb.models import Upload

    done = Upload.objects.filter(status=Upload.Status.DONE).first()
    operation = schema["/api/uploads/{upload_id}/retry/"]["POST"]
    case = operation.Case(path_parameters={"upload_id": done.pk})
    response = case.call_and_validate(
        headers={"Authorization": f"Token {api_data}", "Accept-Encoding": "identity"}
    )
    assert response.status_code == 409 and "re-ingest" in response.json()["error"]
