package synthdydx

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"strconv"
	"time"

	sdkmath "cosmossdk.io/math"
	abci "github.com/cometbft/cometbft/abci/types"
	cmtjson "github.com/cometbft/cometbft/libs/json"
	cmtproto "github.com/cometbft/cometbft/proto/tendermint/types"
	cmtversion "github.com/cometbft/cometbft/proto/tendermint/version"
	coretypes "github.com/cometbft/cometbft/rpc/core/types"
	cmttypes "github.com/cometbft/cometbft/types"
	codectypes "github.com/cosmos/cosmos-sdk/codec/types"
	"github.com/cosmos/cosmos-sdk/crypto/keys/secp256k1"
	sdk "github.com/cosmos/cosmos-sdk/types"
	"github.com/cosmos/cosmos-sdk/types/bech32"
	sdktx "github.com/cosmos/cosmos-sdk/types/tx"
	"github.com/cosmos/cosmos-sdk/types/tx/signing"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/chainlens/chainlens/chains/protoset"
	"github.com/chainlens/chainlens/devchain/replaynode"
)

// Message type URLs of the generated txs.
const (
	msgProposedOperations = "/dydxprotocol.clob.MsgProposedOperations"
	msgPlaceOrder         = "/dydxprotocol.clob.MsgPlaceOrder"
	msgAcknowledgeBridges = "/dydxprotocol.bridge.MsgAcknowledgeBridges"
	msgAddPremiumVotes    = "/dydxprotocol.perpetuals.MsgAddPremiumVotes"
	msgUpdateMarketPrices = "/dydxprotocol.prices.MsgUpdateMarketPrices"
	msgDeposit            = "/dydxprotocol.sending.MsgDepositToSubaccount"
	msgWithdraw           = "/dydxprotocol.sending.MsgWithdrawFromSubaccount"
	msgCreateTransfer     = "/dydxprotocol.sending.MsgCreateTransfer"
)

// epoch is one of the x/epochs timers whose ticks are new_epoch events.
type epoch struct {
	name     string
	duration int64 // seconds
	offset   int64 // ticks at unix times ≡ offset (mod duration)
	next     int64 // unix time of the next tick
	number   int64
}

// generator makes the blocks of a chain in order.
type generator struct {
	p       Profile
	st      *state
	rng     *rand.Rand
	reg     *protoset.Registry
	height  int64
	lastID  cmttypes.BlockID
	last    time.Time
	results []*abci.ExecTxResult // the last block's, for last_results_hash
	appHash []byte               // the app hash after the last block
	epochs  []epoch
	fees    int64 // USDC the fee collector received in the last block
	// nextDepositor is the first trader that has not deposited yet.
	nextDepositor int
	// recent are the last takers (a ring), where liquidations are drawn.
	recent        [1024]recentTaker
	nextRecent    int
	params        cmtproto.ConsensusParams
	paramsJSON    []byte // params as block_results' consensus_param_updates
	consensusHash []byte
}

func newGenerator(p Profile, st *state, reg *protoset.Registry) *generator {
	g := &generator{p: p, st: st, reg: reg, rng: rand.New(rand.NewPCG(p.Seed, 0xd7d7)), last: p.Genesis}
	g.epochs = []epoch{{name: "funding-sample", duration: 60, offset: 30}, {name: "funding-tick", duration: 3600},
		{name: "stats-epoch", duration: 3600}}
	start := p.Genesis.Unix()
	for i := range g.epochs {
		e := &g.epochs[i]
		e.next = start - (start-e.offset)%e.duration + e.duration
	}
	g.params = cmtproto.ConsensusParams{
		Block:     &cmtproto.BlockParams{MaxBytes: 4194304, MaxGas: -1},
		Evidence:  &cmtproto.EvidenceParams{MaxAgeNumBlocks: 100000, MaxAgeDuration: 48 * time.Hour, MaxBytes: 1048576},
		Validator: &cmtproto.ValidatorParams{PubKeyTypes: []string{"ed25519"}},
		Version:   &cmtproto.VersionParams{},
		Abci:      &cmtproto.ABCIParams{VoteExtensionsEnableHeight: 1},
	}
	g.consensusHash = cmttypes.ConsensusParamsFromProto(g.params).Hash()
	var err error
	if g.paramsJSON, err = cmtjson.Marshal(&g.params); err != nil {
		panic(fmt.Sprintf("synthdydx: encode consensus params: %v", err)) // a fixed value: cannot fail
	}
	return g
}

