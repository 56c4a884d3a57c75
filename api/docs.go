package api

import (
	"encoding/json"
	"html/template"
	"net/http"
	"runtime/debug"

	"github.com/chainlens/chainlens/api/docsui"
	"github.com/chainlens/chainlens/api/openapi"
	"github.com/chainlens/chainlens/api/route"
)

// openAPI serves the OpenAPI document of the operations at one base address.
func (s *Server) openAPI(ops []route.Operation, prefix string) http.Handler {
	doc := openapi.Build(openapi.Info{Title: s.opt.Config.DocsTitle, Version: version(), ServerURL: prefix}, ops, s.opt.Handlers.implemented)
	body, err := json.Marshal(doc)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "public, max-age=300")
		_, _ = w.Write(body)
	})
}

var docsTemplate = template.Must(template.New("docs").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{{.Title}} API</title>
<style>body{font:15px/1.5 system-ui,sans-serif;max-width:70rem;margin:2rem auto;padding:0 1rem}
code{background:#f4f4f4;padding:0 .2em}td,th{text-align:left;padding:.2em .6em;vertical-align:top}
.no{color:#999}</style></head><body>
<h1>{{.Title}} API</h1>
<p>Machine-readable description: <a href="{{.Prefix}}/openapi.json"><code>{{.Prefix}}/openapi.json</code></a> (OpenAPI 3.1).
Send <code>Authorization: Bearer &lt;key&gt;</code>. Errors are <code>application/problem+json</code>.</p>
<table><tr><th>Method</th><th>Path</th><th>Group</th><th>Summary</th><th>Credits</th><th>Parameters</th></tr>
{{range .Ops}}<tr{{if not .Implemented}} class="no" title="not implemented yet (501)"{{end}}>
<td>{{.Op.Method}}</td><td><code>{{$.Prefix}}{{.Op.Path}}</code></td><td>{{.Op.Group}}</td><td>{{.Op.Summary}}</td><td>{{.Op.Credits}}</td>
<td>{{range .Op.Params}}<code>{{.Name}}</code>{{if .Required}}*{{end}} {{end}}</td></tr>
{{end}}</table></body></html>`))

// docsPage serves the interactive reference of the operations at one base
// address (docsui), or with ?plain=1 a plain list of them that needs no
// JavaScript.
func (s *Server) docsPage(prefix string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("plain") == "" {
			if err := docsui.Page(w, s.opt.Config.DocsTitle, prefix); err != nil {
				s.opt.Log.Warn("docs page", "err", err)
			}
			return
		}
		type row struct {
			Op          route.Operation
			Implemented bool
		}
		var rows []row
		for _, op := range s.opt.Ops {
			g := s.opt.Config.Groups[op.Group.Base()]
			if g.Prefix == prefix {
				rows = append(rows, row{op, s.opt.Handlers.implemented(op.ID())})
			}
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		if err := docsTemplate.Execute(w, map[string]any{"Title": s.opt.Config.DocsTitle, "Prefix": prefix, "Ops": rows}); err != nil {
			s.opt.Log.Warn("docs page", "err", err)
		}
	})
}

// version is the module version of the running binary.
func version() string {
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" {
		return bi.Main.Version
	}
	return "devel"
}
