// Starts Swagger UI on this app's schema. A file rather than an inline script, which the CSP forbids.
// The options are FastAPI's own defaults for /docs, plus validatorUrl: null, so the page never asks
// another host (validator.swagger.io) to check the schema.
const root = document.getElementById("swagger-ui");
window.ui = SwaggerUIBundle({
  url: root.dataset.openapiUrl,
  dom_id: "#swagger-ui",
  layout: "BaseLayout",
  deepLinking: true,
  showExtensions: true,
  showCommonExtensions: true,
  validatorUrl: null,
  presets: [SwaggerUIBundle.presets.apis, SwaggerUIBundle.SwaggerUIStandalonePreset],
});