// next generates the block after the last one.
func (g *generator) next() (*replaynode.Block, error) {
	h := g.height + 1
	t := g.p.blockTime(h)
	b := &blockBuilder{}
	if h > 1 {
		// The proposer's vote extensions: not a Cosmos tx; the chain
		// answers it with code 2 and no events.
		blob := make([]byte, g.p.VoteExtensionBytes)
		for i := 0; i < len(blob); i += 8 {
			v := g.rng.Uint64()
			for j := 0; j < 8 && i+j < len(blob); j++ {
				blob[i+j] = byte(v >> (8 * j))
			}
		}
		b.add(blob, &abci.ExecTxResult{Code: 2, Codespace: "sdk", Log: "tx parse error"})
	}
	fees := int64(0)
	if err := g.proposedOperations(h, b, &fees); err != nil {
		return nil, err
	}
	if err := g.userTxs(h, b, &fees); err != nil {
		return nil, err
	}
	if err := g.appTx(b, msgAcknowledgeBridges, "bridge", map[string]any{"events": []any{}}); err != nil {
		return nil, err
	}
	if err := g.appTx(b, msgAddPremiumVotes, "perpetuals", map[string]any{"votes": g.premiumVotes()}); err != nil {
		return nil, err
	}
	if err := g.appTx(b, msgUpdateMarketPrices, "prices", map[string]any{"market_price_updates": g.priceUpdates()}); err != nil {
		return nil, err
	}
	finalize := g.finalizeEvents(h, t)
	g.fees = fees
	return g.seal(h, t, b, finalize)
}

// blockBuilder collects a block's txs and their results.
type blockBuilder struct {
	txs     []cmttypes.Tx
	results []*abci.ExecTxResult
}

func (b *blockBuilder) add(tx []byte, r *abci.ExecTxResult) {
	b.txs = append(b.txs, tx)
	b.results = append(b.results, r)
}

// seal builds the block with CometBFT's types: header hashes, the part
// set, the last commit of every validator, and encodes it and its results
// as the RPC does.
func (g *generator) seal(h int64, t time.Time, b *blockBuilder, finalize []abci.Event) (*replaynode.Block, error) {
	commit := &cmttypes.Commit{Signatures: []cmttypes.CommitSig{}}
	if h > 1 {
		commit = &cmttypes.Commit{Height: h - 1, BlockID: g.lastID}
		for _, v := range g.st.vals.Validators {
			sig := make([]byte, 64)
			for i := 0; i < 64; i += 8 {
				v := g.rng.Uint64()
				for j := range 8 {
					sig[i+j] = byte(v >> (8 * j))
				}
			}
			commit.Signatures = append(commit.Signatures, cmttypes.CommitSig{BlockIDFlag: cmttypes.BlockIDFlagCommit,
				ValidatorAddress: v.Address, Timestamp: g.last.Add(time.Duration(100+g.rng.IntN(400)) * time.Millisecond), Signature: sig})
		}
	}
	block := cmttypes.MakeBlock(h, b.txs, commit, nil)
	block.Evidence.Evidence = cmttypes.EvidenceList{}
	valHash := g.st.vals.Hash()
	proposer := g.st.vals.Validators[int(h)%len(g.st.vals.Validators)].Address
	block.Header.Populate(cmtversion.Consensus{Block: 11}, g.p.ChainID, t, g.lastID, valHash, valHash,
		g.consensusHash, g.appHash, cmttypes.NewResults(g.results).Hash(), proposer)
	parts, err := block.MakePartSet(cmttypes.BlockPartSizeBytes)
	if err != nil {
		return nil, fmt.Errorf("synthdydx: height %d: part set: %w", h, err)
	}
	id := cmttypes.BlockID{Hash: block.Hash(), PartSetHeader: parts.Header()}
	appHash := make([]byte, 32)
	for i := 0; i < 32; i += 8 {
		v := g.rng.Uint64()
		for j := range 8 {
			appHash[i+j] = byte(v >> (8 * j))
		}
	}
	blockJSON, err := cmtjson.Marshal(&coretypes.ResultBlock{BlockID: id, Block: block})
	if err != nil {
		return nil, fmt.Errorf("synthdydx: height %d: encode block: %w", h, err)
	}
	results := resultsJSON(h, b.results, finalize, g.paramsJSON, appHash)
	pb, err := block.ToProto()
	if err != nil {
		return nil, fmt.Errorf("synthdydx: height %d: %w", h, err)
	}
	header, err := cmtjson.Marshal(block.Header)
	if err != nil {
		return nil, err
	}
	meta, err := cmtjson.Marshal(cmttypes.BlockMeta{BlockID: id, BlockSize: pb.Size(), Header: block.Header, NumTxs: len(b.txs)})
	if err != nil {
		return nil, err
	}
	g.height, g.lastID, g.last, g.results, g.appHash = h, id, t, b.results, appHash
	return &replaynode.Block{Height: h, Block: blockJSON, Results: results, Header: header, Meta: meta,
		Hash: upperHex(id.Hash), AppHash: upperHex(block.Header.AppHash), Time: t.Format(time.RFC3339Nano),
		NumTxs: len(b.txs), ResAppHash: b64(appHash)}, nil
}

