// The trace types perfdb's figure builders emit (dashboards/figures/): scatter (in plotly.js's
// core), bar, heatmap and waterfall. tests/dashboards/test_plotly_bundle.py fails when a
// builder emits a type this list does not register.
'use strict';
var Plotly = require('plotly.js/lib/core');
Plotly.register([
    require('plotly.js/lib/bar'),
    require('plotly.js/lib/heatmap'),
    require('plotly.js/lib/waterfall'),
]);
module.exports = Plotly;
