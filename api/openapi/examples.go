package openapi

import (
	_ "embed"
	"encoding/json"
	"fmt"
)

// examplesJSON holds, per operation ("GET /path"), a real answer of the
// recorded localnets (arrays cut to their first two items), written by
// `go test ./internal/golden -run TestOpenAPIExamples -update-examples`
// and checked there to validate against the operation's schema.
//
//go:embed examples.json
var examplesJSON []byte

// examples parses examplesJSON once.
var examples = func() map[string]json.RawMessage {
	m := map[string]json.RawMessage{}
	if err := json.Unmarshal(examplesJSON, &m); err != nil {
		panic(fmt.Sprintf("api/openapi/examples.json: %v", err)) // a broken embedded file fails every test
	}
	return m
}()

// Trim cuts every array in v to its first n items, for an example.
func Trim(v any, n int) any {
	switch t := v.(type) {
	case []any:
		if len(t) > n {
			t = t[:n]
		}
		for i := range t {
			t[i] = Trim(t[i], n)
		}
		return t
	case map[string]any:
		for k, x := range t {
			t[k] = Trim(x, n)
		}
		return t
	}
	return v
}