// anyOf encodes a message given as proto3 JSON with its real protobuf type.
func (g *generator) anyOf(typeURL string, msg map[string]any) (*codectypes.Any, error) {
	mt, err := g.reg.FindMessageByURL(typeURL)
	if err != nil {
		return nil, fmt.Errorf("synthdydx: %s: %w", typeURL, err)
	}
	js, err := json.Marshal(msg)
	if err != nil {
		return nil, err
	}
	m := mt.New().Interface()
	if err := (protojson.UnmarshalOptions{Resolver: g.reg}).Unmarshal(js, m); err != nil {
		return nil, fmt.Errorf("synthdydx: %s %s: %w", typeURL, js, err)
	}
	b, err := proto.MarshalOptions{Deterministic: true}.Marshal(m)
	if err != nil {
		return nil, fmt.Errorf("synthdydx: %s: %w", typeURL, err)
	}
	return &codectypes.Any{TypeUrl: typeURL, Value: b}, nil
}

// txBytes is a TxRaw of one message: signed by a (with a fee of feeAmount
// USDC and gas limit gas) or, with a nil a, injected by the proposer
// (no signer, empty fee).
func (g *generator) txBytes(msg *codectypes.Any, a *account, gas uint64, feeAmount int64) ([]byte, error) {
	body, err := (&sdktx.TxBody{Messages: []*codectypes.Any{msg}}).Marshal()
	if err != nil {
		return nil, err
	}
	info := &sdktx.AuthInfo{Fee: &sdktx.Fee{}}
	var sigs [][]byte
	if a != nil {
		pk, err := (&secp256k1.PubKey{Key: a.pub}).Marshal()
		if err != nil {
			return nil, err
		}
		info.SignerInfos = []*sdktx.SignerInfo{{
			PublicKey: &codectypes.Any{TypeUrl: "/cosmos.crypto.secp256k1.PubKey", Value: pk},
			ModeInfo:  &sdktx.ModeInfo{Sum: &sdktx.ModeInfo_Single_{Single: &sdktx.ModeInfo_Single{Mode: signing.SignMode_SIGN_MODE_DIRECT}}},
			Sequence:  a.seq,
		}}
		info.Fee.GasLimit = gas
		if feeAmount > 0 {
			info.Fee.Amount = sdk.NewCoins(sdk.NewCoin(USDC, sdkmath.NewInt(feeAmount)))
		}
		sig := make([]byte, 64)
		for i := 0; i < 64; i += 8 {
			v := g.rng.Uint64()
			for j := range 8 {
				sig[i+j] = byte(v >> (8 * j))
			}
		}
		sigs = [][]byte{sig}
	}
	auth, err := info.Marshal()
	if err != nil {
		return nil, err
	}
	return (&sdktx.TxRaw{BodyBytes: body, AuthInfoBytes: auth, Signatures: sigs}).Marshal()
}

// msgData is a tx result's data: the TxMsgData with the message's response.
func msgData(typeURL string) []byte {
	b, _ := (&sdk.TxMsgData{MsgResponses: []*codectypes.Any{{TypeUrl: typeURL + "Response"}}}).Marshal()
	return b
}

// appTx adds one of the proposer's own txs (no signer, no fee).
func (g *generator) appTx(b *blockBuilder, typeURL, module string, msg map[string]any) error {
	m, err := g.anyOf(typeURL, msg)
	if err != nil {
		return err
	}
	tx, err := g.txBytes(m, nil, 0, 0)
	if err != nil {
		return err
	}
	b.add(tx, &abci.ExecTxResult{Data: msgData(typeURL), GasWanted: -1, Events: []abci.Event{
		event("message", "action", typeURL, "module", module, "msg_index", "0")}})
	return nil
}

// event is an ABCI event with indexed attributes, given as key, value, ...
func event(typ string, kv ...string) abci.Event {
	e := abci.Event{Type: typ, Attributes: make([]abci.EventAttribute, 0, len(kv)/2)}
	for i := 0; i+1 < len(kv); i += 2 {
		e.Attributes = append(e.Attributes, abci.EventAttribute{Key: kv[i], Value: kv[i+1], Index: true})
	}
	return e
}

