package synthosmosis

import (
	"encoding/base64"
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"sort"
	"strconv"
	"strings"
	"time"

	sdkmath "cosmossdk.io/math"
	abci "github.com/cometbft/cometbft/abci/types"
	cmtproto "github.com/cometbft/cometbft/proto/tendermint/types"
	sdk "github.com/cosmos/cosmos-sdk/types"
	"github.com/cosmos/cosmos-sdk/types/bech32"

	"github.com/chainlens/chainlens/chains/osmosis/clmath"
	"github.com/chainlens/chainlens/chains/protoset"
	"github.com/chainlens/chainlens/devchain/replaynode"
	"github.com/chainlens/chainlens/devchain/synthcomet"
)

// Message type URLs of the generated txs.
const (
	msgSend           = "/cosmos.bank.v1beta1.MsgSend"
	msgSwapIn         = "/osmosis.poolmanager.v1beta1.MsgSwapExactAmountIn"
	msgJoinPool       = "/osmosis.gamm.v1beta1.MsgJoinPool"
	msgExitPool       = "/osmosis.gamm.v1beta1.MsgExitPool"
	msgCreatePosition = "/osmosis.concentratedliquidity.v1beta1.MsgCreatePosition"
	msgWithdraw       = "/osmosis.concentratedliquidity.v1beta1.MsgWithdrawPosition"
	msgCreateBalancer = "/osmosis.gamm.poolmodels.balancer.v1beta1.MsgCreateBalancerPool"
	msgCreateStable   = "/osmosis.gamm.poolmodels.stableswap.v1beta1.MsgCreateStableswapPool"
	msgCreateCL       = "/osmosis.concentratedliquidity.poolmodel.concentrated.v1beta1.MsgCreateConcentratedPool"
)

const (
	// poolCreationFee is paid to the community pool per pool (uosmo).
	poolCreationFee = 1_000_000_000
	// takerFeePPM is charged on every hop's input.
	takerFeePPM = 1_000
	// poolsPerBlock are created in each of the first blocks.
	poolsPerBlock = 10
)

// consensusParams are Osmosis mainnet's (no vote extensions).
var consensusParams = cmtproto.ConsensusParams{
	Block:     &cmtproto.BlockParams{MaxBytes: 10485760, MaxGas: 300000000},
	Evidence:  &cmtproto.EvidenceParams{MaxAgeNumBlocks: 403200, MaxAgeDuration: 336 * time.Hour, MaxBytes: 1048576},
	Validator: &cmtproto.ValidatorParams{PubKeyTypes: []string{"ed25519"}},
	Version:   &cmtproto.VersionParams{},
	Abci:      &cmtproto.ABCIParams{},
}

// generator makes the blocks of a chain in order.
type generator struct {
	p    Profile
	st   *state
	rng  *rand.Rand
	seal *synthcomet.Sealer
	enc  *synthcomet.Encoder
	fees int64 // uosmo the fee collector received in the last block
	// zipf draws pool ranks among the created pools.
	zipf *rand.Zipf
	bank ledger
}

func newGenerator(p Profile, st *state, reg *protoset.Registry) *generator {
	g := &generator{p: p, st: st, rng: rand.New(rand.NewPCG(p.Seed, 0x0505))}
	var err error
	if g.seal, err = synthcomet.NewSealer(p.ChainID, st.vals, g.rng, p.Genesis, consensusParams); err != nil {
		panic(err) // fixed params: cannot fail
	}
	g.enc = synthcomet.NewEncoder(reg, g.rng)
	g.zipf = rand.NewZipf(g.rng, 1.2, 1, uint64(len(st.pools)-1))
	g.bank = ledger{}
	for _, a := range append([]*account{st.creator}, st.traders...) {
		for d, v := range a.bank {
			if v > 0 {
				g.bank.add(a.addr, d, big.NewInt(v))
			}
		}
	}
	return g
}

// Height is the last height generated.
func (g *generator) Height() int64 { return g.seal.Height() }

