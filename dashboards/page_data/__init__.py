"""What the pages show, made from the selectors' plain data and kept in the cache
(``perfdb.cache``) under the data versions it depends on, so that the views in
``dashboards.pages`` and ``dashboards.api`` only read it and render or send it, and an upload
recomputes only what it touched: the across-kernels series with its pickers, figure and
downloads (``series_data``); the scopes every chart page's first picker offers
(``scopes``), their run counts and the overview's (``scope_stats``) and which of a scope's
setups a scope chart draws (``scope_draw``); what the detector knows of the runs a compare
page shows (``compare_series``) and the patch-stack waterfall of a compare or alert page
(``attribution``). Below the views, above the selectors and the figure builders.
"""
