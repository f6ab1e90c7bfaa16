"""The data model: the vocabulary of docs/DESIGN (kernel, patch set, hardware, workload,
metric, run, trial) in ``vocabulary``; uploads, runs and what hangs off a run in ``runs``;
alerts, subscriptions and the email outbox in ``alerts``. All belong to the perfdb app.

Natural keys carry unique constraints so that ingesting the same data twice is harmless.
"""

from perfdb.models.alerts import (
    Alert,
    AlertEvent,
    OutboxMessage,
    PinnedBaseline,
    Subscription,
    Threshold,
)
from perfdb.models.evidence import Claim, ReferenceBuild, ReferenceHold
from perfdb.models.runs import (
    Curve,
    Histogram,
    ProfileEntry,
    RawFile,
    Result,
    ResultSummary,
    Run,
    Sample,
    Trial,
    Upload,
)
from perfdb.models.summaries import SetupSummary
from perfdb.models.vocabulary import (
    Better,
    Hardware,
    Kernel,
    Metric,
    Mode,
    Patch,
    PatchSet,
    PatchSetItem,
    Setup,
    Workload,
    params_digest,
)

__all__ = [
    "Alert",
    "AlertEvent",
    "Better",
    "Claim",
    "Curve",
    "Hardware",
    "Histogram",
    "Kernel",
    "Metric",
    "Mode",
    "OutboxMessage",
    "Patch",
    "PatchSet",
    "PatchSetItem",
    "PinnedBaseline",
    "ProfileEntry",
    "RawFile",
    "ReferenceBuild",
    "ReferenceHold",
    "Result",
    "ResultSummary",
    "Run",
    "Sample",
    "Setup",
    "SetupSummary",
    "Subscription",
    "Threshold",
    "Trial",
    "Upload",
    "Workload",
    "params_digest",
]