// Next generates the block after the last one.
func (g *generator) Next() (*replaynode.Block, error) {
	h := g.seal.Height() + 1
	t := g.p.blockTime(h)
	b := &synthcomet.Builder{}
	fees := int64(0)
	if err := g.createPools(t, b, &fees); err != nil {
		return nil, err
	}
	if g.st.created > 0 {
		ops := []struct {
			perDay int
			op     func(time.Time, *synthcomet.Builder, *int64) error
		}{
			{g.p.SwapsPerDay, g.swap}, {g.p.JoinsPerDay, g.join}, {g.p.ExitsPerDay, g.exit},
			{g.p.PositionsPerDay, g.createPosition}, {g.p.WithdrawalsPerDay, g.withdrawPosition}, {g.p.SendsPerDay, g.send},
		}
		for _, o := range ops {
			for range synthcomet.Poisson(g.rng, g.p.perBlock(o.perDay)) {
				if err := o.op(t, b, &fees); err != nil {
					return nil, fmt.Errorf("synthosmosis: height %d: %w", h, err)
				}
			}
		}
	}
	finalize := g.finalizeEvents()
	g.fees = fees
	if err := g.bank.apply(finalize); err != nil {
		return nil, fmt.Errorf("synthosmosis: height %d: %w", h, err)
	}
	for _, r := range b.Results {
		if err := g.bank.apply(r.Events); err != nil {
			return nil, fmt.Errorf("synthosmosis: height %d: %w", h, err)
		}
	}
	return g.seal.Seal(h, t, b, finalize)
}

// drawPool draws a created pool by rank (Zipf) that ok accepts, or nil.
func (g *generator) drawPool(ok func(*pool) bool) *pool {
	for range 20 {
		i := int(g.zipf.Uint64())
		if i < g.st.created && ok(g.st.pools[i]) {
			return g.st.pools[i]
		}
	}
	return nil
}

// notional is log-uniform from $5 to $20,000.
func (g *generator) notional() float64 {
	return math.Exp(math.Log(5) + g.rng.Float64()*(math.Log(20_000)-math.Log(5)))
}

// userTx adds a signed tx of one message from a, paying the fee, with
// the message's events after the envelope's.
func (g *generator) userTx(b *synthcomet.Builder, a *account, typeURL, module string, msg map[string]any, events []abci.Event, fees *int64) error {
	m, err := g.enc.Any(typeURL, msg)
	if err != nil {
		return err
	}
	gas := int64(150_000 + g.rng.IntN(400_000))
	fee := gas / 40
	if a.bank[OSMO] < fee {
		return fmt.Errorf("%s cannot pay its fee", a.addr)
	}
	tx, err := g.enc.Tx(&synthcomet.Signer{Pub: a.pub, Seq: a.seq}, uint64(gas), sdk.NewCoins(sdk.NewCoin(OSMO, sdkmath.NewInt(fee))), m)
	if err != nil {
		return err
	}
	a.bank[OSMO] -= fee
	*fees += fee
	feeCoin := strconv.FormatInt(fee, 10) + OSMO
	head := synthcomet.BankSend(a.addr, g.st.feeCollector, feeCoin)
	head = append(head,
		synthcomet.Event("tx", "fee", feeCoin),
		synthcomet.Event("tx", "acc_seq", fmt.Sprintf("%s/%d", a.addr, a.seq)),
		synthcomet.Event("tx", "signature", b64(tx[len(tx)-64:])))
	action := []string{"action", typeURL, "sender", a.addr}
	if module != "" {
		action = append(action, "module", module)
	}
	head = append(head, synthcomet.Event("message", append(action, "msg_index", "0")...))
	for i := range events {
		events[i].Attributes = append(events[i].Attributes, abci.EventAttribute{Key: "msg_index", Value: "0", Index: true})
	}
	a.seq++
	b.Add(tx, &abci.ExecTxResult{Data: synthcomet.MsgData(typeURL), GasWanted: gas, GasUsed: gas * 2 / 3, Events: append(head, events...)})
	return nil
}

// move is a bank transfer of coins (denom → amount) from one address to
// another: its four events; balances are the caller's.
func move(from, to string, coins map[string]int64) []abci.Event {
	return synthcomet.BankSend(from, to, coinsString(coins))
}

// coinsString renders coins as the SDK does: sorted by denom, zero
// amounts left out.
func coinsString(coins map[string]int64) string {
	denoms := make([]string, 0, len(coins))
	for d, v := range coins {
		if v > 0 {
			denoms = append(denoms, d)
		}
	}
	sort.Strings(denoms)
	parts := make([]string, len(denoms))
	for i, d := range denoms {
		parts[i] = strconv.FormatInt(coins[d], 10) + d
	}
	return strings.Join(parts, ",")
}

