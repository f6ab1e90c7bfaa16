"""Whole pages and answers kept for anonymous readers, and the page data recomputed before
anyone asks. ``kept`` keeps a page a few seconds (the pages no data version follows) or an
answer while the versions its reads found hold (the series page, its figure,
``/api/series/``), answered by ``KeptAnswerMiddleware`` before the middleware stack runs;
``warm`` recomputes what the pages read after an upload's commit and after a deploy emptied
the cache (run by ``dashboards.tasks``), calling each page's own cached default view so
that no visitor pays the miss. The entries underneath are ``perfdb.cache``'s; this is the
caching of whole pages on top of it.
"""
