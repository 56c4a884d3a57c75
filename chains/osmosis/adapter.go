// Package osmosis is the Osmosis chain kind: the generic cosmos adapter
// plus the dex rows (pools, swap hops, gamm liquidity, concentrated-liquidity
// positions) of chain-events.md §5.
package osmosis

import (
	"fmt"
	"strconv"
	"strings"

	"cosmossdk.io/math"

	"github.com/chainlens/chainlens/chains"
	"github.com/chainlens/chainlens/chains/cosmos"
)

// Kind is the config kind this adapter serves.
const Kind = "osmosis"

// Adapter is the Osmosis adapter: everything the generic cosmos adapter
// writes, plus osmosis_pools, osmosis_swaps, osmosis_pool_liquidity and
// osmosis_cl_positions.
type Adapter struct {
	*cosmos.Adapter
}

var _ chains.Adapter = (*Adapter)(nil)

// NewAdapter returns the Osmosis adapter for the bech32 prefix (osmo).
func NewAdapter(bech32Prefix string) *Adapter {
	return &Adapter{Adapter: cosmos.NewAdapter(Kind, bech32Prefix, "osmosis")}
}

var poolsTable = chains.Table{Name: "osmosis_pools", Columns: []string{
	"chain_id", "height", "tx_index", "event_index", "msg_index", "time", "pool_id", "type", "creator", "denoms", "swap_fee", "weights",
	"tick_spacing", "exit_fee",
}}

var swapsTable = chains.Table{Name: "osmosis_swaps", Columns: []string{
	"chain_id", "height", "tx_index", "event_index", "msg_index", "time", "pool_id", "sender",
	"denom_in", "amount_in", "denom_out", "amount_out", "exact_out",
}}

var liquidityTable = chains.Table{Name: "osmosis_pool_liquidity", Columns: []string{
	"chain_id", "height", "tx_index", "event_index", "coin_index", "msg_index", "pool_id", "kind", "sender", "denom", "delta",
}}

var clPositionsTable = chains.Table{Name: "osmosis_cl_positions", Columns: []string{
	"chain_id", "height", "tx_index", "event_index", "msg_index", "pool_id", "position_id", "kind", "sender",
	"lower_tick", "upper_tick", "liquidity", "amount0", "amount1", "provided",
}}

var clRewardsTable = chains.Table{Name: "osmosis_cl_rewards", Columns: []string{
	"chain_id", "height", "tx_index", "event_index", "coin_index", "msg_index", "pool_id", "position_id", "kind", "denom", "amount",
}}

var clAddsTable = chains.Table{Name: "osmosis_cl_adds", Columns: []string{
	"chain_id", "height", "tx_index", "event_index", "msg_index", "pool_id", "position_id", "new_position_id", "sender",
}}

// Tables lists the generic tables and the Osmosis dex tables.
func (a *Adapter) Tables() []chains.Table {
	return append(a.Adapter.Tables(), poolsTable, swapsTable, liquidityTable, clPositionsTable, clRewardsTable, clAddsTable, orderbookTable)
}

// Rows appends the generic rows, then the dex rows.
func (a *Adapter) Rows(b *chains.Block, out *chains.Rows) error {
	if err := a.Adapter.Rows(b, out); err != nil {
		return err
	}
	return dexRows(b, out)
}

// dexRows turns the dex events of the block's finalize events and of its
// successful txs into rows. Failed txs change no pool.
func dexRows(b *chains.Block, out *chains.Rows) error {
	for i := range b.Events {
		if err := dexEvent(b, nil, &b.Events[i], out); err != nil {
			return err
		}
	}
	for t := range b.Txs {
		tx := &b.Txs[t]
		if !tx.Succeeded() {
			continue
		}
		for i := range tx.Events {
			if err := dexEvent(b, tx, &tx.Events[i], out); err != nil {
				return err
			}
		}
	}
	return nil
}

func dexEvent(b *chains.Block, tx *chains.Tx, ev *chains.Event, out *chains.Rows) error {
	switch ev.Type {
	case "token_swapped":
		return swapRow(b, tx, ev, out)
	case "pool_joined", "pool_exited":
		return liquidityRows(b, ev, out)
	case "pool_created":
		return poolRows(b, tx, ev, out)
	case "create_position", "withdraw_position":
		return positionRow(b, tx, ev, out)
	case "collect_spread_rewards", "collect_incentives":
		return rewardRows(b, ev, out)
	case "add_to_position":
		return addRow(b, ev, out)
	case "wasm", "wasm-limitClaimed":
		// Any contract may emit these names: one whose attributes are not
		// an order book's is skipped (counted), not a failed height.
		if tx != nil && orderbookRow(b, ev, out) != nil {
			b.Stats.ForeignEvents++
		}
	}
	return nil
}