func coin(amount int64, denom string) map[string]any {
	return map[string]any{"denom": denom, "amount": strconv.FormatInt(amount, 10)}
}

// createPools creates the next poolsPerBlock planned pools, by the
// creator: each pool's create message (and a concentrated pool's first,
// full-range position).
func (g *generator) createPools(t time.Time, b *synthcomet.Builder, fees *int64) error {
	st := g.st
	for n := 0; n < poolsPerBlock && st.created < len(st.pools); n++ {
		pl := st.pools[st.created]
		c := st.creator
		id := strconv.FormatUint(pl.id, 10)
		created := synthcomet.Event("pool_created", "pool_id", id)
		feeMove := move(c.addr, st.distribution, map[string]int64{OSMO: poolCreationFee})
		c.bank[OSMO] -= poolCreationFee
		deposit := map[string]int64{pl.denoms[0]: pl.deposit[0], pl.denoms[1]: pl.deposit[1]}
		// Decs on the wire are gogoproto's: the integer of 10^18 units.
		params := map[string]any{"swap_fee": pl.feeWire(), "exit_fee": "0"}
		switch pl.kind {
		case balancer, stableswap:
			pl.shares = new(big.Int).Mul(big.NewInt(100), e18)
			sharesCoin := pl.shares.String() + "gamm/pool/" + id
			events := []abci.Event{
				synthcomet.Event("coin_received", "receiver", st.gamm, "amount", sharesCoin),
				synthcomet.Event("coinbase", "minter", st.gamm, "amount", sharesCoin),
				synthcomet.Event("coin_spent", "spender", st.gamm, "amount", sharesCoin),
				synthcomet.Event("coin_received", "receiver", c.addr, "amount", sharesCoin),
				synthcomet.Event("transfer", "recipient", c.addr, "sender", st.gamm, "amount", sharesCoin),
				synthcomet.Event("message", "sender", st.gamm),
				created,
			}
			events = append(append(events, feeMove...), move(c.addr, pl.addr, deposit)...)
			typeURL, msg := msgCreateBalancer, map[string]any{"sender": c.addr, "pool_params": params,
				"pool_assets": []any{
					map[string]any{"token": coin(pl.deposit[0], pl.denoms[0]), "weight": strconv.FormatInt(pl.weights[0]*1_000_000, 10)},
					map[string]any{"token": coin(pl.deposit[1], pl.denoms[1]), "weight": strconv.FormatInt(pl.weights[1]*1_000_000, 10)}},
				"future_pool_governor": ""}
			if pl.kind == stableswap {
				typeURL, msg = msgCreateStable, map[string]any{"sender": c.addr, "pool_params": params,
					"initial_pool_liquidity": []any{coin(pl.deposit[0], pl.denoms[0]), coin(pl.deposit[1], pl.denoms[1])},
					"scaling_factors":        []any{strconv.FormatInt(pl.scaling[0], 10), strconv.FormatInt(pl.scaling[1], 10)},
					"future_pool_governor":   ""}
				if pl.denoms[0] > pl.denoms[1] { // the SDK's coins are sorted; factors follow them
					msg["initial_pool_liquidity"] = []any{coin(pl.deposit[1], pl.denoms[1]), coin(pl.deposit[0], pl.denoms[0])}
					msg["scaling_factors"] = []any{strconv.FormatInt(pl.scaling[1], 10), strconv.FormatInt(pl.scaling[0], 10)}
				}
			}
			if err := g.userTx(b, c, typeURL, "gamm", msg, events, fees); err != nil {
				return err
			}
			c.bank[pl.denoms[0]] -= pl.deposit[0]
			c.bank[pl.denoms[1]] -= pl.deposit[1]
			pl.reserve[pl.denoms[0]] += pl.deposit[0]
			pl.reserve[pl.denoms[1]] += pl.deposit[1]
		case cl:
			events := append([]abci.Event{created}, feeMove...)
			if err := g.userTx(b, c, msgCreateCL, "concentratedliquidity", map[string]any{"sender": c.addr, "denom0": pl.denoms[0],
				"denom1": pl.denoms[1], "tick_spacing": strconv.FormatInt(pl.spacing, 10), "spread_factor": pl.feeWire()}, events, fees); err != nil {
				return err
			}
			if err := pl.clp.Initialize(big.NewInt(pl.deposit[0]), big.NewInt(pl.deposit[1])); err != nil {
				return fmt.Errorf("pool %d: %w", pl.id, err)
			}
			st.created++ // the position below is in a pool that exists
			if err := g.openPosition(t, b, fees, c, pl, clmath.MinTick, clmath.MaxTick, float64(pl.deposit[0]), float64(pl.deposit[1])); err != nil {
				return err
			}
			continue
		}
		st.created++
	}
	return nil
}

