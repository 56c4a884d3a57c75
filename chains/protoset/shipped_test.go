package protoset

import (
	"strings"
	"testing"

	"google.golang.org/protobuf/types/descriptorpb"
)

// Every shipped set loads, holds what sets.json says it was built with
// (files and message types), pins each module's hash, and builds a registry
// with the common set without leaving a file out.
func TestShippedSets(t *testing.T) {
	sets, err := ShippedSets()
	if err != nil {
		t.Fatal(err)
	}
	if len(sets) == 0 || sets[0].Name != Common {
		t.Fatalf("sets.json must list the common set %q first: %+v", Common, sets)
	}
	for _, s := range sets {
		t.Run(s.Name, func(t *testing.T) {
			fds, err := Shipped(s.Name)
			if err != nil {
				t.Fatal(err)
			}
			files, msgs := len(fds.GetFile()), 0
			for _, f := range fds.GetFile() {
				msgs += countTypes(f.GetMessageType())
			}
			if files != s.Files || msgs != s.Messages || files == 0 {
				t.Errorf("%d files, %d message types; sets.json says %d, %d (rebuild with scripts/protosets.sh)", files, msgs, s.Files, s.Messages)
			}
			for _, m := range s.Modules {
				if !strings.HasPrefix(m.Sum, "h1:") {
					t.Errorf("%s@%s: no pinned hash", m.Path, m.Version)
				}
			}
			var r *Registry
			if s.Name == Common {
				r, err = NewShipped()
			} else {
				r, err = NewShipped(s.Name)
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(r.Skipped) > 0 {
				t.Errorf("files left out: %v", r.Skipped)
			}
		})
	}
	if _, err := Shipped("../sets/cosmos"); err == nil {
		t.Error("a path is not a set name")
	}
	if _, err := NewShipped("nope"); err == nil || !strings.Contains(err.Error(), `"nope" is not shipped`) {
		t.Errorf("unknown set: %v", err)
	}
}

// countTypes counts message types, nested ones included, map entries not.
func countTypes(ms []*descriptorpb.DescriptorProto) int {
	n := 0
	for _, m := range ms {
		if !m.GetOptions().GetMapEntry() {
			n++
		}
		n += countTypes(m.GetNestedType())
	}
	return n
}