func poolID(ev *chains.Event) (int64, error) {
	s, _ := ev.Get("pool_id")
	id, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%s event %d of tx %d: pool_id %q: %w", ev.Type, ev.Index, ev.TxIndex, s, err)
	}
	return id, nil
}

// oneCoin parses an attribute holding exactly one coin.
func oneCoin(ev *chains.Event, key string) (chains.Coin, error) {
	s, _ := ev.Get(key)
	coins, err := chains.ParseCoins(s)
	if err == nil && len(coins) != 1 {
		err = fmt.Errorf("want one coin, got %d", len(coins))
	}
	if err != nil {
		return chains.Coin{}, fmt.Errorf("%s event %d of tx %d: %s %q: %w", ev.Type, ev.Index, ev.TxIndex, key, s, err)
	}
	return coins[0], nil
}

// message is the message of tx that ev belongs to, if any.
func message(tx *chains.Tx, ev *chains.Event) (chains.Message, bool) {
	if tx == nil || ev.MsgIndex < 0 || ev.MsgIndex >= len(tx.Messages) {
		return chains.Message{}, false
	}
	return tx.Messages[ev.MsgIndex], true
}

// exactOut reports whether a swap hop comes from an exact-amount-out
// message (every hop of such a route is swapped as exact out); hops of
// other messages and of the block (fee swaps, arbitrage) are exact in.
func exactOut(tx *chains.Tx, ev *chains.Event) bool {
	m, ok := message(tx, ev)
	return ok && strings.HasSuffix(m.TypeURL, "SwapExactAmountOut")
}

func swapRow(b *chains.Block, tx *chains.Tx, ev *chains.Event, out *chains.Rows) error {
	id, err := poolID(ev)
	if err != nil {
		return err
	}
	in, err := oneCoin(ev, "tokens_in")
	if err != nil {
		return err
	}
	o, err := oneCoin(ev, "tokens_out")
	if err != nil {
		return err
	}
	sender, _ := ev.Get("sender")
	out.Add(swapsTable.Name, b.ChainID, b.Height, ev.TxIndex, ev.Index, ev.MsgIndex, b.Time, id, sender, in.Denom, in.Amount, o.Denom, o.Amount,
		exactOut(tx, ev))
	return nil
}

func liquidityRows(b *chains.Block, ev *chains.Event, out *chains.Rows) error {
	id, err := poolID(ev)
	if err != nil {
		return err
	}
	kind, key, sign := "join", "tokens_in", ""
	if ev.Type == "pool_exited" {
		kind, key, sign = "exit", "tokens_out", "-"
	}
	s, _ := ev.Get(key)
	coins, err := chains.ParseCoins(s)
	if err != nil {
		return fmt.Errorf("%s event %d of tx %d: %w", ev.Type, ev.Index, ev.TxIndex, err)
	}
	sender, _ := ev.Get("sender")
	for i, c := range coins {
		out.Add(liquidityTable.Name, b.ChainID, b.Height, ev.TxIndex, ev.Index, i, ev.MsgIndex, id, kind, sender, c.Denom, sign+c.Amount)
	}
	return nil
}

// poolRows writes the pool of a pool_created event, with type, denoms and
// fee from the create message it belongs to, and the creation deposit of
// gamm pools as liquidity rows of kind create.
func poolRows(b *chains.Block, tx *chains.Tx, ev *chains.Event, out *chains.Rows) error {
	id, err := poolID(ev)
	if err != nil {
		return err
	}
	var p createdPool
	if tx != nil && ev.MsgIndex >= 0 && ev.MsgIndex < len(tx.Messages) {
		m := tx.Messages[ev.MsgIndex]
		p, err = decodeCreatePool(m.TypeURL, m.Raw)
		if err != nil {
			return fmt.Errorf("tx %d message %d (%s): %w", tx.Index, m.Index, m.TypeURL, err)
		}
	}
	if p.Type == "" {
		p.Type = "unknown"
	}
	denoms := make([]string, 0, len(p.Deposit)+len(p.Denoms))
	denoms = append(denoms, p.Denoms...)
	for _, c := range p.Deposit {
		denoms = append(denoms, c.Denom)
	}
	var fee any
	if p.SwapFee != nil {
		fee = p.SwapFee.String()
	}
	var weights any
	if p.Weights != nil {
		weights = p.Weights
	}
	var tickSpacing any
	if p.TickSpacing > 0 {
		tickSpacing = int64(p.TickSpacing)
	}
	var exitFee any
	if p.ExitFee != nil {
		exitFee = p.ExitFee.String()
	} else if p.Type == "balancer" || p.Type == "stableswap" {
		exitFee = "0" // a zero Dec is left out of the message
	}
	out.Add(poolsTable.Name, b.ChainID, b.Height, ev.TxIndex, ev.Index, ev.MsgIndex, b.Time, id, p.Type, p.Creator, denoms, fee, weights, tickSpacing, exitFee)
	for i, c := range p.Deposit {
		out.Add(liquidityTable.Name, b.ChainID, b.Height, ev.TxIndex, ev.Index, i, ev.MsgIndex, id, "create", p.Creator, c.Denom, c.Amount)
	}
	return nil
}

