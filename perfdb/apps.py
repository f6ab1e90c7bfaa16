from django.apps import AppConfig


class PerfdbConfig(AppConfig):
    name = "perfdb"

    def ready(self) -> None:
        # The page-cache invalidation receivers (runs and vocabulary saved or deleted) must
        # be connected in every process that writes, the admin and a shell included.
        from perfdb import cache  # noqa: F401
