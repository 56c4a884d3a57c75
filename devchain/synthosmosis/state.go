package synthosmosis

import (
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"sort"
	"strconv"
	"time"

	"github.com/cometbft/cometbft/crypto/ed25519"
	cmttypes "github.com/cometbft/cometbft/types"
	"github.com/cosmos/cosmos-sdk/crypto/keys/secp256k1"
	sdk "github.com/cosmos/cosmos-sdk/types"
	"github.com/cosmos/cosmos-sdk/types/address"
	"github.com/cosmos/cosmos-sdk/types/bech32"

	"github.com/chainlens/chainlens/chains/osmosis"
	"github.com/chainlens/chainlens/chains/osmosis/clmath"
)

// OSMO is the staking and fee denom.
const OSMO = "uosmo"

// asset is a priced mainnet asset: its denom, symbol, exponent and USD
// price at genesis.
type asset struct {
	denom, symbol string
	exp           int
	usd           float64
}

// Assets are the priced assets, USDC first (the USD anchor); their denoms
// are the mainnet's (osmosis-1 asset list).
var Assets = []asset{
	{"ibc/498A0751C798A0D9A389AA3691123DADA57DAA4FE165D5C75894505B876BA6E4", "USDC", 6, 1},
	{OSMO, "OSMO", 6, 0.5},
	{"ibc/27394FB092D2ECCD56123C74F36E4C1F926001CEADA9CA97EA622B25F41E5EB2", "ATOM", 6, 6},
	{"factory/osmo1z0qrq605sjgcqpylfl4aa6s90x738j7m58wyatt0tdzflg2ha26q67k743/wbtc", "WBTC", 8, 90_000},
	{"ibc/D79E7D83AB399BFFF93433E54FAA480C191248FC556924A2A8351AE2638B3877", "TIA", 6, 4},
	{"ibc/4ABBEF4C8926DDDB320AE5188CFD63267ABBCEFC0583E4AE05D6E5AA2401DDAB", "USDT", 6, 1},
	{"ibc/C140AFD542AE77BD7DCC83F13FDD8C5E5BB8C4929785E6EC2F4C636F98F17901", "stATOM", 6, 8},
	{"ibc/D176154B0C63D1F9C6DCFB4F70349EBF2E2B5A87A05902F57A6AE92B863E9AEC", "stOSMO", 6, 0.7},
	{"ibc/46B44899322F3CD854D2D46DEEF881958467CDD4B3B10086DA49296BBED94BED", "JUNO", 6, 0.2},
	{"ibc/987C17B11ABC2B20019178ACE62929FE9840202CE79498E29FE8E5CB02B7C0A4", "STARS", 6, 0.01},
	{"ibc/1480B8FD20AD5FCAE81EA87584D269547DD4D436843C1D20F15E00EB64743EF4", "AKT", 6, 2.5},
	{"ibc/0954E1C28EB7AF5B72D24F3BC2B47BBB2FDF91BDDFD57B74B99E133AED40972A", "SCRT", 6, 0.3},
	{"uion", "ION", 6, 300},
	{"factory/osmo1f5vfcph2dvfeqcqkhetwv75fda69z7e5c2dldm3kvgj23crkv6wqcn47a0/umilkTIA", "milkTIA", 6, 4.2},
	{"ibc/126DA09104B71B164883842B769C0E9EC1486C0887D27A9999E395C2C8FB5682", "NTRN", 6, 0.4},
}

// units is usd worth of a as integer base units.
func (a asset) units(usd float64) int64 {
	v := usd / a.usd
	for range a.exp {
		v *= 10
	}
	return int64(v)
}

// account is a user: its address, key and bank balances.
type account struct {
	addr string
	pub  []byte // compressed secp256k1 public key
	seq  uint64
	bank map[string]int64
}

// Pool types as the pool_created message's type URLs name them.
const (
	balancer   = "balancer"
	stableswap = "stableswap"
	cl         = "concentrated"
)

