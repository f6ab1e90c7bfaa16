"""What the pages and the API share at their HTTP edge, above the selectors and the figure
builders: ``exports`` writes every chart's data as a table and sends it as CSV or JSON
(``&format=csv|json``), so a download matches the chart on screen; ``page_tools`` holds what
each page's view does alike (a bad parameter's 400 page, the permalink and download links,
a figure embedded in the page, a set-up named in the URL, a run's one-line text). The views
in ``dashboards.pages`` and ``dashboards.api`` call these; neither holds a query of its own.
"""
