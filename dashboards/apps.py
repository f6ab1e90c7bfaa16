from django.apps import AppConfig


class DashboardsConfig(AppConfig):
    name = "dashboards"

    def ready(self) -> None:
        """The writer's process recomputes the uploaded scopes' setup pickers right after
        its commit (perfdb/cache/warm.py ``runs_committed``; perfdb cannot import this app)."""
        from dashboards.page_cache.warm import after_commit
        from perfdb.cache import runs_committed

        runs_committed.connect(after_commit, dispatch_uid="dashboards.page_cache.warm.after_commit")
