// Package openapi generates the OpenAPI 3.1 document of a set of operations
// from the route table, so the document and the served routes cannot drift.
package openapi

import (
	"github.com/chainlens/chainlens/chains/cosmos"

	"net/http"
	"strconv"
	"strings"

	"github.com/chainlens/chainlens/api/route"
)

// Info names the document.
type Info struct {
	Title   string
	Version string
	// ServerURL is the base address of the operations, e.g. "/dex" for a
	// group served under a path prefix; "" or "/" for the root.
	ServerURL string
}

// Build returns the OpenAPI document of ops. implemented tells which
// operations have a handler; the others are flagged x-implemented: false.
func Build(info Info, ops []route.Operation, implemented func(id route.ID) bool) map[string]any {
	paths := map[string]any{}
	for _, op := range ops {
		item, _ := paths[op.Path].(map[string]any)
		if item == nil {
			item = map[string]any{}
			paths[op.Path] = item
		}
		item[strings.ToLower(op.Method)] = operation(op, implemented(op.ID()))
	}
	server := info.ServerURL
	if server == "" {
		server = "/"
	}
	return map[string]any{
		"openapi": "3.1.0",
		"info":    map[string]any{"title": info.Title, "version": info.Version},
		"servers": []any{map[string]any{"url": server}},
		"paths":   paths,
		"components": map[string]any{
			"securitySchemes": map[string]any{"bearer": map[string]any{"type": "http", "scheme": "bearer"}},
			"schemas":         map[string]any{"Problem": problemSchema()},
		},
	}
}

func operation(op route.Operation, implemented bool) map[string]any {
	tag := string(op.Group)
	if op.Admin {
		tag = "admin" // a secret key with the admin scope
	}
	o := map[string]any{
		"operationId":   operationID(op),
		"summary":       op.Summary,
		"tags":          []any{tag},
		"x-credits":     op.Credits,
		"x-implemented": implemented,
	}
	if op.NoAuth {
		o["security"] = []any{}
	} else {
		o["security"] = []any{map[string]any{"bearer": []any{}}}
	}
	var ps []any
	for _, p := range op.Params {
		ps = append(ps, parameter(p))
	}
	if len(ps) > 0 {
		o["parameters"] = ps
	}
	if op.Body != nil {
		content := map[string]any{"application/json": map[string]any{"schema": Schema(op.Body)}}
		if op.Publishable {
			content["text/plain"] = map[string]any{"schema": map[string]any{"type": "string", "contentMediaType": "application/json"}}
		}
		o["requestBody"] = map[string]any{"required": true, "content": content}
	}
	responses := map[string]any{}
	status := op.Status
	if status == 0 {
		status = http.StatusOK
	}
	if op.Response != nil {
		media := map[string]any{"schema": Schema(op.Response)}
		if ex, ok := examples[op.ID().String()]; ok {
			media["examples"] = map[string]any{"localnet": map[string]any{
				"summary": "An answer on the recorded localnets (arrays cut to two items)", "value": ex}}
		}
		responses[strconv.Itoa(status)] = map[string]any{
			"description": http.StatusText(status),
			"content":     map[string]any{"application/json": media},
		}
	} else {
		responses[strconv.Itoa(status)] = map[string]any{"description": http.StatusText(status)}
	}
	problem := map[string]any{"content": map[string]any{"application/problem+json": map[string]any{"schema": map[string]any{"$ref": "#/components/schemas/Problem"}}}}
	for _, code := range []int{400, 401, 403, 404, 429, 500, 501, 503} {
		r := map[string]any{"description": http.StatusText(code)}
		for k, v := range problem {
			r[k] = v
		}
		responses[strconv.Itoa(code)] = r
	}
	o["responses"] = responses
	return o
}

