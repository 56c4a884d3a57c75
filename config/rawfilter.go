package config

import (
	"strconv"
	"strings"
)

// RawFilter chooses which messages and events of a chain are kept in the
// raw tables (messages and their addresses, events). Blocks, txs and every
// domain row are always written, from the whole height. A filter starves
// the reports built from the raw rows it drops: `chainlens run` and
// `index` name them at start.
type RawFilter struct {
	Messages TypeFilter `yaml:"messages"` // by type URL
	Events   TypeFilter `yaml:"events"`   // by event type
}

// TypeFilter keeps the types Include lists (every type when it is empty),
// then drops those Exclude lists. A pattern is a type, or a prefix ending
// in * ("/ibc.core.client.v1.*", "wasm-*").
type TypeFilter struct {
	Include []string `yaml:"include"`
	Exclude []string `yaml:"exclude"`
}

// Keeps reports whether the filter keeps type t.
func (f TypeFilter) Keeps(t string) bool {
	if len(f.Include) > 0 && !matchAny(f.Include, t) {
		return false
	}
	return !matchAny(f.Exclude, t)
}

// IsZero reports whether the filter keeps every type.
func (f TypeFilter) IsZero() bool { return len(f.Include) == 0 && len(f.Exclude) == 0 }

// IsZero reports whether the filter keeps everything.
func (r *RawFilter) IsZero() bool { return r == nil || (r.Messages.IsZero() && r.Events.IsZero()) }

func matchAny(patterns []string, t string) bool {
	for _, p := range patterns {
		if prefix, ok := strings.CutSuffix(p, "*"); ok {
			if strings.HasPrefix(t, prefix) {
				return true
			}
		} else if p == t {
			return true
		}
	}
	return false
}

// validate checks the patterns: not empty, * only at the end.
func (r *RawFilter) validate(key string, bad func(k, format string, args ...any)) {
	if r == nil {
		return
	}
	for _, f := range []struct {
		k string
		f TypeFilter
	}{{".messages", r.Messages}, {".events", r.Events}} {
		for _, list := range []struct {
			k  string
			ps []string
		}{{".include", f.f.Include}, {".exclude", f.f.Exclude}} {
			for i, p := range list.ps {
				if p == "" || p == "*" || strings.Contains(strings.TrimSuffix(p, "*"), "*") || strings.ContainsAny(p, " \t") {
					bad(key+f.k+list.k+"["+strconv.Itoa(i)+"]", "%q must be a type, or a prefix followed by one trailing *", p)
				}
			}
		}
	}
}
