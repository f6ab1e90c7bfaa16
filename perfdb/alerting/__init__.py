"""Regression alerting: the detector run over stored series, the alerts it keeps, their email.

An upload's check (``regressions.detection_run``, the task's body) locks its series
(``series_lock``), reads all they need at once (``check_data``; a short series' pooled prior
from ``noise_prior``, commit kernels ordered by ``kernel_order``), asks the pure detector
one question per series (``perfdb.detector.check``) and records the answer as alerts
(``record``): a step placed anew moves its alert (``moves``, by the pure ``moves_rule``) and
each alert stores its placement (``placement``). New
regressions are emailed through an outbox (``notify``, rendered by ``email_render`` and
``report``); ``followups`` finds checks and emails a dead worker left owed. ``triage`` and
``thresholds`` are staff's writes, ``queries`` and ``summaries`` the pages' reads, ``tasks``
the Celery edges and ``queue`` queues them by name, so no service imports a task module.
"""
