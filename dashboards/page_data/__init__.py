"""What the pages show, made from the selectors' plain data, most of it kept in the cache
(``perfdb.cache``) under the data versions it depends on, so that the views in
``dashboards.pages`` and ``dashboards.api`` only ask for it and render or send it, the
warm-up (``dashboards.page_cache.warm``) can compute it before anyone asks, and an upload
recomputes only what it touched. A module per page's data (``series_data`` for /kernels/,
``scaling``, ``kernel_time``, ``wakeups``, ``compare`` with ``compare_series`` and
``attribution``, ``profile_diff``, ``claims``, ``overview``) and the scopes every chart page
picks from (``scopes``, ``scope_stats``, ``scope_draw``, and ``setup_picker``: a scope's
set-ups as the across-kernels and compare pages offer them). Below the views, above the
selectors and the figure builders.
"""
