package synthdydx

import (
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"strconv"

	"github.com/cometbft/cometbft/crypto/ed25519"
	cmttypes "github.com/cometbft/cometbft/types"
	"github.com/cosmos/cosmos-sdk/crypto/keys/secp256k1"
	"github.com/cosmos/cosmos-sdk/types/address"
	"github.com/cosmos/cosmos-sdk/types/bech32"
)

// USDC is the quote asset (asset 0) on dYdX: Noble USDC over channel-0.
const USDC = "ibc/8E27BA2D5493AF5636760E354E46004562C46AB7EC0CC4C1CA14E9E20E2545B5"

// Fee tier 1 of the mainnet genesis, in ppm.
const (
	takerFeePPM = 500
	makerFeePPM = -110
	// liquidationFeePPM is the insurance fund's share of a liquidation.
	liquidationFeePPM = 5_000
	// userFee is what a user tx pays, in USDC quantums (0.005 USDC).
	userFee = 5_000
)

// perp is a perpetual with its clob pair and oracle market.
type perp struct {
	id, market int
	ticker     string
	ar, qce    int   // atomic resolution, quantum conversion exponent
	step, spt  int64 // step base quantums, subticks per tick
	price      int64 // oracle price × 10^-exp
	exp        int
	weight     int // share of the taker orders, per mille
}

// account is one subaccount owner (subaccount 0).
type account struct {
	addr   string
	pub    []byte // compressed secp256k1 public key
	seq    uint64
	bank   int64 // USDC in the bank, quantums
	quote  int64 // USDC quote balance of subaccount 0 (negative against longs)
	pos    map[int]int64
	client uint32
}

// state is what generation carries from block to block.
type state struct {
	vals    *cmttypes.ValidatorSet
	perps   []perp
	traders []*account
	makers  []*account
	active  []int // traders that deposited, in the order they did
	// module accounts
	subaccounts, feeCollector, insurance, distribution string
}

// newState reads the markets of the genesis and creates the validators,
// traders and makers of the profile.
func newState(p Profile, g map[string]any) (*state, error) {
	st := &state{}
	var err error
	for _, m := range []struct {
		name string
		to   *string
	}{{"subaccounts", &st.subaccounts}, {"fee_collector", &st.feeCollector}, {"insurance_fund", &st.insurance},
		{"distribution", &st.distribution}} {
		if *m.to, err = bech32.ConvertAndEncode("dydx", address.Module(m.name)); err != nil {
			return nil, fmt.Errorf("synthdydx: module address: %w", err)
		}
	}
	if st.perps, err = perpsOf(g); err != nil {
		return nil, err
	}
	vals := make([]*cmttypes.Validator, p.Validators)
	for i := range vals {
		key := ed25519.GenPrivKeyFromSecret([]byte(fmt.Sprintf("synthdydx validator %d", i)))
		vals[i] = cmttypes.NewValidator(key.PubKey(), int64(p.Validators-i)*1_000_000)
	}
	st.vals = cmttypes.NewValidatorSet(vals)
	rng := rand.New(rand.NewPCG(p.Seed, 0x5eed))
	newAccount := func(kind string, i int, bank int64) (*account, error) {
		key := secp256k1.GenPrivKeyFromSecret([]byte(fmt.Sprintf("synthdydx %s %d %d", kind, p.Seed, i)))
		pub := key.PubKey()
		addr, err := bech32.ConvertAndEncode("dydx", pub.Address())
		if err != nil {
			return nil, fmt.Errorf("synthdydx: account address: %w", err)
		}
		return &account{addr: addr, pub: pub.Bytes(), bank: bank, pos: map[int]int64{}}, nil
	}
	for i := range p.Traders {
		// $100 to $200,000, log-uniform.
		usd := math.Exp(math.Log(100) + rng.Float64()*(math.Log(200_000)-math.Log(100)))
		a, err := newAccount("trader", i, int64(usd)*1_000_000)
		if err != nil {
			return nil, err
		}
		st.traders = append(st.traders, a)
	}
	for i := range p.Makers {
		a, err := newAccount("maker", i, 50_000_000*1_000_000)
		if err != nil {
			return nil, err
		}
		st.makers = append(st.makers, a)
	}
	return st, nil
}

// clone copies the state deeply (accounts are mutated by generation).
func (st *state) clone() *state {
	c := *st
	c.perps = append([]perp(nil), st.perps...)
	c.active = append([]int(nil), st.active...)
	cp := func(in []*account) []*account {
		out := make([]*account, len(in))
		for i, a := range in {
			b := *a
			b.pos = make(map[int]int64, len(a.pos))
			for k, v := range a.pos {
				b.pos[k] = v
			}
			out[i] = &b
		}
		return out
	}
	c.traders, c.makers = cp(st.traders), cp(st.makers)
	return &c
}

