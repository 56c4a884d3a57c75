// Package snapshots is the store of chain state snapshots (table
// state_snapshots): the kinds of rows a snapshot holds, and the functions
// that write a snapshot and read the latest one. The indexer's snapshotter
// (indexer/snapshot) takes snapshots from a node and writes them here; the
// aggregators and the API read them.
//
// A snapshot at height h is the application state after block h was
// committed (abci_query at version h); its time is the time of block h.
// Besides the data rows, every snapshot holds one marker row per kind it
// tried: kind "taken" (key = the kind, data {"rows": n}) when the node
// answered, or kind "skipped" (key = the kind, data {"reason": ...}) when
// the chain lacks the module. A taken kind with no data rows is empty (an
// empty community pool), not missing; Latest relies on the markers.
package snapshots

import "encoding/json"

// Kinds of snapshot rows.
const (
	// KindSupply is the bank total supply: key '', one row per denom.
	KindSupply = "supply"
	// KindModuleBalance is a module account's bank balance: key = module
	// name, one row per denom, data {"address"}.
	KindModuleBalance = "module_balance"
	// KindStakingPool is the staking pool: key bonded | not_bonded, denom =
	// the bond denom.
	KindStakingPool = "staking_pool"
	// KindMint is x/mint: key inflation (a ratio, denom '') or
	// annual_provisions (denom = the mint denom); amounts are decimals.
	KindMint = "mint"
	// KindCommunityPool is the community pool: key '', one row per denom,
	// amounts are decimals (DecCoins). data {"source": "protocolpool"} when
	// the chain keeps it in x/protocolpool.
	KindCommunityPool = "community_pool"
	// KindValidator is one validator: key = operator address, denom = the
	// bond denom, amount = tokens, data {moniker, status, jailed,
	// commission_rate, delegator_shares}.
	KindValidator = "validator"
	// KindDelegation is one delegation of a watched delegator (config
	// staking.providers): key = delegator "/" validator, denom = the bond
	// denom, amount = its balance (tokens the shares are worth), data
	// {shares}.
	KindDelegation = "delegation"

	// KindTaken marks a kind the node answered: key = the kind, data {"rows": n}.
	KindTaken = "taken"
	// KindSkipped marks a kind the chain lacks: key = the kind, data {"reason"}.
	KindSkipped = "skipped"
)

// Kinds lists the data kinds in the order Take queries them.
var Kinds = []string{KindSupply, KindModuleBalance, KindStakingPool, KindValidator, KindDelegation, KindMint, KindCommunityPool}

// KindHolder is one holder of a denom: key = the account address, denom,
// amount = its balance. Its taken marker's key is HolderMarker(denom), so
// the latest holder list of each denom is found on its own. Only the
// newest holder list of a denom is kept (Store prunes older ones).
const KindHolder = "holder"

// HolderMarker is the key of the taken marker of denom's holder list.
func HolderMarker(denom string) string { return KindHolder + ":" + denom }

// Row is one row of a snapshot. Amounts are decimal strings, never floats.
type Row struct {
	Kind  string `json:"kind"`
	Key   string `json:"key"`
	Denom string `json:"denom"`
	// Amount is an integer or decimal string; "" is stored as NULL.
	Amount string `json:"amount,omitempty"`
	// Data is a JSON object; nil is stored as NULL.
	Data json.RawMessage `json:"data,omitempty"`
}
