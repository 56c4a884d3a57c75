package cosmos

import (
	"fmt"

	"github.com/chainlens/chainlens/chains/protoset"
)

// Registry decodes a chain's messages to the proto3 JSON the chain writes,
// from protobuf descriptors (see protoset).
type Registry = protoset.Registry

// ErrUnknownType is returned by Registry.MessageJSON for a type URL the
// registry does not know.
var ErrUnknownType = protoset.ErrUnknownType

// NewRegistry returns the registry of the named shipped descriptor sets
// (a chain's own modules) followed by the common one (cosmos-sdk, ibc-go,
// wasmd, ...). The sets are embedded in the binary, so a missing one is a
// build defect: it panics, and the protoset tests catch it first.
func NewRegistry(sets ...string) *Registry {
	r, err := protoset.NewShipped(sets...)
	if err != nil {
		panic(fmt.Sprintf("shipped descriptor sets %v: %v", sets, err))
	}
	return r
}
