// Package synthcomet is what the generated CometBFT chains (synthdydx,
// synthosmosis) share: blocks, commits and block results built with
// CometBFT's own types and encoded as its RPC encodes them, the window of
// recent blocks a replaynode serves, and txs encoded with the chain's real
// protobuf types in the SDK's tx envelope. A chain package supplies the
// state and the txs of each block.
package synthcomet

import (
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	abci "github.com/cometbft/cometbft/abci/types"
	cmtjson "github.com/cometbft/cometbft/libs/json"
	cmtproto "github.com/cometbft/cometbft/proto/tendermint/types"
	cmtversion "github.com/cometbft/cometbft/proto/tendermint/version"
	cmttypes "github.com/cometbft/cometbft/types"

	"github.com/chainlens/chainlens/devchain/replaynode"
)

// Builder collects a block's txs and their results.
type Builder struct {
	Txs     []cmttypes.Tx
	Results []*abci.ExecTxResult
}

// Add appends a tx and its result.
func (b *Builder) Add(tx []byte, r *abci.ExecTxResult) {
	b.Txs = append(b.Txs, tx)
	b.Results = append(b.Results, r)
}

// Sealer turns a height's txs into the block, its last commit and its
// results, chaining each block to the one before.
type Sealer struct {
	chainID string
	vals    *cmttypes.ValidatorSet
	rng     *rand.Rand // signatures and app hashes; shared with the chain's generator

	height        int64
	lastID        cmttypes.BlockID
	last          time.Time
	results       []*abci.ExecTxResult // the last block's, for last_results_hash
	appHash       []byte               // the app hash after the last block
	valHash       []byte               // the set never changes
	params        cmtproto.ConsensusParams
	paramsJSON    []byte // params as block_results' consensus_param_updates
	consensusHash []byte
}

// NewSealer starts a chain at genesis time: the first block sealed is
// height 1.
func NewSealer(chainID string, vals *cmttypes.ValidatorSet, rng *rand.Rand, genesis time.Time, params cmtproto.ConsensusParams) (*Sealer, error) {
	s := &Sealer{chainID: chainID, vals: vals, rng: rng, last: genesis, params: params, valHash: vals.Hash()}
	s.consensusHash = cmttypes.ConsensusParamsFromProto(params).Hash()
	var err error
	if s.paramsJSON, err = cmtjson.Marshal(&s.params); err != nil {
		return nil, fmt.Errorf("synthcomet: encode consensus params: %w", err)
	}
	return s, nil
}

// Params are the consensus params every block_results repeats.
func (s *Sealer) Params() *cmtproto.ConsensusParams { return &s.params }

// Height is the last height sealed (0 before the first).
func (s *Sealer) Height() int64 { return s.height }

// Seal builds block h at time t with CometBFT's types: header hashes, the
// part set, the last commit of every validator (round-robin proposer), and
// encodes it and its results as the RPC does.
func (s *Sealer) Seal(h int64, t time.Time, b *Builder, finalize []abci.Event) (*replaynode.Block, error) {
	commit := &cmttypes.Commit{Signatures: []cmttypes.CommitSig{}}
	if h > 1 {
		commit = &cmttypes.Commit{Height: h - 1, BlockID: s.lastID}
		for _, v := range s.vals.Validators {
			sig := RandomBytes(s.rng, 64) // drawn before the timestamp: the chains' bytes depend on the order
			commit.Signatures = append(commit.Signatures, cmttypes.CommitSig{BlockIDFlag: cmttypes.BlockIDFlagCommit,
				ValidatorAddress: v.Address, Timestamp: s.last.Add(time.Duration(100+s.rng.IntN(400)) * time.Millisecond),
				Signature: sig})
		}
	}
	block := cmttypes.MakeBlock(h, b.Txs, commit, nil)
	block.Evidence.Evidence = cmttypes.EvidenceList{}
	valHash := s.valHash
	proposer := s.vals.Validators[int(h)%len(s.vals.Validators)].Address
	block.Header.Populate(cmtversion.Consensus{Block: 11}, s.chainID, t, s.lastID, valHash, valHash,
		s.consensusHash, s.appHash, cmttypes.NewResults(s.results).Hash(), proposer)
	parts, err := block.MakePartSet(cmttypes.BlockPartSizeBytes)
	if err != nil {
		return nil, fmt.Errorf("synthcomet: height %d: part set: %w", h, err)
	}
	id := cmttypes.BlockID{Hash: block.Hash(), PartSetHeader: parts.Header()}
	appHash := RandomBytes(s.rng, 32)
	results := ResultsJSON(h, b.Results, finalize, s.paramsJSON, appHash)
	pb, err := block.ToProto()
	if err != nil {
		return nil, fmt.Errorf("synthcomet: height %d: %w", h, err)
	}
	header := appendHeader(nil, &block.Header)
	blockJSON := blockJSON(id, block)
	meta := metaJSON(id, pb.Size(), header, len(b.Txs))
	s.height, s.lastID, s.last, s.results, s.appHash = h, id, t, b.Results, appHash
	return &replaynode.Block{Height: h, Block: blockJSON, Results: results, Header: header, Meta: meta,
		Hash: UpperHex(id.Hash), AppHash: UpperHex(block.Header.AppHash), Time: t.Format(time.RFC3339Nano),
		NumTxs: len(b.Txs), ResAppHash: base64.StdEncoding.EncodeToString(appHash)}, nil
}

// RandomBytes are n bytes of rng, eight at a time, little-endian.
func RandomBytes(rng *rand.Rand, n int) []byte {
	out := make([]byte, n)
	for i := 0; i < n; i += 8 {
		v := rng.Uint64()
		for j := 0; j < 8 && i+j < n; j++ {
			out[i+j] = byte(v >> (8 * j))
		}
	}
	return out
}

// UpperHex is CometBFT's rendering of a hash.
func UpperHex(b []byte) string { return strings.ToUpper(hex.EncodeToString(b)) }

// BlockTime is the time of a height: one block time apart from genesis,
// with up to 150 ms of the proposer's jitter (a function of the seed and
// height, so that a height's time is known before it is generated).
func BlockTime(genesis time.Time, blockTime time.Duration, seed uint64, height int64) time.Time {
	z := seed ^ uint64(height)*0x9e3779b97f4a7c15
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	z ^= z >> 31
	jitter := time.Duration(z%150) * time.Millisecond
	return genesis.Add(time.Duration(height)*blockTime + jitter).UTC()
}
