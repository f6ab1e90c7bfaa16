"""Uploads in: a result bundle accepted, read, parsed and stored as runs, in plain words.

``services`` is an upload's life (create, ingest, fail, retry) and its row's states in SQL
(claimed, progress, done). ``bundle`` reads the archive safely and parses it
(``bundle_parse``): the ``manifest`` package checks what it states, ``parsers`` read the
harness outputs (pure), ``plan`` turns records into runs and checks their texts against the
columns, all before any transaction; ``writer`` stores every run, with the reference builds
and claims, in one transaction (``keys`` finds or creates what a run points to, in one
round trip where it can; ``copy_rows`` the COPY). ``api`` and ``views`` are the HTTP edges,
``tasks`` the Celery ones (queued by name through ``queue``), ``recovery`` what staff and
beat do to uploads afterwards, ``preview`` what a bundle would create, and ``synthetic``
the benchmarks' history.
"""
