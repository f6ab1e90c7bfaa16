"""The data model and everything below the pages: perfdb is the bottom layer.

One folder per concept: ``models`` (the model), ``queries`` and ``timeseries`` (the reads the
pages and the API share), ``kernels`` (kernel identity and order), ``detector`` (the pure
regression detector: a series in, changes out), ``alerting`` (the detector over stored
series, the alerts, their email), ``cache`` (the page data cache, one public face),
``features`` (claims, reference builds, attribution, profile diffs) and ``operations`` (what
operators and the processes need). ``ingest`` and ``dashboards`` stand above it and it
imports neither (docs/architecture.md; import-linter holds it).
"""
