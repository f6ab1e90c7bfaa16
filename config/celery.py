"""The Celery app; its settings are the CELERY_* names in config.settings (the broker's
connection ones in config/network.py)."""

import os

from celery import Celery
from django.conf import settings

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

app = Celery("perfdb")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()  # each installed app's tasks.py
app.autodiscover_tasks(["perfdb.alerting"])  # a package inside the perfdb app


# The socket timeouts of config/network.py join the transport options settings.py sets (its
# visibility timeout): every process's broker connection reads them.
app.conf.broker_transport_options = {
    **getattr(settings, "BROKER_SOCKET_OPTIONS", {}),
    **settings.CELERY_BROKER_TRANSPORT_OPTIONS,
}

# Request and upload ids through task headers, task durations, the project's log format.
import config.celery_observability  # noqa: E402,F401
