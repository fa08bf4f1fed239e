// esbuild settings of plotly.js's esbuild-config.js, minified, with an entry that registers only the
// traces the pages draw. Run by build_plotly.sh: node build_plotly.cjs PLOTLY_DIR OUTFILE VERSION.
const esbuild = require("esbuild");
const { environmentPlugin } = require("esbuild-plugin-environment");
const { glsl } = require("esbuild-plugin-glsl");
const InlineCSSPlugin = require("esbuild-plugin-inline-css");

const [plotlyDir, outfile, version] = process.argv.slice(2);

esbuild.build({
  stdin: {
    // core holds scatter and every layout component (axes, colorbars, shapes, annotations, modebar).
    contents: `var Plotly = require("./lib/core");
Plotly.register([require("./lib/bar"), require("./lib/heatmap")]);
module.exports = Plotly;`,
    resolveDir: plotlyDir,
  },
  nodePaths: [`${__dirname}/node_modules`], // stream-browserify and buffer, beside this file
  outfile,
  format: "iife",
  globalName: "Plotly",
  bundle: true,
  minify: true,
  legalComments: "eof",
  banner: { js: `/**\n* plotly.js (core, bar, heatmap - minified) v${version}\n* Copyright 2012-2026, Plotly, Inc.\n* All rights reserved.\n* Licensed under the MIT license\n*/` },
  plugins: [InlineCSSPlugin(), glsl({ minify: true }), environmentPlugin({ NODE_DEBUG: false })],
  alias: { regl: "@plotly/regl", stream: "stream-browserify" },
  define: { global: "window", "define.amd": "false" },
  target: "es2016",
  logLevel: "warning",
}).catch(() => process.exit(1));
