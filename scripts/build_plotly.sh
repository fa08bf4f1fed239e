#!/bin/sh
# Build static/vendor/plotly-core-bar-heatmap-4.1.1.min.js: plotly.js 4.1.1 with the traces the pages
# draw (scatter, which core always holds, plus bar and heatmap) and nothing else. npm's cartesian
# bundle also carries box, violin, histograms, contour, pie, image, ternary and world calendars; the
# browser ran all of that before the first heatmap. Needs node and the npm registry; run from anywhere.
set -eu
VERSION=4.1.1
HERE=$(cd "$(dirname "$0")" && pwd)
VENDOR="$HERE/../static/vendor"
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

# plotly.js's sources and their dependencies (the package ships no lockfile: npm takes the newest
# versions its ranges allow, so a later run can differ by those libraries' patch releases).
npm pack --silent --pack-destination "$WORK" "plotly.js@$VERSION" >/dev/null
tar -xzf "$WORK/plotly.js-$VERSION.tgz" -C "$WORK"
(cd "$WORK/package" && npm install --omit=dev --ignore-scripts --no-audit --no-fund --loglevel=error)
# The bundler, the plugins plotly.js's own esbuild-config.js uses, and the browser stand-ins for node's
# stream and buffer that its dependencies import: pinned, outside its tree.
mkdir "$WORK/tools"
(cd "$WORK/tools" && npm init -y >/dev/null && npm install --no-audit --no-fund --loglevel=error \
  esbuild@0.28.2 esbuild-plugin-glsl@1.4.2 esbuild-plugin-environment@0.5.0 esbuild-plugin-inline-css@0.0.1 \
  stream-browserify@3.0.0 buffer@6.0.3)
cp "$HERE/build_plotly.cjs" "$WORK/tools/"
node "$WORK/tools/build_plotly.cjs" "$WORK/package" "$VENDOR/plotly-core-bar-heatmap-$VERSION.min.js" "$VERSION"
cp "$WORK/package/LICENSE" "$VENDOR/plotly-core-bar-heatmap-$VERSION.LICENSE.txt"
