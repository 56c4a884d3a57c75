// Package docsui is the interactive API reference served at /docs: Swagger
// UI (the swagger-ui-dist npm package pinned in package-lock.json, copied
// into assets/ by scripts/docs-ui.sh and embedded here) over the base
// address's /openapi.json, with try-it using a key the reader types. No
// file is fetched from anywhere but the server itself.
package docsui

import (
	"embed"
	"html/template"
	"io/fs"
	"net/http"
)

//go:embed assets
var assets embed.FS

// Assets serves the embedded files (mount it under <prefix>/docs/assets/).
func Assets() http.Handler {
	sub, err := fs.Sub(assets, "assets")
	if err != nil {
		panic(err) // the directory is embedded: it exists
	}
	files := http.FileServerFS(sub)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// The files change only with the binary.
		w.Header().Set("Cache-Control", "public, max-age=3600")
		files.ServeHTTP(w, r)
	})
}

var page = template.Must(template.New("docs").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{{.Title}} API reference</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="stylesheet" href="{{.Prefix}}/docs/assets/swagger-ui.css"></head>
<body><div id="ui" data-openapi="{{.Prefix}}/openapi.json"></div>
<noscript><p>The interactive reference needs JavaScript: read <a href="{{.Prefix}}/openapi.json">{{.Prefix}}/openapi.json</a>
or the <a href="{{.Prefix}}/docs?plain=1">plain list of operations</a>.</p></noscript>
<script src="{{.Prefix}}/docs/assets/swagger-ui-bundle.js"></script>
<script src="{{.Prefix}}/docs/assets/chainlens-docs.js"></script>
</body></html>`))

// Page writes the reference page of the base address at prefix.
func Page(w http.ResponseWriter, title, prefix string) error {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	return page.Execute(w, map[string]string{"Title": title, "Prefix": prefix})
}