// pool is a pool's state. Reserves of gamm pools are in reserve (by denom);
// a concentrated pool's tokens are its address's bank balance and its
// price and ticks are clp's.
type pool struct {
	id      uint64
	kind    string
	addr    string
	denoms  [2]string
	weights [2]int64 // balancer
	scaling [2]int64 // stableswap scaling factors
	feePPM  int64    // swap fee / spread factor, in ppm
	reserve map[string]int64
	shares  *big.Int // gamm total shares
	// concentrated
	spacing    int64
	clp        *clmath.CLPool
	spreadAddr string   // where its swaps' spread rewards go
	plannedUSD float64  // what the creator deposits, in USD
	deposit    [2]int64 // the creator's deposit at creation
}

// position is an open concentrated-liquidity position.
type position struct {
	id           uint64
	owner        *account
	pool         *pool
	lower, upper int64
	liquidity    *big.Int // Dec (10^18)
	joinedAt     time.Time
}

// state is what generation carries from block to block.
type state struct {
	vals      *cmttypes.ValidatorSet
	traders   []*account
	creator   *account // creates the pools
	pools     []*pool  // by id - 1
	positions map[uint64]*position
	open      []*position // open positions, for drawing withdrawals
	lps       []*lp       // gamm shares held by traders, for drawing exits
	created   int         // pools created so far (ids 1..created)
	nextPosID uint64
	memeUSD   map[string]float64 // factory tokens' prices at genesis
	// module accounts
	feeCollector, distribution, takerFees, gamm string
}

// newState creates the validators, traders and the pools' plans (created
// by messages in the first blocks).
func newState(p Profile) (*state, error) {
	st := &state{positions: map[uint64]*position{}, nextPosID: 1,
		memeUSD: map[string]float64{}}
	var err error
	for _, m := range []struct {
		name string
		to   *string
	}{{"fee_collector", &st.feeCollector}, {"distribution", &st.distribution}, {"taker_fee_collector", &st.takerFees},
		{"gamm", &st.gamm}} {
		if *m.to, err = bech32.ConvertAndEncode("osmo", address.Module(m.name)); err != nil {
			return nil, fmt.Errorf("synthosmosis: module address: %w", err)
		}
	}
	vals := make([]*cmttypes.Validator, p.Validators)
	for i := range vals {
		key := ed25519.GenPrivKeyFromSecret([]byte(fmt.Sprintf("synthosmosis validator %d", i)))
		vals[i] = cmttypes.NewValidator(key.PubKey(), int64(p.Validators-i)*1_000_000)
	}
	st.vals = cmttypes.NewValidatorSet(vals)
	rng := rand.New(rand.NewPCG(p.Seed, 0x05e0))
	for i := range p.Traders {
		a, err := newAccount(fmt.Sprintf("synthosmosis trader %d", i))
		if err != nil {
			return nil, err
		}
		// Each trader holds $2,000 to $200,000 of every priced asset
		// (log-uniform): swaps never wait for a deposit.
		usd := 2_000 * math.Pow(10, 2*rng.Float64())
		for _, as := range Assets {
			a.bank[as.denom] = as.units(usd)
		}
		a.bank[OSMO] += 50_000_000 // fees
		st.traders = append(st.traders, a)
	}
	if st.creator, err = newAccount("synthosmosis pool creator"); err != nil {
		return nil, err
	}
	if err := st.planPools(p, rng); err != nil {
		return nil, err
	}
	st.creator.bank = st.creatorFunds()
	return st, nil
}

func newAccount(secret string) (*account, error) {
	key := secp256k1.GenPrivKeyFromSecret([]byte(secret))
	addr, err := bech32.ConvertAndEncode("osmo", key.PubKey().Address())
	if err != nil {
		return nil, fmt.Errorf("synthosmosis: address: %w", err)
	}
	return &account{addr: addr, pub: key.PubKey().Bytes(), bank: map[string]int64{}}, nil
}

