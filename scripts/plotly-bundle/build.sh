#!/bin/sh
# Rebuild static/vendor/plotly/plotly-perfdb.min.js from the pinned plotly.js (package-lock.json):
#   cd scripts/plotly-bundle && npm ci && sh build.sh
# Keep plotly.js's version equal to the plotly.js the python plotly package bundles (the figures
# are built and validated against that schema): .venv/bin/python -c "import plotly, pathlib;
# print(open(pathlib.Path(plotly.__file__).parent/'package_data/plotly.min.js').read(40))"
set -eu
cd "$(dirname "$0")"
out=../../static/vendor/plotly
version=$(node -p "require('plotly.js/package.json').version")
mkdir -p "$out"
# --loader:.css=empty: plotly.js requires maplibre-gl's CSS for map subplots only; none here.
./node_modules/.bin/esbuild entry.js --bundle --minify --format=iife --global-name=Plotly \
  --define:global=window --define:define.amd=false --target=es2016 --loader:.css=empty \
  --legal-comments=eof \
  --banner:js="/* plotly.js v$version (MIT, see LICENSE beside this file), partial: scatter, bar, heatmap, waterfall. Built by scripts/plotly-bundle/build.sh */" \
  --outfile="$out/plotly-perfdb.min.js"
cp node_modules/plotly.js/LICENSE "$out/LICENSE"