// openPosition creates a position of owner in pl over [lower, upper) whose
// liquidity is the most that amount0 and amount1 (base units) provide.
// The message's tokens_provided are those amounts, as a client offers
// them (a pool's first position sets its price from them, as
// x/concentrated-liquidity does); the position takes what its liquidity
// holds, no more.
func (g *generator) openPosition(t time.Time, b *synthcomet.Builder, fees *int64, owner *account, pl *pool, lower, upper int64, amount0, amount1 float64) error {
	per0, per1 := clmath.AmountsPerLiquidity(pl.sqrtPriceRat(), lower, upper)
	l := math.Inf(1)
	if v, _ := per0.Float64(); v > 0 {
		l = math.Min(l, amount0/v)
	}
	if v, _ := per1.Float64(); v > 0 {
		l = math.Min(l, amount1/v)
	}
	if math.IsInf(l, 1) || l < 1 {
		return nil
	}
	liq := new(big.Int).Mul(big.NewInt(int64(l)), e18)
	a0, a1 := pl.positionAmounts(lower, upper, liq, true)
	if owner.bank[pl.denoms[0]] < a0 || owner.bank[pl.denoms[1]] < a1 || a0+a1 == 0 {
		return nil
	}
	id := g.st.nextPosID
	g.st.nextPosID++
	in := map[string]int64{pl.denoms[0]: a0, pl.denoms[1]: a1}
	events := append(move(owner.addr, pl.addr, in), synthcomet.Event("create_position", "module", "concentratedliquidity",
		"position_id", strconv.FormatUint(id, 10), "sender", owner.addr, "pool_id", strconv.FormatUint(pl.id, 10),
		"lower_tick", strconv.FormatInt(lower, 10), "upper_tick", strconv.FormatInt(upper, 10), "join_time", t.UTC().String(),
		"liquidity", decString(liq), "amount0", strconv.FormatInt(a0, 10), "amount1", strconv.FormatInt(a1, 10)))
	msg := map[string]any{"pool_id": strconv.FormatUint(pl.id, 10), "sender": owner.addr, "lower_tick": strconv.FormatInt(lower, 10),
		"upper_tick": strconv.FormatInt(upper, 10), "tokens_provided": []any{coin(max(a0, int64(amount0)), pl.denoms[0]), coin(max(a1, int64(amount1)), pl.denoms[1])},
		"token_min_amount0": "0", "token_min_amount1": "0"}
	if err := g.userTx(b, owner, msgCreatePosition, "", msg, events, fees); err != nil {
		return err
	}
	owner.bank[pl.denoms[0]] -= a0
	owner.bank[pl.denoms[1]] -= a1
	pl.reserve[pl.denoms[0]] += a0
	pl.reserve[pl.denoms[1]] += a1
	pl.clp.Position(lower, upper, liq)
	pos := &position{id: id, owner: owner, pool: pl, lower: lower, upper: upper, liquidity: liq, joinedAt: t.UTC()}
	g.st.positions[id] = pos
	g.st.open = append(g.st.open, pos)
	return nil
}

// decString is a Dec (10^18 integer) as the SDK writes it: 18 decimals.
func decString(v *big.Int) string {
	return sdkmath.LegacyNewDecFromBigIntWithPrec(v, 18).String()
}

// trader draws a trader.
func (g *generator) trader() *account { return g.st.traders[g.rng.IntN(len(g.st.traders))] }

