package synthcomet

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	abci "github.com/cometbft/cometbft/abci/types"
	"github.com/cometbft/cometbft/crypto/ed25519"
	cmtjson "github.com/cometbft/cometbft/libs/json"
	cmtproto "github.com/cometbft/cometbft/proto/tendermint/types"
	coretypes "github.com/cometbft/cometbft/rpc/core/types"
	cmttypes "github.com/cometbft/cometbft/types"
)

// TestBlockJSONIsCometBFTs: the block, header and meta Seal writes by hand
// are the bytes CometBFT's encoder writes for the same values (decoded by
// CometBFT and encoded again), for a first block (empty commit), blocks
// without txs and with txs of every size, times with and without
// fractional seconds.
func TestBlockJSONIsCometBFTs(t *testing.T) {
	var vals []*cmttypes.Validator
	for i := range 7 {
		vals = append(vals, cmttypes.NewValidator(ed25519.GenPrivKeyFromSecret([]byte(fmt.Sprint(i))).PubKey(), int64(10+i)))
	}
	rng := rand.New(rand.NewPCG(1, 2))
	s, err := NewSealer("chain-<&>\"1", cmttypes.NewValidatorSet(vals), rng, time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC),
		cmtproto.ConsensusParams{Block: &cmtproto.BlockParams{MaxBytes: 1, MaxGas: -1}, Evidence: &cmtproto.EvidenceParams{},
			Validator: &cmtproto.ValidatorParams{PubKeyTypes: []string{"ed25519"}}, Version: &cmtproto.VersionParams{}, Abci: &cmtproto.ABCIParams{}})
	if err != nil {
		t.Fatal(err)
	}
	for h := int64(1); h <= 40; h++ {
		b := &Builder{}
		for i := range int(h % 5) { // every fifth block has no tx
			b.Add(RandomBytes(rng, 1+int(h)*37*i), &abci.ExecTxResult{})
		}
		at := time.Date(2026, 1, 1, 0, 0, int(h), 0, time.UTC)
		if h%3 != 0 {
			at = at.Add(time.Duration(rng.IntN(1e9)))
		}
		got, err := s.Seal(h, at, b, nil)
		if err != nil {
			t.Fatal(err)
		}
		var rb coretypes.ResultBlock
		if err := cmtjson.Unmarshal(got.Block, &rb); err != nil {
			t.Fatalf("height %d: %v", h, err)
		}
		// A decoded empty list is nil, which CometBFT writes as null; a
		// node writes the lists of its blocks as [] (the recorded
		// localnets' empty blocks: "txs":[]).
		if rb.Block.Evidence.Evidence == nil {
			rb.Block.Evidence.Evidence = cmttypes.EvidenceList{}
		}
		if rb.Block.LastCommit.Signatures == nil {
			rb.Block.LastCommit.Signatures = []cmttypes.CommitSig{}
		}
		if rb.Block.Txs == nil {
			rb.Block.Txs = cmttypes.Txs{}
		}
		for _, c := range []struct {
			what string
			ours []byte
			v    any
		}{
			{"block", got.Block, &rb},
			{"header", got.Header, rb.Block.Header},
			{"meta", got.Meta, cmttypes.BlockMeta{BlockID: rb.BlockID, BlockSize: blockSize(t, rb.Block), Header: rb.Block.Header, NumTxs: len(rb.Block.Txs)}},
		} {
			want, err := cmtjson.Marshal(c.v)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(c.ours, want) {
				t.Fatalf("height %d %s:\nours:      %s\nCometBFT's: %s", h, c.what, c.ours, want)
			}
		}
		if fmt.Sprintf("%X", rb.Block.Hash()) != got.Hash {
			t.Fatalf("height %d: hash %s, header hashes to %X", h, got.Hash, rb.Block.Hash())
		}
	}
}

func blockSize(t *testing.T, b *cmttypes.Block) int {
	pb, err := b.ToProto()
	if err != nil {
		t.Fatal(err)
	}
	return pb.Size()
}
