// Package synthdydx generates a mainnet-shaped dYdX v4 chain, deterministic
// for a seed, and serves it through replaynode's CometBFT 0.38 node (it is
// a replaynode.Source): one-second blocks laid out as dYdX's proposer lays
// them out (the vote-extension blob, MsgProposedOperations, user txs,
// MsgAcknowledgeBridges, MsgAddPremiumVotes, MsgUpdateMarketPrices), txs
// encoded with the real protobuf types (dYdX's from the shipped descriptor
// set, the SDK's tx envelope), blocks, commits and block results built with
// CometBFT's own types and encoded with its JSON, so hashes, part sets and
// the wire form are those of a real node.
//
// The state is consistent. Every fill belongs to an order placed in the
// same MsgProposedOperations (the maker's short-term order, then the
// taker's IOC order, then the match); its price is on the market's tick,
// its size a multiple of the step, at the oracle price of that block; the
// `match` event's quote deltas include the fees (taker 500 ppm rounded up,
// maker -110 ppm rounded toward zero: fee tier 1 of the mainnet genesis)
// and the insurance-fund share of a liquidation; positions follow the
// fills, and a liquidation only reduces the liquidated subaccount's open
// position. USDC moves on the bank side exactly as the chain moves it:
// traders start with USDC in the genesis, deposits move it into the
// subaccounts module, withdrawals out of it, net fees from it to the fee
// collector, liquidation fees to the insurance fund; no bank balance ever
// goes negative.
//
// What the profile assumes (dYdX v4 mainnet, 2025-2026, from public
// explorers and the dYdX indexer's statistics; the recorded mainnet data
// in testdata holds no mainnet block with fills to measure from): ~1 s
// blocks (86,400 a day); 100,000 filled taker orders a day, each against
// 1 to 4 resting maker orders (~250,000 fills a day), 2 % of blocks a
// burst of 20× the rate; notional log-uniform from $20 to $50,000; market
// shares BTC 35 %, ETH 25 %, SOL 10 %, the other 30 perpetuals the rest;
// 2 liquidations per 1,000 fills (maker fee 0 on those); 3,000 deposits,
// 2,000 withdrawals and 500 transfers between subaccounts a day; 60
// validators; an oracle price update for every market that moved (each
// moves ±0.02 % with probability 1/2 a block); premium votes for a random
// third of the perpetuals; the funding-sample (60 s), funding-tick and
// stats-epoch (3,600 s) epochs of the genesis. The markets, perpetuals,
// clob pairs, fee tiers and prices at start are the mainnet genesis's
// (dydx-mainnet-1, 2023-10-26: mainnet-genesis.json.gz, from
// dydxprotocol/v4-chain protocol/testing/mainnet/genesis.json).
package synthdydx

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
	Traders    int // subaccounts that trade (taker orders, deposits)
	Makers     int // market makers resting short-term orders

	TakersPerDay      int // filled taker orders a day
	DepositsPerDay    int
	WithdrawalsPerDay int
	TransfersPerDay   int
	// LiquidationsPerMille of the taker orders are liquidations, from
	// height LiquidationsFrom on (when positions have been opened).
	LiquidationsPerMille int
	LiquidationsFrom     int64
	// VoteExtensionBytes is the size of the proposer's vote-extension
	// blob (txs[0], not a Cosmos tx).
	VoteExtensionBytes int
	// Window is how many recent heights are kept for reading again.
	Window int64
}

// Mainnet is the dydx profile: dYdX v4 mainnet's block time and trading,
// days long.
func Mainnet(days int, seed uint64) Profile {
	return Profile{
		ChainID: "dydx-mainnet-1", BlockTime: time.Second, Days: days, Seed: seed,
		Genesis:    time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC),
		Validators: 60, Traders: 30_000, Makers: 40,
		TakersPerDay: 100_000, DepositsPerDay: 3_000, WithdrawalsPerDay: 2_000, TransfersPerDay: 500,
		LiquidationsPerMille: 2, LiquidationsFrom: 1_000, VoteExtensionBytes: 4 << 10, Window: 2_000,
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