// swap is a MsgSwapExactAmountIn of one hop or, for TwoHopPercent of
// them, two hops through OSMO.
func (g *generator) swap(_ time.Time, b *synthcomet.Builder, fees *int64) error {
	a := g.trader()
	first := g.drawPool(func(*pool) bool { return true })
	if first == nil {
		return nil
	}
	in := first.denoms[g.rng.IntN(2)]
	route := []*pool{first}
	if g.rng.IntN(100) < g.p.TwoHopPercent && (first.denoms[0] == OSMO || first.denoms[1] == OSMO) {
		// X → OSMO in the first pool, OSMO → Y in another.
		if in == OSMO {
			in = first.denoms[0]
			if in == OSMO {
				in = first.denoms[1]
			}
		}
		if second := g.drawPool(func(pl *pool) bool {
			return (pl.denoms[0] == OSMO || pl.denoms[1] == OSMO) && pairKey(pl.denoms[0], pl.denoms[1]) != pairKey(first.denoms[0], first.denoms[1])
		}); second != nil {
			route = append(route, second)
		}
	}
	frac := math.Min(g.notional()/(first.plannedUSD/2), 0.02)
	amount := int64(float64(first.reserve[in]) * frac)
	if a.bank[in] < amount+1 || amount < 100 || (in == OSMO && a.bank[OSMO] < amount+20_000) {
		return nil
	}
	var events []abci.Event
	var routes []any
	denom, cur := in, amount
	applied := []func(){}
	for _, pl := range route {
		fee := (cur*takerFeePPM + 999_999) / 1_000_000
		net := cur - fee
		applied = append(applied, pl.snapshot())
		out, got, spread, err := pl.swapOut(denom, net)
		if err != nil {
			for i := len(applied) - 1; i >= 0; i-- {
				applied[i]()
			}
			return nil // the chain would fail the tx; the generator makes none
		}
		events = append(events, move(a.addr, g.st.takerFees, map[string]int64{denom: fee})...)
		events = append(events, move(a.addr, pl.addr, map[string]int64{denom: net - spread})...)
		if spread > 0 {
			events = append(events, move(a.addr, pl.spreadAddr, map[string]int64{denom: spread})...)
		}
		events = append(events, move(pl.addr, a.addr, map[string]int64{out: got})...)
		events = append(events, synthcomet.Event("token_swapped", "module", "gamm", "sender", a.addr, "pool_id", strconv.FormatUint(pl.id, 10),
			"tokens_in", strconv.FormatInt(net-spread, 10)+denom, "tokens_out", strconv.FormatInt(got, 10)+out))
		routes = append(routes, map[string]any{"pool_id": strconv.FormatUint(pl.id, 10), "token_out_denom": out})
		denom, cur = out, got
	}
	msg := map[string]any{"sender": a.addr, "routes": routes, "token_in": coin(amount, in), "token_out_min_amount": "1"}
	if err := g.userTx(b, a, msgSwapIn, "", msg, events, fees); err != nil {
		return err
	}
	a.bank[in] -= amount
	a.bank[denom] += cur
	return nil
}

// snapshot returns what undoes a swap on pl.
func (pl *pool) snapshot() func() {
	r0, r1 := pl.reserve[pl.denoms[0]], pl.reserve[pl.denoms[1]]
	var clp *clmath.CLPool
	if pl.clp != nil {
		c := *pl.clp
		c.Net, c.Gross = copyTicks(pl.clp.Net), copyTicks(pl.clp.Gross)
		clp = &c
	}
	return func() {
		pl.reserve[pl.denoms[0]], pl.reserve[pl.denoms[1]] = r0, r1
		if clp != nil {
			*pl.clp = *clp
		}
	}
}

// join is a MsgJoinPool of a gamm pool for shares worth the notional.
func (g *generator) join(_ time.Time, b *synthcomet.Builder, fees *int64) error {
	a := g.trader()
	pl := g.drawPool(func(pl *pool) bool { return pl.kind != cl })
	if pl == nil {
		return nil
	}
	frac := math.Min(g.notional()/pl.plannedUSD, 0.05)
	shareOut, _ := new(big.Float).Mul(new(big.Float).SetInt(pl.shares), big.NewFloat(frac)).Int(nil)
	if shareOut.Sign() <= 0 {
		return nil
	}
	in := pl.joinAmounts(shareOut)
	if a.bank[pl.denoms[0]] < in[0] || a.bank[pl.denoms[1]] < in[1]+20_000 {
		return nil
	}
	st := g.st
	id := strconv.FormatUint(pl.id, 10)
	sharesCoin := shareOut.String() + "gamm/pool/" + id
	coins := map[string]int64{pl.denoms[0]: in[0], pl.denoms[1]: in[1]}
	events := append(move(a.addr, pl.addr, coins),
		synthcomet.Event("coin_received", "receiver", st.gamm, "amount", sharesCoin),
		synthcomet.Event("coinbase", "minter", st.gamm, "amount", sharesCoin),
		synthcomet.Event("coin_spent", "spender", st.gamm, "amount", sharesCoin),
		synthcomet.Event("coin_received", "receiver", a.addr, "amount", sharesCoin),
		synthcomet.Event("transfer", "recipient", a.addr, "sender", st.gamm, "amount", sharesCoin),
		synthcomet.Event("message", "sender", st.gamm),
		synthcomet.Event("pool_joined", "module", "gamm", "sender", a.addr, "pool_id", id, "tokens_in", coinsString(coins)))
	maxs := []any{coin(in[0], pl.denoms[0]), coin(in[1], pl.denoms[1])}
	if pl.denoms[0] > pl.denoms[1] {
		maxs[0], maxs[1] = maxs[1], maxs[0]
	}
	if err := g.userTx(b, a, msgJoinPool, "", map[string]any{"sender": a.addr, "pool_id": id, "share_out_amount": shareOut.String(),
		"token_in_maxs": maxs}, events, fees); err != nil {
		return err
	}
	for i, d := range pl.denoms {
		a.bank[d] -= in[i]
		pl.reserve[d] += in[i]
	}
	pl.shares.Add(pl.shares, shareOut)
	st.lps = append(st.lps, &lp{pool: pl, owner: a, shares: shareOut})
	return nil
}

