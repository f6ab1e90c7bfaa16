"""Regression alerting: detection runs over stored series, triage, and email about alerts.

``regressions`` runs the pure detector (``perfdb.detector.detection``) over a series and records
alerts; ``triage`` changes them on a person's behalf; ``notify`` writes and sends the email
through an outbox; ``queries`` are the reads the alert pages use; ``tasks`` are the Celery
edges, and ``queue`` queues them by name so that no service imports a task module.
"""
