package protoset

import (
	"encoding/json"
	"reflect"
	"sync"
	"testing"
)

// registry returns the common shipped set's registry, built once for the
// tests (it is immutable).
var registry = sync.OnceValue(func() *Registry {
	r, err := NewShipped()
	if err != nil {
		panic(err)
	}
	return r
})

// assertJSONEqual compares JSON by value (key order and spacing aside).
func assertJSONEqual(t *testing.T, got json.RawMessage, want string) {
	t.Helper()
	var g, w any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatalf("got %s: %v", got, err)
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatalf("want %s: %v", want, err)
	}
	if !reflect.DeepEqual(g, w) {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}
