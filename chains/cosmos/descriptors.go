package cosmos

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync/atomic"

	"google.golang.org/protobuf/types/descriptorpb"

	"github.com/chainlens/chainlens/chains"
	"github.com/chainlens/chainlens/chains/protoset"
)

// decoders are the message decoders of a chain: the shipped sets alone,
// and one per application version of the node's descriptors, from the
// height that version was first seen. Immutable once built; the adapter
// swaps them whole.
type decoders struct {
	base     *Registry
	versions []versionDecoder // newest first
}

type versionDecoder struct {
	from int64
	reg  *Registry
}

// at is the decoder of a height: the node's version in effect there (the
// newest first seen at or below it; below every version, the oldest), then
// for a type that version lacks the other versions, newest first, then the
// shipped sets.
func (d *decoders) at(height int64) chains.MessageDecoder {
	if len(d.versions) == 0 {
		return d.base
	}
	i := slices.IndexFunc(d.versions, func(v versionDecoder) bool { return v.from <= height })
	if i < 0 {
		i = len(d.versions) - 1
	}
	chain := make([]*Registry, 0, len(d.versions)+1)
	chain = append(chain, d.versions[i].reg)
	for j, v := range d.versions {
		if j != i {
			chain = append(chain, v.reg)
		}
	}
	return fallback(append(chain, d.base))
}

// fallback decodes with the first registry that knows the type.
type fallback []*Registry

func (f fallback) Decode(typeURL string, value []byte) (json.RawMessage, bool, error) {
	var err error
	for _, r := range f {
		var body json.RawMessage
		var complete bool
		if body, complete, err = r.Decode(typeURL, value); !errors.Is(err, protoset.ErrUnknownType) {
			return body, complete, err
		}
	}
	return nil, false, err
}

// shippedSets are the adapter's shipped sets, extras first, then its
// own, then the common one.
func (a *Adapter) shippedSets() ([]*descriptorpb.FileDescriptorSet, error) {
	all := slices.Clone(a.extra)
	for _, n := range append(slices.Clone(a.shipped), protoset.Common) {
		s, err := protoset.Shipped(n)
		if err != nil {
			return nil, err
		}
		all = append(all, s)
	}
	return all, nil
}

// AddDescriptors makes the adapter decode with these descriptor sets
// before its shipped ones (shipped sets a chain is configured with). Call
// it before the first Decode.
func (a *Adapter) AddDescriptors(sets ...*descriptorpb.FileDescriptorSet) error {
	a.extra = append(a.extra, sets...)
	all, err := a.shippedSets()
	if err != nil {
		return err
	}
	base, err := protoset.New(all...)
	if err != nil {
		return fmt.Errorf("%s descriptors: %w", a.kind, err)
	}
	cur := a.current()
	a.dec.Store(&decoders{base: base, versions: cur.versions})
	return nil
}

// UseNodeDescriptors makes the adapter decode each height with the node's
// descriptors of the application version in effect there, before its
// shipped sets. It may be called while the adapter decodes (after an
// upgrade): heights decoded from then on use the new versions.
func (a *Adapter) UseNodeDescriptors(versions []chains.NodeDescriptors) error {
	all, err := a.shippedSets()
	if err != nil {
		return err
	}
	cur := a.current()
	vs := make([]versionDecoder, 0, len(versions))
	for _, v := range versions {
		reg, err := protoset.New(append([]*descriptorpb.FileDescriptorSet{v.Set}, all...)...)
		if err != nil {
			return fmt.Errorf("%s descriptors of %s: %w", a.kind, v.AppVersion, err)
		}
		vs = append(vs, versionDecoder{from: v.FromHeight, reg: reg})
	}
	slices.SortStableFunc(vs, func(x, y versionDecoder) int { return int(y.from - x.from) })
	a.dec.Store(&decoders{base: cur.base, versions: vs})
	return nil
}

// MessageDecoderAt is the decoder of a height's messages.
func (a *Adapter) MessageDecoderAt(height int64) chains.MessageDecoder { return a.current().at(height) }

func (a *Adapter) current() *decoders { return a.dec.Load() }

// decodersOf is the adapter's initial decoders: its shipped sets.
func newDecoders(sets ...string) *atomic.Pointer[decoders] {
	var p atomic.Pointer[decoders]
	p.Store(&decoders{base: NewRegistry(sets...)})
	return &p
}
