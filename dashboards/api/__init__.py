"""The HTTP API over what the pages show (DRF, mounted at /api/ by config/urls.py): runs and
their parts, the chart series, compare, alerts with triage and their summaries, reference
builds, subscriptions and the detector's settings; with its authentication, throttles,
pagination, error shape and schema. Uploads are ingest's (ingest/api.py). Each module holds
the views of one resource; ``urls.py`` maps them."""
