package cosmos

import (
	"sync/atomic"

	"google.golang.org/protobuf/types/descriptorpb"

	"github.com/chainlens/chainlens/chains"
)

// Adapter is the generic cosmos-sdk adapter: bank movements and staking and
// distribution actions of any cosmos chain. Chain kinds with modules of
// their own embed it and add their tables.
type Adapter struct {
	kind   string
	prefix string
	// shipped names the kind's shipped descriptor sets; extra are more a
	// chain is configured with.
	shipped []string
	extra   []*descriptorpb.FileDescriptorSet
	dec     *atomic.Pointer[decoders]
}

var _ chains.Adapter = (*Adapter)(nil)

// NewAdapter returns the generic adapter for a kind with its bech32 prefix;
// its messages are decoded with the named shipped descriptor sets (the
// chain's own modules) and the common one.
func NewAdapter(kind, bech32Prefix string, descriptorSets ...string) *Adapter {
	return &Adapter{kind: kind, prefix: bech32Prefix, shipped: descriptorSets, dec: newDecoders(descriptorSets...)}
}

// Kind is the configured chain kind.
func (a *Adapter) Kind() string { return a.kind }

// Decode decodes a height with the kind's prefix and message registry.
func (a *Adapter) Decode(raw chains.RawBlock, enc chains.AttrEncoding) (*chains.Block, error) {
	return DecodeBlock(raw, Options{Bech32Prefix: a.prefix, Attrs: enc, Registry: a.MessageDecoderAt(raw.Height)})
}

// Tables lists the generic domain tables.
func (a *Adapter) Tables() []chains.Table {
	return []chains.Table{transfersTable, balanceTable, stakingTable, govTable, ibcPacketsTable, ibcTracesTable, mintTable, blockRewardsTable}
}

// Rows appends bank and staking rows.
func (a *Adapter) Rows(b *chains.Block, out *chains.Rows) error {
	for _, rows := range []func(*chains.Block, *chains.Rows) error{bankRows, balanceRows, stakingRows, govRows, ibcRows, mintRows, blockRewardRows} {
		if err := rows(b, out); err != nil {
			return err
		}
	}
	return nil
}

// eachEvent calls fn for every block-level and tx event of b, in order,
// but the repeats of ante-handler events (see chains.Event.Repeat).
func eachEvent(b *chains.Block, fn func(ev *chains.Event) error) error {
	for i := range b.Events {
		if err := fn(&b.Events[i]); err != nil {
			return err
		}
	}
	for t := range b.Txs {
		for i := range b.Txs[t].Events {
			if b.Txs[t].Events[i].Repeat {
				continue
			}
			if err := fn(&b.Txs[t].Events[i]); err != nil {
				return err
			}
		}
	}
	return nil
}

// Bech32Prefix is the prefix of the chain's account addresses.
func (a *Adapter) Bech32Prefix() string { return a.prefix }
