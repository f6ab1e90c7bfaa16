"""The pages in headless Chromium against a live server: each test drives a whole page (its
view, template, script and plotly.js) rather than one module, so they stay together here,
named for the page or the behaviour they drive; ``chromium`` starts the browser and records
a page's console errors."""