// exit is a MsgExitPool of part or all of a trader's shares.
func (g *generator) exit(_ time.Time, b *synthcomet.Builder, fees *int64) error {
	st := g.st
	if len(st.lps) == 0 {
		return nil
	}
	i := g.rng.IntN(len(st.lps))
	h := st.lps[i]
	pl, a := h.pool, h.owner
	shareIn := new(big.Int).Set(h.shares)
	if g.rng.IntN(2) == 0 {
		shareIn.Quo(shareIn, big.NewInt(2))
	}
	if shareIn.Sign() <= 0 || a.bank[OSMO] < 20_000 {
		return nil
	}
	out := pl.exitAmounts(shareIn)
	id := strconv.FormatUint(pl.id, 10)
	sharesCoin := shareIn.String() + "gamm/pool/" + id
	coins := map[string]int64{pl.denoms[0]: out[0], pl.denoms[1]: out[1]}
	events := append(move(pl.addr, a.addr, coins), synthcomet.BankSend(a.addr, st.gamm, sharesCoin)...)
	events = append(events,
		synthcomet.Event("coin_spent", "spender", st.gamm, "amount", sharesCoin),
		synthcomet.Event("burn", "burner", st.gamm, "amount", sharesCoin),
		synthcomet.Event("pool_exited", "module", "gamm", "sender", a.addr, "pool_id", id, "tokens_out", coinsString(coins)))
	if err := g.userTx(b, a, msgExitPool, "", map[string]any{"sender": a.addr, "pool_id": id, "share_in_amount": shareIn.String(),
		"token_out_mins": []any{}}, events, fees); err != nil {
		return err
	}
	for j, d := range pl.denoms {
		a.bank[d] += out[j]
		pl.reserve[d] -= out[j]
	}
	pl.shares.Sub(pl.shares, shareIn)
	h.shares.Sub(h.shares, shareIn)
	if h.shares.Sign() == 0 {
		st.lps[i] = st.lps[len(st.lps)-1]
		st.lps = st.lps[:len(st.lps)-1]
	}
	return nil
}

// createPosition opens a position around a concentrated pool's price:
// 1 to 200 tick spacings wide on each side, worth the notional.
func (g *generator) createPosition(t time.Time, b *synthcomet.Builder, fees *int64) error {
	a := g.trader()
	pl := g.drawPool(func(pl *pool) bool { return pl.kind == cl })
	if pl == nil || a.bank[OSMO] < 20_000 {
		return nil
	}
	// Widths in ticks: 1 to 200 spacings of 100, i.e. ±0.01 % to ±20 %
	// around the price at price one's exponent.
	tick := pl.clp.Tick - pl.clp.Tick%pl.spacing
	lower := tick - int64(1+g.rng.IntN(200))*pl.spacing*10
	upper := tick + int64(1+g.rng.IntN(200))*pl.spacing*10
	lower, upper = max(lower, clmath.MinTick), min(upper, clmath.MaxTick)
	usd := g.notional() * 5
	return g.openPosition(t, b, fees, a, pl, lower, upper, float64(g.st.unitsOf(pl.denoms[0], usd)), float64(g.st.unitsOf(pl.denoms[1], usd)))
}

