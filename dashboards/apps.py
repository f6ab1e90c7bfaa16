from django.apps import AppConfig


class DashboardsConfig(AppConfig):
    name = "dashboards"

    def ready(self) -> None:
        """The writer's process brings the page data an upload touched up to date right
        after its commit, and the process that wrote alerts their series' marks
        (perfdb/cache/warm.py ``runs_committed``, ``alerts_committed``; perfdb cannot import
        this app)."""
        from dashboards.page_cache.warm import after_alerts, after_commit
        from perfdb.cache import alerts_committed, runs_committed

        runs_committed.connect(after_commit, dispatch_uid="dashboards.page_cache.warm.after_commit")
        alerts_committed.connect(
            after_alerts, dispatch_uid="dashboards.page_cache.warm.after_alerts"
        )
