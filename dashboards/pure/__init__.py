"""The dashboards' pure core: plain values in, plain values out, no Django, no database and
no cache, so each is tested with literals and imported by every other part of the app
without pulling in the ORM. ``selection`` reads a page's or the API's selection from its
query string (a bad value is a ``BadParam`` naming it); ``chartdata`` holds the frozen
dataclasses the selectors return and the figure builders draw; ``compare`` sets a baseline
against a candidate, metric by metric, by the detector's rule, and ``compare_text`` writes
its numbers as the pages print them. They import nothing of dashboards outside this folder,
so they sit below the selectors (``chart_queries``) and the builders (``figures``) that
use them.
"""
