package api

import (
	"fmt"

	"github.com/chainlens/chainlens/api/problem"
	"github.com/chainlens/chainlens/config"
)

// NoSnapshot is the answer of an endpoint built on the state snapshots of
// ch when none of what it needs is stored: state snapshots are off
// (snapshot_every 0), which only the operator can change, or on and none
// taken yet, which indexing brings.
func NoSnapshot(ch config.Chain, what string) error {
	if ch.SnapshotEvery == 0 {
		return problem.NotConfigured("chains["+ch.ID+"].snapshot_every", "no "+what+" of "+ch.ID+" is stored and its state snapshots are off")
	}
	return fmt.Errorf("no %s of %s is stored yet (a state snapshot every %d heights): %w", what, ch.ID, ch.SnapshotEvery, problem.ErrNotIndexed)
}

// NoChainOfKind is the answer of a group whose chain kind no configured
// chain has: the configuration's chains list is what is missing.
func NoChainOfKind(kind string) error {
	return problem.NotConfigured("chains", "no chain of kind "+kind+" is configured")
}