// positionRow writes a concentrated-liquidity position change, with the
// tokens the MsgCreatePosition provided (the pool's first position sets its
// initial price from them).
func positionRow(b *chains.Block, tx *chains.Tx, ev *chains.Event, out *chains.Rows) error {
	id, err := poolID(ev)
	if err != nil {
		return err
	}
	ints := map[string]int64{}
	for _, k := range []string{"position_id", "lower_tick", "upper_tick"} {
		s, _ := ev.Get(k)
		if ints[k], err = strconv.ParseInt(s, 10, 64); err != nil {
			return fmt.Errorf("%s event %d of tx %d: %s %q: %w", ev.Type, ev.Index, ev.TxIndex, k, s, err)
		}
	}
	decs := map[string]string{}
	for _, k := range []string{"liquidity", "amount0", "amount1"} {
		s, _ := ev.Get(k)
		if _, err := math.LegacyNewDecFromStr(s); err != nil {
			return fmt.Errorf("%s event %d of tx %d: %s %q: %w", ev.Type, ev.Index, ev.TxIndex, k, s, err)
		}
		decs[k] = s
	}
	kind := "create"
	if ev.Type == "withdraw_position" {
		kind = "withdraw"
	}
	sender, _ := ev.Get("sender")
	provided := ""
	if m, ok := message(tx, ev); ok && kind == "create" && m.TypeURL == msgCreatePosition {
		coins, err := decodeTokensProvided(m.Raw)
		if err != nil {
			return fmt.Errorf("tx %d message %d (%s): %w", tx.Index, m.Index, m.TypeURL, err)
		}
		provided = formatCoins(coins)
	}
	out.Add(clPositionsTable.Name, b.ChainID, b.Height, ev.TxIndex, ev.Index, ev.MsgIndex, id, ints["position_id"], kind, sender,
		ints["lower_tick"], ints["upper_tick"], decs["liquidity"], decs["amount0"], decs["amount1"], provided)
	return nil
}

// rewardRows writes the coins a collect_spread_rewards (kind spread) or
// collect_incentives event (kinds incentives and forfeit, from tokens_out
// and forfeited_tokens) moved for one position.
func rewardRows(b *chains.Block, ev *chains.Event, out *chains.Rows) error {
	id, err := poolID(ev)
	if err != nil {
		return err
	}
	s, _ := ev.Get("position_id")
	pos, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return fmt.Errorf("%s event %d of tx %d: position_id %q: %w", ev.Type, ev.Index, ev.TxIndex, s, err)
	}
	kinds := [][2]string{{"spread", "tokens_out"}}
	if ev.Type == "collect_incentives" {
		kinds = [][2]string{{"incentives", "tokens_out"}, {"forfeit", "forfeited_tokens"}}
	}
	n := 0
	for _, k := range kinds {
		v, _ := ev.Get(k[1])
		coins, err := chains.ParseCoins(v)
		if err != nil {
			return fmt.Errorf("%s event %d of tx %d: %s %q: %w", ev.Type, ev.Index, ev.TxIndex, k[1], v, err)
		}
		for _, c := range coins {
			out.Add(clRewardsTable.Name, b.ChainID, b.Height, ev.TxIndex, ev.Index, n, ev.MsgIndex, id, pos, k[0], c.Denom, c.Amount)
			n++
		}
	}
	return nil
}

// addRow writes an add_to_position event: position_id was replaced by
// new_position_id (whose create_position row holds the amounts).
func addRow(b *chains.Block, ev *chains.Event, out *chains.Rows) error {
	id, err := poolID(ev)
	if err != nil {
		return err
	}
	ids := map[string]int64{}
	for _, k := range []string{"position_id", "new_position_id"} {
		s, _ := ev.Get(k)
		if ids[k], err = strconv.ParseInt(s, 10, 64); err != nil {
			return fmt.Errorf("%s event %d of tx %d: %s %q: %w", ev.Type, ev.Index, ev.TxIndex, k, s, err)
		}
	}
	sender, _ := ev.Get("sender")
	out.Add(clAddsTable.Name, b.ChainID, b.Height, ev.TxIndex, ev.Index, ev.MsgIndex, id, ids["position_id"], ids["new_position_id"], sender)
	return nil
}

// formatCoins writes coins as a coin string ("10uatom,5uosmo").
func formatCoins(coins []chains.Coin) string {
	parts := make([]string, len(coins))
	for i, c := range coins {
		parts[i] = c.Amount + c.Denom
	}
	return strings.Join(parts, ",")
}