// planPools lays out the pools: concentrated pools over the pairs of the
// priced assets with OSMO or USDC, stableswap pools over the stable pairs,
// balancer pools over the priced pairs and then factory tokens against
// OSMO. Their reserves are what the creator deposits at creation.
func (st *state) planPools(p Profile, rng *rand.Rand) error {
	byDenom := map[string]asset{}
	for _, a := range Assets {
		byDenom[a.denom] = a
	}
	var pairs [][2]string
	for _, base := range []string{OSMO, Assets[0].denom} {
		for _, a := range Assets {
			if a.denom != base && !(base == Assets[0].denom && a.denom == OSMO) {
				pairs = append(pairs, [2]string{base, a.denom})
			}
		}
	}
	add := func(pl *pool) error {
		pl.id = uint64(len(st.pools) + 1)
		addr, err := osmosis.PoolAddress("osmo", pl.id)
		if err != nil {
			return err
		}
		pl.addr = addr
		if pl.kind == cl {
			if pl.spreadAddr, err = bech32.ConvertAndEncode("osmo",
				address.Module("concentratedliquidity", append([]byte("spreadRewards"), sdk.Uint64ToBigEndian(pl.id)...))); err != nil {
				return err
			}
		}
		pl.reserve = map[string]int64{}
		st.pools = append(st.pools, pl)
		return nil
	}
	// Pool sizes fall with the pool's rank (Zipf): $20M at the head.
	tvl := func(rank int) float64 { return 20e6 / float64(rank+1) }
	rank := 0
	for i := range p.CLPools {
		pr := pairs[i%len(pairs)]
		ppm := int64(500)
		if i >= len(pairs) {
			ppm = 2000
		}
		if err := add(&pool{kind: cl, denoms: pr, feePPM: ppm, spacing: 100,
			clp: clmath.NewCLPool(decOf(ppm))}); err != nil {
			return err
		}
		st.pools[len(st.pools)-1].plannedUSD = tvl(rank)
		rank++
	}
	stables := [][2]string{{Assets[0].denom, Assets[5].denom}, {Assets[2].denom, Assets[6].denom}, {OSMO, Assets[7].denom},
		{Assets[4].denom, Assets[13].denom}}
	for i := range p.StableswapPools {
		pr := stables[i%len(stables)]
		a0, a1 := byDenom[pr[0]], byDenom[pr[1]]
		// Scaling factors bring both assets to the same units at par.
		s0, s1 := int64(1), int64(1)
		if r := a1.usd / a0.usd; r > 1 {
			s1 = int64(r*1000 + 0.5)
			s0 = 1000
		}
		if err := add(&pool{kind: stableswap, denoms: pr, feePPM: 100, scaling: [2]int64{s0, s1}}); err != nil {
			return err
		}
		st.pools[len(st.pools)-1].plannedUSD = tvl(rank) / 4
		rank++
	}
	for i := range p.BalancerPools {
		var pr [2]string
		if i < len(pairs) {
			pr = pairs[i]
		} else {
			pr = [2]string{OSMO, fmt.Sprintf("factory/%s/meme%d", st.creator.addr, i)}
			st.memeUSD[pr[1]] = math.Pow(10, -2-4*rng.Float64())
		}
		w := [2]int64{1, 1}
		if rng.IntN(5) == 0 {
			w = [2]int64{4, 1} // 80/20
		}
		ppm := int64(2000)
		if rng.IntN(3) == 0 {
			ppm = 3000
		}
		if err := add(&pool{kind: balancer, denoms: pr, feePPM: ppm, weights: w}); err != nil {
			return err
		}
		st.pools[len(st.pools)-1].plannedUSD = tvl(rank) / 8
		rank++
	}
	for _, pl := range st.pools {
		share := 0.5
		if pl.weights[0] != pl.weights[1] {
			share = float64(pl.weights[0]) / float64(pl.weights[0]+pl.weights[1])
		}
		pl.deposit = [2]int64{st.unitsOf(pl.denoms[0], pl.plannedUSD*share), st.unitsOf(pl.denoms[1], pl.plannedUSD*(1-share))}
	}
	return nil
}

