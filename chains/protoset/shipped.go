package protoset

import (
	"bytes"
	"compress/gzip"
	"embed"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/descriptorpb"
)

// shipped holds the descriptor sets built by `chainlens-dev protosets`
// from the modules and versions sets.json names.
//
//go:embed sets/*.binpb.gz sets/sets.json
var shipped embed.FS

// Common is the shipped set every cosmos chain uses (cosmos-sdk, CometBFT,
// ibc-go, wasmd, Interchain Security).
const Common = "cosmos"

// ShippedSet is what sets.json says of one shipped set.
type ShippedSet struct {
	Name    string `json:"name"`
	About   string `json:"about"`
	Modules []struct {
		Path    string `json:"path"`
		Version string `json:"version"`
		Sum     string `json:"sum"`
	} `json:"modules"`
	Protos   []string `json:"protos"`
	Files    int      `json:"files"`
	Messages int      `json:"messages"`
}

// ShippedSets lists the shipped sets with the module versions they were
// built from.
func ShippedSets() ([]ShippedSet, error) {
	b, err := shipped.ReadFile("sets/sets.json")
	if err != nil {
		return nil, err
	}
	var man struct{ Sets []ShippedSet }
	if err := json.Unmarshal(b, &man); err != nil {
		return nil, fmt.Errorf("sets.json: %w", err)
	}
	return man.Sets, nil
}

// Shipped returns a shipped set by name.
func Shipped(name string) (*descriptorpb.FileDescriptorSet, error) {
	if strings.ContainsAny(name, "/\\.") {
		return nil, fmt.Errorf("descriptor set %q: not a set name", name)
	}
	gz, err := shipped.ReadFile("sets/" + name + ".binpb.gz")
	if err != nil {
		return nil, fmt.Errorf("descriptor set %q is not shipped", name)
	}
	return DecodeSet(gz)
}

// Gunzip returns b uncompressed when it is gzipped, else b itself
// (descriptors travel both ways).
func Gunzip(b []byte) ([]byte, error) {
	if len(b) < 2 || b[0] != 0x1f || b[1] != 0x8b {
		return b, nil
	}
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	return io.ReadAll(zr)
}

// DecodeSet decodes a FileDescriptorSet, gzipped or not.
func DecodeSet(b []byte) (*descriptorpb.FileDescriptorSet, error) {
	b, err := Gunzip(b)
	if err != nil {
		return nil, fmt.Errorf("descriptor set: %w", err)
	}
	set := &descriptorpb.FileDescriptorSet{}
	if err := proto.Unmarshal(b, set); err != nil {
		return nil, fmt.Errorf("descriptor set: %w", err)
	}
	return set, nil
}

// NewShipped builds a registry of the named shipped sets followed by the
// common one.
func NewShipped(names ...string) (*Registry, error) {
	var sets []*descriptorpb.FileDescriptorSet
	for _, n := range append(names, Common) {
		s, err := Shipped(n)
		if err != nil {
			return nil, err
		}
		sets = append(sets, s)
	}
	return New(sets...)
}