// withdrawPosition withdraws the whole of an open position (not the
// creators' full-range ones).
func (g *generator) withdrawPosition(_ time.Time, b *synthcomet.Builder, fees *int64) error {
	st := g.st
	if len(st.open) == 0 {
		return nil
	}
	i := g.rng.IntN(len(st.open))
	pos := st.open[i]
	pl, a := pos.pool, pos.owner
	if a == st.creator || a.bank[OSMO] < 20_000 {
		return nil
	}
	a0, a1 := pl.positionAmounts(pos.lower, pos.upper, pos.liquidity, false)
	if a0 > pl.reserve[pl.denoms[0]] || a1 > pl.reserve[pl.denoms[1]] {
		return fmt.Errorf("pool %d holds %d/%d, position %d takes out %d/%d", pl.id, pl.reserve[pl.denoms[0]], pl.reserve[pl.denoms[1]], pos.id, a0, a1)
	}
	neg := new(big.Int).Neg(pos.liquidity)
	coins := map[string]int64{pl.denoms[0]: a0, pl.denoms[1]: a1}
	var events []abci.Event
	if a0+a1 > 0 {
		events = move(pl.addr, a.addr, coins)
	}
	events = append(events, synthcomet.Event("withdraw_position", "module", "concentratedliquidity",
		"position_id", strconv.FormatUint(pos.id, 10), "sender", a.addr, "pool_id", strconv.FormatUint(pl.id, 10),
		"lower_tick", strconv.FormatInt(pos.lower, 10), "upper_tick", strconv.FormatInt(pos.upper, 10), "join_time", pos.joinedAt.String(),
		"liquidity", decString(neg), "amount0", strconv.FormatInt(-a0, 10), "amount1", strconv.FormatInt(-a1, 10)))
	if err := g.userTx(b, a, msgWithdraw, "", map[string]any{"position_id": strconv.FormatUint(pos.id, 10), "sender": a.addr,
		"liquidity_amount": pos.liquidity.String()}, events, fees); err != nil {
		return err
	}
	a.bank[pl.denoms[0]] += a0
	a.bank[pl.denoms[1]] += a1
	pl.reserve[pl.denoms[0]] -= a0
	pl.reserve[pl.denoms[1]] -= a1
	pl.clp.Position(pos.lower, pos.upper, neg)
	delete(st.positions, pos.id)
	st.open[i] = st.open[len(st.open)-1]
	st.open = st.open[:len(st.open)-1]
	return nil
}

// send is a MsgSend of a priced asset between two traders.
func (g *generator) send(_ time.Time, b *synthcomet.Builder, fees *int64) error {
	from, to := g.trader(), g.trader()
	as := Assets[g.rng.IntN(len(Assets))]
	amount := as.units(g.notional() / 4)
	if from == to || amount <= 0 || from.bank[as.denom] < amount+30_000 {
		return nil
	}
	events := move(from.addr, to.addr, map[string]int64{as.denom: amount})
	if err := g.userTx(b, from, msgSend, "bank", map[string]any{"from_address": from.addr, "to_address": to.addr,
		"amount": []any{coin(amount, as.denom)}}, events, fees); err != nil {
		return err
	}
	from.bank[as.denom] -= amount
	to.bank[as.denom] += amount
	return nil
}

// finalizeEvents distribute the fees the fee collector received in the
// last block: to the distribution module, then commission and rewards
// per validator, by voting power.
func (g *generator) finalizeEvents() []abci.Event {
	if g.fees <= 0 {
		return nil
	}
	out := synthcomet.BankSend(g.st.feeCollector, g.st.distribution, strconv.FormatInt(g.fees, 10)+OSMO, "mode", "BeginBlock")
	total := g.st.vals.TotalVotingPower()
	fees := sdkmath.LegacyNewDec(g.fees)
	for _, v := range g.st.vals.Validators {
		share := fees.MulInt64(v.VotingPower).QuoInt64(total)
		commission := share.MulInt64(5).QuoInt64(100)
		valoper, _ := bech32.ConvertAndEncode("osmovaloper", v.Address)
		out = append(out,
			synthcomet.Event("commission", "amount", commission.String()+OSMO, "validator", valoper, "mode", "BeginBlock"),
			synthcomet.Event("rewards", "amount", share.String()+OSMO, "validator", valoper, "mode", "BeginBlock"))
	}
	return out
}

func b64(b []byte) string { return base64.StdEncoding.EncodeToString(b) }