// bankSend is the four events of a bank send (coin_spent, coin_received,
// transfer, message), with trailing attributes (msg_index, mode) on each.
func bankSend(from, to, amount string, tail ...string) []abci.Event {
	return []abci.Event{
		event("coin_spent", append([]string{"spender", from, "amount", amount}, tail...)...),
		event("coin_received", append([]string{"receiver", to, "amount", amount}, tail...)...),
		event("transfer", append([]string{"recipient", to, "sender", from, "amount", amount}, tail...)...),
		event("message", append([]string{"sender", from}, tail...)...),
	}
}

func usdc(q int64) string { return strconv.FormatInt(q, 10) + USDC }

func itoa(v int64) string { return strconv.FormatInt(v, 10) }

func b64(b []byte) string { return base64.StdEncoding.EncodeToString(b) }

// bech32Valoper is a validator's operator address; here the operator
// account is the consensus address's bytes.
func bech32Valoper(addr []byte) (string, error) { return bech32.ConvertAndEncode("dydxvaloper", addr) }

// poisson draws a Poisson count with mean lambda (Knuth's method; the
// means here are small).
func poisson(rng *rand.Rand, lambda float64) int {
	if lambda <= 0 {
		return 0
	}
	l, k, p := math.Exp(-lambda), 0, 1.0
	for {
		p *= rng.Float64()
		if p <= l {
			return k
		}
		k++
	}
}

// finalizeEvents are the block's own events: the epochs that tick at t,
// and the distribution of the fees the fee collector received in the last
// block (commission and rewards per validator, by voting power).
func (g *generator) finalizeEvents(h int64, t time.Time) []abci.Event {
	var out []abci.Event // a node decodes none as nil, served as null
	now := t.Unix()
	for i := range g.epochs {
		e := &g.epochs[i]
		if now < e.next {
			continue
		}
		e.number++
		out = append(out, event("new_epoch", "epoch_info_name", e.name, "epoch_number", itoa(e.number),
			"epoch_start_tick_time", itoa(e.next), "epoch_start_block_time", itoa(now), "epoch_start_block", itoa(h),
			"mode", "BeginBlock"))
		for e.next <= now {
			e.next += e.duration
		}
	}
	if g.fees <= 0 {
		return out
	}
	out = append(out, bankSend(g.st.feeCollector, g.st.distribution, usdc(g.fees), "mode", "BeginBlock")...)
	total := g.st.vals.TotalVotingPower()
	fees := sdkmath.LegacyNewDec(g.fees)
	for _, v := range g.st.vals.Validators {
		share := fees.MulInt64(v.VotingPower).QuoInt64(total)
		commission := share.MulInt64(5).QuoInt64(100)
		valoper, _ := bech32Valoper(v.Address)
		out = append(out,
			event("commission", "amount", commission.String()+USDC, "validator", valoper, "mode", "BeginBlock"),
			event("rewards", "amount", share.String()+USDC, "validator", valoper, "mode", "BeginBlock"))
	}
	return out
}

// priceUpdates moves each market's oracle price by ±0.02 % with
// probability 1/2 and lists the markets that moved.
func (g *generator) priceUpdates() []any {
	out := []any{}
	for i := range g.st.perps {
		p := &g.st.perps[i]
		if g.rng.IntN(2) == 0 {
			continue
		}
		d := max(p.price/5000, 1)
		if g.rng.IntN(2) == 0 && p.price > 2*d {
			d = -d
		}
		p.price += d
		out = append(out, map[string]any{"market_id": p.market, "price": strconv.FormatInt(p.price, 10)})
	}
	return out
}

// premiumVotes are non-zero premiums for a random third of the perpetuals.
func (g *generator) premiumVotes() []any {
	out := []any{}
	for _, p := range g.st.perps {
		if g.rng.IntN(3) != 0 {
			continue
		}
		ppm := g.rng.IntN(1000) - 500
		if ppm == 0 {
			ppm = 1
		}
		out = append(out, map[string]any{"perpetual_id": p.id, "premium_ppm": ppm})
	}
	return out
}

// notional is floor(subticks × base × 10^qce), the quote quantums of a fill.
func notional(subticks, base int64, qce int) int64 {
	n := new(big.Int).Mul(big.NewInt(subticks), big.NewInt(base))
	if qce >= 0 {
		n.Mul(n, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(qce)), nil))
	} else {
		n.Quo(n, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(-qce)), nil))
	}
	return n.Int64()
}
