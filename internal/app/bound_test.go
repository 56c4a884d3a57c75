package app

import (
	"testing"

	"github.com/chainlens/chainlens/api/route"
	"github.com/chainlens/chainlens/config"
)

// TestEveryOperationIsBound: every operation of the route table has a
// handler in some domain, and no domain binds an operation twice or one
// the table lacks; domain names are unique.
func TestEveryOperationIsBound(t *testing.T) {
	cfg, err := config.Parse([]byte("database: {url: postgres://postgres@127.0.0.1:5432/x}\n"), "", nil)
	if err != nil {
		t.Fatal(err)
	}
	bound := map[route.ID]string{} // operation → domain
	names := map[string]bool{}
	for _, d := range domains() {
		if names[d.name] {
			t.Errorf("domain %s listed twice", d.name)
		}
		names[d.name] = true
		if d.handlers == nil {
			continue
		}
		one := newHandlers()
		d.handlers(cfg, nil, Deps{}, one)
		for id := range one.JSON {
			if prev, ok := bound[id]; ok {
				t.Errorf("%s bound by %s and %s", id, prev, d.name)
			}
			bound[id] = d.name
		}
		for id := range one.Raw {
			if prev, ok := bound[id]; ok {
				t.Errorf("%s bound by %s and %s", id, prev, d.name)
			}
			bound[id] = d.name
		}
	}
	ops := map[route.ID]bool{}
	for _, op := range route.Table() {
		ops[op.ID()] = true
		if _, ok := bound[op.ID()]; !ok {
			t.Errorf("%s has no handler", op.ID())
		}
	}
	for id, d := range bound {
		if !ops[id] {
			t.Errorf("%s (domain %s) is not in the route table", id, d)
		}
	}
	if len(ops) != 102 {
		t.Errorf("%d operations, want the interface's 102", len(ops))
	}
}
