from django.apps import AppConfig


class PerfdbConfig(AppConfig):
    name = "perfdb"
