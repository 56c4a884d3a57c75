package indexer

import (
	"context"
	"crypto/sha256"
	"fmt"
	"strconv"
	"strings"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"

	"github.com/chainlens/chainlens/chains"
)

// A block's last commit is stored as one commit_votes row — the set's hash
// and one flag byte per validator index — and its validator set once, in
// validator_sets. A row per vote (the commit_signatures of migration 14)
// made the votes the largest table of a chain with many validators: 150
// votes of ~320 bytes with their indexes, 48 KB a block, 2 GB a day at
// Osmosis's rate; a commit_votes row is ~200 bytes. The view
// commit_signatures (migration 27) still reads them a vote per row.

// validatorSet is the set a commit's votes are indexed by: the consensus
// addresses and voting powers, or, when the node did not serve the set,
// the addresses the votes carry (empty for an absent vote) and no powers.
type validatorSet struct {
	hash       []byte
	validators []string
	powers     []int64 // nil: unknown
}

// commitVotes splits a commit into its validator set and its flags.
func commitVotes(sigs []chains.CommitSig) (validatorSet, []byte) {
	set := validatorSet{validators: make([]string, len(sigs))}
	known := true
	for _, s := range sigs {
		known = known && s.Power >= 0
	}
	if known {
		set.powers = make([]int64, len(sigs))
	}
	flags := make([]byte, len(sigs))
	for i, s := range sigs {
		set.validators[i] = s.Validator
		if known {
			set.powers[i] = s.Power
		}
		flags[i] = byte(s.Flag)
	}
	set.hash = setHash(set.validators, set.powers)
	return set, flags
}

// setHash is the SHA-256 of "address:power,address:power,..." (an unknown
// power written as nothing): migration 27 computes the same in SQL for the
// votes it moves.
func setHash(validators []string, powers []int64) []byte {
	var b strings.Builder
	for i, v := range validators {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(v)
		b.WriteByte(':')
		if powers != nil {
			b.WriteString(strconv.FormatInt(powers[i], 10))
		}
	}
	sum := sha256.Sum256([]byte(b.String()))
	return sum[:]
}

// writeValidatorSets stores the distinct validator sets of a batch's blocks
// that are not stored yet, each committed on its own before the batch's
// transaction opens: a set is immutable and named by its hash, so one left
// by a batch that then fails is harmless, and a commit_votes row never
// names a set that is not there. Inserting them in the batch's
// transaction instead would deadlock batches written concurrently: a later
// batch holding a new set's row lock while an earlier one waits for it,
// and the later one waits for the earlier one's commit to move the
// checkpoint.
func writeValidatorSets(ctx context.Context, db bun.IDB, chainID string, blocks []*chains.Block) error {
	seen := map[string]bool{}
	for _, b := range blocks {
		if len(b.Signatures) == 0 {
			continue
		}
		set, _ := commitVotes(b.Signatures)
		if seen[string(set.hash)] {
			continue
		}
		seen[string(set.hash)] = true
		var powers any // NULL: unknown
		if set.powers != nil {
			powers = pgdialect.Array(set.powers)
		}
		if _, err := db.NewRaw(`INSERT INTO validator_sets (chain_id, hash, validators, powers) VALUES (?, ?, ?, ?)
			ON CONFLICT (chain_id, hash) DO NOTHING`, chainID, set.hash, pgdialect.Array(set.validators), powers).Exec(ctx); err != nil {
			return fmt.Errorf("validator set: %w", err)
		}
	}
	return nil
}