// perpsOf reads the perpetuals, their clob pairs and oracle prices from the
// genesis, and gives each its share of the taker orders.
func perpsOf(g map[string]any) ([]perp, error) {
	app, _ := g["app_state"].(map[string]any)
	get := func(path ...string) []any {
		var v any = app
		for _, k := range path {
			m, _ := v.(map[string]any)
			v = m[k]
		}
		l, _ := v.([]any)
		return l
	}
	num := func(m map[string]any, k string) (int64, error) {
		switch v := m[k].(type) {
		case json.Number:
			return v.Int64()
		case string:
			return strconv.ParseInt(v, 10, 64)
		case nil:
			return 0, nil
		}
		return 0, fmt.Errorf("synthdydx: genesis: %s is %T", k, m[k])
	}
	prices := map[int64][2]int64{}
	for _, x := range get("prices", "market_prices") {
		m, _ := x.(map[string]any)
		id, err1 := num(m, "id")
		exp, err2 := num(m, "exponent")
		price, err3 := num(m, "price")
		if err1 != nil || err2 != nil || err3 != nil {
			return nil, fmt.Errorf("synthdydx: genesis market price %v", m)
		}
		prices[id] = [2]int64{price, exp}
	}
	pairs := map[int64]map[string]any{}
	for _, x := range get("clob", "clob_pairs") {
		m, _ := x.(map[string]any)
		meta, _ := m["perpetual_clob_metadata"].(map[string]any)
		id, err := num(meta, "perpetual_id")
		if err != nil {
			return nil, err
		}
		pairs[id] = m
	}
	var out []perp
	for _, x := range get("perpetuals", "perpetuals") {
		pm, _ := x.(map[string]any)
		params, _ := pm["params"].(map[string]any)
		id, err := num(params, "id")
		if err != nil {
			return nil, err
		}
		market, _ := num(params, "market_id")
		ar, _ := num(params, "atomic_resolution")
		pair, ok := pairs[id]
		price, okPrice := prices[market]
		if !ok || !okPrice {
			return nil, fmt.Errorf("synthdydx: genesis perpetual %d has no clob pair or price", id)
		}
		step, _ := num(pair, "step_base_quantums")
		spt, _ := num(pair, "subticks_per_tick")
		qce, _ := num(pair, "quantum_conversion_exponent")
		ticker, _ := params["ticker"].(string)
		out = append(out, perp{id: int(id), market: int(market), ticker: ticker, ar: int(ar), qce: int(qce),
			step: step, spt: spt, price: price[0], exp: int(price[1])})
	}
	if len(out) < 3 {
		return nil, fmt.Errorf("synthdydx: genesis has %d perpetuals", len(out))
	}
	// BTC 35 %, ETH 25 %, SOL 10 % (the genesis order: BTC, ETH, LINK,
	// MATIC, CRV, SOL, ...), the rest shared evenly.
	rest := 300 / (len(out) - 3)
	for i := range out {
		switch out[i].ticker {
		case "BTC-USD":
			out[i].weight = 350
		case "ETH-USD":
			out[i].weight = 250
		case "SOL-USD":
			out[i].weight = 100
		default:
			out[i].weight = rest
		}
	}
	return out, nil
}

// genesisDoc is the GenesisDoc JSON of the chain: the mainnet genesis at
// the profile's time and chain id, with the traders' and makers' USDC in
// the bank (and in the supply).
func (st *state) genesisDoc(g map[string]any) (json.RawMessage, error) {
	app, _ := g["app_state"].(map[string]any)
	bank, _ := app["bank"].(map[string]any)
	if bank == nil {
		return nil, fmt.Errorf("synthdydx: genesis has no bank state")
	}
	balances, _ := bank["balances"].([]any)
	total := new(big.Int)
	for _, a := range append(append([]*account(nil), st.traders...), st.makers...) {
		amount := strconv.FormatInt(a.bank, 10)
		balances = append(balances, map[string]any{"address": a.addr,
			"coins": []any{map[string]any{"denom": USDC, "amount": amount}}})
		total.Add(total, big.NewInt(a.bank))
	}
	bank["balances"] = balances
	supply, _ := bank["supply"].([]any)
	found := false
	for _, s := range supply {
		c, _ := s.(map[string]any)
		if c["denom"] == USDC {
			prev, _ := new(big.Int).SetString(fmt.Sprint(c["amount"]), 10)
			c["amount"] = total.Add(total, prev).String()
			found = true
		}
	}
	if !found && len(supply) > 0 {
		supply = append(supply, map[string]any{"denom": USDC, "amount": total.String()})
	}
	bank["supply"] = supply
	return json.Marshal(g)
}