// lp is a trader's shares of a gamm pool.
type lp struct {
	pool   *pool
	owner  *account
	shares *big.Int
}

// usdPrice is a denom's USD price at genesis.
func (st *state) usdPrice(d string) (float64, int) {
	for _, a := range Assets {
		if a.denom == d {
			return a.usd, a.exp
		}
	}
	return st.memeUSD[d], 6
}

// unitsOf is usd worth of d at its genesis price, in base units.
func (st *state) unitsOf(d string, usd float64) int64 {
	price, exp := st.usdPrice(d)
	return asset{usd: price, exp: exp}.units(usd)
}

// creatorFunds is what the pool creator holds at genesis: every pool's
// deposit and creation fee, and fees for its txs.
func (st *state) creatorFunds() map[string]int64 {
	funds := map[string]int64{OSMO: 1_000_000_000_000}
	for _, pl := range st.pools {
		funds[pl.denoms[0]] += pl.deposit[0]
		funds[pl.denoms[1]] += pl.deposit[1]
		funds[OSMO] += poolCreationFee
	}
	return funds
}

// feeWire is the pool's fee as a LegacyDec on the wire: the integer of
// 10^18 units.
func (pl *pool) feeWire() string { return decOf(pl.feePPM).String() }

// pairKey orders a pair's denoms.
func pairKey(a, b string) [2]string {
	if a > b {
		a, b = b, a
	}
	return [2]string{a, b}
}

// decOf is ppm as a Dec (10^18) integer.
func decOf(ppm int64) *big.Int {
	return new(big.Int).Mul(big.NewInt(ppm), big.NewInt(1_000_000_000_000))
}

// genesisDoc is the GenesisDoc JSON: the traders' and the creator's
// balances in the bank, the supply their sum.
func (st *state) genesisDoc(p Profile) (json.RawMessage, error) {
	supply := map[string]*big.Int{}
	var balances []any
	all := append([]*account{st.creator}, st.traders...)
	sort.Slice(all, func(i, j int) bool { return all[i].addr < all[j].addr })
	for _, a := range all {
		bank := a.bank
		denoms := make([]string, 0, len(bank))
		for d := range bank {
			denoms = append(denoms, d)
		}
		sort.Strings(denoms)
		var coins []any
		for _, d := range denoms {
			if bank[d] <= 0 {
				continue
			}
			coins = append(coins, map[string]any{"denom": d, "amount": strconv.FormatInt(bank[d], 10)})
			if supply[d] == nil {
				supply[d] = new(big.Int)
			}
			supply[d].Add(supply[d], big.NewInt(bank[d]))
		}
		balances = append(balances, map[string]any{"address": a.addr, "coins": coins})
	}
	denoms := make([]string, 0, len(supply))
	for d := range supply {
		denoms = append(denoms, d)
	}
	sort.Strings(denoms)
	var sup []any
	for _, d := range denoms {
		sup = append(sup, map[string]any{"denom": d, "amount": supply[d].String()})
	}
	doc := map[string]any{
		"genesis_time":   p.Genesis.UTC().Format("2006-01-02T15:04:05.999999999Z07:00"),
		"chain_id":       p.ChainID,
		"initial_height": "1",
		"consensus_params": map[string]any{
			"block":     map[string]any{"max_bytes": "10485760", "max_gas": "300000000"},
			"evidence":  map[string]any{"max_age_num_blocks": "403200", "max_age_duration": "1209600000000000", "max_bytes": "1048576"},
			"validator": map[string]any{"pub_key_types": []any{"ed25519"}},
			"version":   map[string]any{"app": "0"},
			"abci":      map[string]any{"vote_extensions_enable_height": "0"},
		},
		"app_hash": "",
		"app_state": map[string]any{
			"bank": map[string]any{"params": map[string]any{"default_send_enabled": true}, "balances": balances, "supply": sup,
				"denom_metadata": []any{}, "send_enabled": []any{}},
		},
	}
	return json.Marshal(doc)
}