// operationID turns "GET /pools/depth/{pool_id}/current" into a stable identifier.
func operationID(op route.Operation) string {
	var b strings.Builder
	b.WriteString(strings.ToLower(op.Method))
	for _, r := range op.Path {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	return b.String()
}

func parameter(p route.Param) map[string]any {
	s := map[string]any{}
	switch p.Type {
	case route.Integer:
		s["type"] = "integer"
	case route.Number:
		s["type"] = "number"
	case route.Boolean:
		s["type"] = "boolean"
	default:
		s["type"] = "string"
	}
	switch p.Type {
	case route.Date:
		s["description"] = "YYYY-MM-DD HH:MM:SS, YYYY-MM-DD or RFC 3339 (UTC)"
	case route.Denom:
		s["pattern"] = cosmos.DenomPattern
	case route.Bech32:
		s["description"] = "a bech32 address (all lower or all upper case)"
	}
	if len(p.Enum) > 0 {
		s["enum"] = enumValues(p)
	}
	if p.Min != nil {
		s["minimum"] = *p.Min
	}
	if p.Max != nil {
		s["maximum"] = *p.Max
	}
	if p.Default != "" {
		s["default"] = typedDefault(p)
	}
	out := map[string]any{"name": p.Name, "in": string(p.In), "required": p.Required || p.In == route.InPath}
	if p.Description != "" {
		out["description"] = p.Description
	}
	if p.Multi {
		arr := map[string]any{"type": "array", "items": s}
		if p.MaxItems > 0 {
			arr["maxItems"] = p.MaxItems
		}
		out["schema"] = arr
		out["style"] = "form"
		out["explode"] = true
		return out
	}
	out["schema"] = s
	return out
}

func enumValues(p route.Param) []any {
	vals := make([]any, len(p.Enum))
	for i, e := range p.Enum {
		vals[i] = typedValue(p.Type, e)
	}
	return vals
}

func typedDefault(p route.Param) any { return typedValue(p.Type, p.Default) }

func typedValue(t route.ParamType, s string) any {
	switch t {
	case route.Integer:
		if n, err := strconv.ParseInt(s, 10, 64); err == nil {
			return n
		}
	case route.Number:
		if f, err := strconv.ParseFloat(s, 64); err == nil {
			return f
		}
	case route.Boolean:
		return s == "true"
	}
	return s
}

// Schema converts a route schema to JSON Schema (OpenAPI 3.1 dialect).
func Schema(s *route.Schema) map[string]any {
	out := map[string]any{}
	if s.Type != "" {
		if s.Nullable {
			out["type"] = []any{s.Type, "null"}
		} else {
			out["type"] = s.Type
		}
	}
	if s.Description != "" {
		out["description"] = s.Description
	}
	if s.Format != "" {
		out["format"] = s.Format
	}
	if len(s.Enum) > 0 {
		vals := make([]any, 0, len(s.Enum)+1)
		for _, e := range s.Enum {
			vals = append(vals, e)
		}
		if s.Nullable {
			vals = append(vals, nil)
		}
		out["enum"] = vals
	}
	if s.Items != nil {
		out["items"] = Schema(s.Items)
	}
	if len(s.Properties) > 0 {
		props := map[string]any{}
		var required []any
		for _, p := range s.Properties {
			props[p.Name] = Schema(p.Schema)
			if !p.Optional {
				required = append(required, p.Name)
			}
		}
		out["properties"] = props
		if len(required) > 0 {
			out["required"] = required
		}
	}
	if s.AdditionalProperties != nil {
		out["additionalProperties"] = Schema(s.AdditionalProperties)
	}
	return out
}

func problemSchema() map[string]any {
	str := map[string]any{"type": "string"}
	return map[string]any{
		"type": "object",
		"properties": map[string]any{
			"type": str, "title": str, "status": map[string]any{"type": "integer"}, "detail": str, "instance": str,
			"message": str, "request_id": str,
			"config_key": map[string]any{"type": "string", "description": "the configuration key whose absence is the cause (type /problems/not-configured)"},
			"invalid_params": map[string]any{"type": "array", "items": map[string]any{
				"type": "object", "required": []any{"name", "reason"},
				"properties": map[string]any{"name": str, "reason": str},
			}},
		},
		"required": []any{"type", "title", "status", "detail", "message"},
	}
}
