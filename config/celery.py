"""The Celery app; its settings are the CELERY_* names in config.settings."""

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

app = Celery("perfdb")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()  # each installed app's tasks.py
app.autodiscover_tasks(["perfdb.alerting"])  # a package inside the perfdb app

# Request and upload ids through task headers, task durations, the project's log format.
import config.celery_observability  # noqa: E402,F401
