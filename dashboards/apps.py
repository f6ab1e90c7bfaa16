from django.apps import AppConfig


class DashboardsConfig(AppConfig):
    name = "dashboards"

    def ready(self) -> None:
        """Runs committed to setups: their series pages someone opened are computed again
        by the writer's process, before the upload says done (perfdb/cache_warm.py)."""
        from dashboards.warm import series_after_upload
        from perfdb.cache_warm import series_stale

        def warm(sender: object, setups: list[int], **kwargs: object) -> None:
            series_after_upload(setups)

        series_stale.connect(warm, weak=False, dispatch_uid="dashboards-series-warm")
