package synthdydx

import (
	"encoding/base64"
	"math/big"
	"math/rand/v2"
	"strconv"
	"time"

	sdkmath "cosmossdk.io/math"
	abci "github.com/cometbft/cometbft/abci/types"
	cmtproto "github.com/cometbft/cometbft/proto/tendermint/types"
	codectypes "github.com/cosmos/cosmos-sdk/codec/types"
	sdk "github.com/cosmos/cosmos-sdk/types"
	"github.com/cosmos/cosmos-sdk/types/bech32"

	"github.com/chainlens/chainlens/chains/protoset"
	"github.com/chainlens/chainlens/devchain/replaynode"
	"github.com/chainlens/chainlens/devchain/synthcomet"
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
	p      Profile
	st     *state
	rng    *rand.Rand
	seal   *synthcomet.Sealer
	enc    *synthcomet.Encoder
	epochs []epoch
	fees   int64 // USDC the fee collector received in the last block
	// nextDepositor is the first trader that has not deposited yet.
	nextDepositor int
	// recent are the last takers (a ring), where liquidations are drawn.
	recent     [1024]recentTaker
	nextRecent int
}

// consensusParams are dYdX mainnet's: vote extensions from height 1.
var consensusParams = cmtproto.ConsensusParams{
	Block:     &cmtproto.BlockParams{MaxBytes: 4194304, MaxGas: -1},
	Evidence:  &cmtproto.EvidenceParams{MaxAgeNumBlocks: 100000, MaxAgeDuration: 48 * time.Hour, MaxBytes: 1048576},
	Validator: &cmtproto.ValidatorParams{PubKeyTypes: []string{"ed25519"}},
	Version:   &cmtproto.VersionParams{},
	Abci:      &cmtproto.ABCIParams{VoteExtensionsEnableHeight: 1},
}

func newGenerator(p Profile, st *state, reg *protoset.Registry) *generator {
	g := &generator{p: p, st: st, rng: rand.New(rand.NewPCG(p.Seed, 0xd7d7))}
	g.epochs = []epoch{{name: "funding-sample", duration: 60, offset: 30}, {name: "funding-tick", duration: 3600},
		{name: "stats-epoch", duration: 3600}}
	start := p.Genesis.Unix()
	for i := range g.epochs {
		e := &g.epochs[i]
		e.next = start - (start-e.offset)%e.duration + e.duration
	}
	var err error
	if g.seal, err = synthcomet.NewSealer(p.ChainID, st.vals, g.rng, p.Genesis, consensusParams); err != nil {
		panic(err) // fixed params: cannot fail
	}
	g.enc = synthcomet.NewEncoder(reg, g.rng)
	return g
}

// Height is the last height generated.
func (g *generator) Height() int64 { return g.seal.Height() }

// Next generates the block after the last one.
func (g *generator) Next() (*replaynode.Block, error) {
	h := g.seal.Height() + 1
	t := g.p.blockTime(h)
	b := &synthcomet.Builder{}
	if h > 1 {
		// The proposer's vote extensions: not a Cosmos tx; the chain
		// answers it with code 2 and no events.
		blob := synthcomet.RandomBytes(g.rng, g.p.VoteExtensionBytes)
		b.Add(blob, &abci.ExecTxResult{Code: 2, Codespace: "sdk", Log: "tx parse error"})
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
	return g.seal.Seal(h, t, b, finalize)
}

// anyOf encodes a message given as proto3 JSON with its real protobuf type.
func (g *generator) anyOf(typeURL string, msg map[string]any) (*codectypes.Any, error) {
	return g.enc.Any(typeURL, msg)
}

// txBytes is a TxRaw of one message: signed by a (with a fee of feeAmount
// USDC and gas limit gas) or, with a nil a, injected by the proposer
// (no signer, empty fee).
func (g *generator) txBytes(msg *codectypes.Any, a *account, gas uint64, feeAmount int64) ([]byte, error) {
	if a == nil {
		return g.enc.Tx(nil, 0, nil, msg)
	}
	var fee sdk.Coins
	if feeAmount > 0 {
		fee = sdk.NewCoins(sdk.NewCoin(USDC, sdkmath.NewInt(feeAmount)))
	}
	return g.enc.Tx(&synthcomet.Signer{Pub: a.pub, Seq: a.seq}, gas, fee, msg)
}

// appTx adds one of the proposer's own txs (no signer, no fee).
func (g *generator) appTx(b *synthcomet.Builder, typeURL, module string, msg map[string]any) error {
	m, err := g.anyOf(typeURL, msg)
	if err != nil {
		return err
	}
	tx, err := g.txBytes(m, nil, 0, 0)
	if err != nil {
		return err
	}
	b.Add(tx, &abci.ExecTxResult{Data: synthcomet.MsgData(typeURL), GasWanted: -1, Events: []abci.Event{
		event("message", "action", typeURL, "module", module, "msg_index", "0")}})
	return nil
}

var (
	event    = synthcomet.Event
	bankSend = synthcomet.BankSend
)

func b64(b []byte) string { return base64.StdEncoding.EncodeToString(b) }

// bech32Valoper is a validator's operator address; here the operator
// account is the consensus address's bytes.
func bech32Valoper(addr []byte) (string, error) { return bech32.ConvertAndEncode("dydxvaloper", addr) }

func usdc(q int64) string { return strconv.FormatInt(q, 10) + USDC }

func itoa(v int64) string { return strconv.FormatInt(v, 10) }

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
