// Starts ReDoc on this app's schema. A file rather than an inline script, which the CSP forbids.
// No search box: it runs in a worker made from a blob: URL, which the CSP (worker-src from script-src
// 'self') does not allow, and the API has a dozen routes, all in the side menu.
const root = document.getElementById("redoc");
Redoc.init(root.dataset.openapiUrl, { disableSearch: true }, root);
