// Package synthosmosis generates a mainnet-shaped Osmosis chain,
// deterministic for a seed, and serves it through replaynode's CometBFT
// 0.38 node (it is a replaynode.Source and a replaynode.Querier). Blocks,
// commits and results are CometBFT's own types (devchain/synthcomet); txs
// carry Osmosis's real protobuf messages (the shipped descriptor set) and
// their results carry the events Osmosis v31 emits for them, attribute for
// attribute as in the recorded localnet (testdata/localnet/osmosis):
// poolmanager swaps (the taker fee to the taker fee collector, then the
// swap's transfers and token_swapped per hop), gamm joins and exits (shares
// minted or burnt), concentrated-liquidity positions created and withdrawn,
// pools created with their creation fee, bank sends, the fee of every tx,
// and the block's distribution of the fees to the validators.
//
// The state is consistent: pools follow their own math — balancer pools
// the weighted constant product with the swap fee, stableswap pools the
// two-asset CFMM x·y·(x²+y²) = k over scaled reserves, concentrated-
// liquidity pools x/concentrated-liquidity's exact tick arithmetic
// (chains/osmosis/clmath: swaps walk the initialized ticks and cross
// them); bank balances (accounts, pools, modules) never go negative.
//
// What the profile assumes (Osmosis mainnet, 2025-2026, from public
// explorers; the recorded mainnet data in testdata is two blocks of 2022
// and 2023, which give the message mix of a busy block — swaps first, then
// IBC — but not the daily rates): 2 s blocks (43,200 a day); 40,000 swap
// txs a day, a quarter of them two hops through OSMO, the pool of each hop
// drawn with a Zipf law over the pools that hold the pair (most volume in
// few pools), notional log-uniform from $5 to $20,000; 1,500 pool joins,
// 1,200 exits, 1,800 concentrated positions created and 1,400 withdrawn a
// day; 20,000 bank sends a day; 1,000 balancer pools (most of them small
// pools of factory tokens against OSMO), 10 stableswap pools and 40
// concentrated pools, created by their messages in the first blocks; 16
// priced assets (real mainnet denoms: OSMO, Noble USDC, ATOM, ...); a
// 0.1 % taker fee on every swap; 150 validators, the fees of a block
// distributed in the next as commission and rewards per validator. What
// the generated chain leaves out: IBC, CosmWasm, superfluid, locks,
// incentives and the epoch's mint.
package synthosmosis

import "time"

// Profile is the shape of a generated chain.
type Profile struct {
	ChainID   string
	BlockTime time.Duration
	Days      int
	Seed      uint64
	// Genesis is the genesis time; height 1 is one block time later.
	Genesis time.Time

	Validators int
	Traders    int

	BalancerPools, StableswapPools, CLPools int

	SwapsPerDay, JoinsPerDay, ExitsPerDay int
	PositionsPerDay, WithdrawalsPerDay    int
	SendsPerDay                           int
	// TwoHopPercent of the swaps route through OSMO.
	TwoHopPercent int
	// Window is how many recent heights are kept for reading again.
	Window int64
}

// Mainnet is the osmosis profile: Osmosis mainnet's block time and
// traffic, days long.
func Mainnet(days int, seed uint64) Profile {
	return Profile{
		ChainID: "osmosis-1", BlockTime: 2 * time.Second, Days: days, Seed: seed,
		Genesis:    time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC),
		Validators: 150, Traders: 20_000,
		BalancerPools: 1_000, StableswapPools: 10, CLPools: 40,
		SwapsPerDay: 40_000, JoinsPerDay: 1_500, ExitsPerDay: 1_200, PositionsPerDay: 1_800, WithdrawalsPerDay: 1_400,
		SendsPerDay: 20_000, TwoHopPercent: 25, Window: 2_000,
	}
}

// Blocks is the number of heights of the chain.
func (p Profile) Blocks() int64 { return int64(p.Days) * int64(24*time.Hour/p.BlockTime) }

// EndAt moves the genesis so that the last height's time is t.
func (p *Profile) EndAt(t time.Time) {
	p.Genesis = t.Add(-time.Duration(p.Blocks()) * p.BlockTime).UTC().Truncate(time.Second)
}

// perBlock is a daily rate as the expected count per block.
func (p Profile) perBlock(perDay int) float64 {
	return float64(perDay) * p.BlockTime.Seconds() / 86400
}
