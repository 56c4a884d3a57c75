package indexer

import (
	"context"
	"sync/atomic"

	"github.com/chainlens/chainlens/chains"
)

// ValidatorsSource is a node that serves the validator set at a height
// (CometBFT /validators), in the set's order.
type ValidatorsSource interface {
	Validators(ctx context.Context, height int64) ([]chains.SetMember, error)
}

func (s clientSource) Validators(ctx context.Context, height int64) ([]chains.SetMember, error) {
	vs, err := s.c.Validators(ctx, height)
	if err != nil {
		return nil, err
	}
	out := make([]chains.SetMember, len(vs))
	for i, v := range vs {
		out[i] = chains.SetMember{Validator: v.Address, Power: v.Power}
	}
	return out, nil
}

// commitSet is the validator set a fetched height's last commit was
// signed by, or why it is missing.
type commitSet struct {
	height  int64
	members []chains.SetMember
	err     error
}

// maxValidatorSetFailures is how many heights in a row may go without
// their validator set before the indexer stops asking the node (one that
// does not serve /validators, or has pruned them).
const maxValidatorSetFailures = 20

// validatorSetState counts the heights in a row whose set was missing.
type validatorSetState struct{ failures atomic.Int64 }

func (s *validatorSetState) wanted() bool { return s.failures.Load() < maxValidatorSetFailures }

// attributeCommit fills a block's commit votes from the validator set
// fetched with it: the absent validators and every vote's power. Without
// a usable set the votes keep what the block says (signers' addresses,
// flags) and no power.
func (x *Cosmos) attributeCommit(b *chains.Block, set *commitSet) {
	if set == nil || len(b.Signatures) == 0 {
		return
	}
	err := set.err
	if err == nil && b.CommitHeight != set.height {
		return // not the usual h-1 commit: leave it as the block says
	}
	if err == nil {
		err = b.AttributeCommit(set.members)
	}
	if err != nil {
		if n := x.validatorSets.failures.Add(1); n == maxValidatorSetFailures {
			x.log.Warn("the node serves no validator sets: commit votes are stored without power and absent validators", "err", err)
		}
		return
	}
	x.validatorSets.failures.Store(0)
}
