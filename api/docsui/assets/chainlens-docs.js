// Starts Swagger UI over the OpenAPI document named by the page
// (data-openapi on #ui), with try-it on: the Authorize button takes an API
// key (Bearer), kept only in this page's memory.
window.addEventListener("DOMContentLoaded", function () {
  var el = document.getElementById("ui");
  window.ui = SwaggerUIBundle({
    url: el.getAttribute("data-openapi"),
    dom_id: "#ui",
    deepLinking: true,
    tryItOutEnabled: true,
    persistAuthorization: false,
    displayRequestDuration: true,
    defaultModelsExpandDepth: 0,
  });
});
