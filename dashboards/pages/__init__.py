"""The site's pages, a module per page (or per pair of pages over one thing: ``runs`` holds
the activity and compare pages of chosen runs; ``views`` the overview, a run's page and the
account). Each holds the page's views and nothing a second caller needs: a view reads its
selection from the URL (``dashboards.pure.selection``), takes its answer from the page data
or the selectors, and renders or downloads it. The JSON API is apart in ``dashboards.api``;
what the pages and the API both show lives below them, so neither imports the other's views.
"""
