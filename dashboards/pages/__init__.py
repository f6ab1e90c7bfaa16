"""The site's HTML pages, a module per page holding its views: each reads its selection
from the URL (``dashboards.pure.selection``; a bad value is a 400 naming it), takes its
answer from the page data (``dashboards.page_data``) or the selectors, and renders it or
sends its CSV/JSON download (``dashboards.web``). Nothing here is cached or computed for a
second caller: what a page shows and the API or the warm-up also needs lives below, in
``page_data``, so a view stays a few lines of reading, asking and rendering. A page's forms
(what a post may hold and its checks) sit beside its views in a module named for them
(``alert_forms``). The JSON API is apart, in ``dashboards.api``.
"""
