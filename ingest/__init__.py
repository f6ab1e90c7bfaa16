"""Uploads in: a result bundle accepted, read, parsed and stored as runs, in plain words.

``services`` is an upload's life (create, ingest, fail, retry) and ``upload_rows`` the SQL
about its row. ``bundle`` reads the archive safely and parses it (``bundle_parse``): the
``manifest`` package checks what it states, ``parsers`` read the harness outputs (pure),
``plan`` turns records into runs and ``field_lengths`` checks them against the columns, all
before any transaction; ``writer`` stores every run in one transaction (``keys`` and
``bundle_keys`` find or create what a run points to, ``run_rows`` and ``copy_rows`` the
COPY, ``evidence`` reference builds and claims). ``api`` and ``views`` are the HTTP edges,
``tasks`` the Celery ones (queued by name through ``queue``), ``recovery`` what staff and
beat do to uploads afterwards, ``preview`` what a bundle would create, and ``synthetic``
the benchmarks' history.
"""
