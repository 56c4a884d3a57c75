// Package campaigns holds the engagement aggregator jobs: on-chain and
// website conversions attributed to the campaigns wallets saw or clicked,
// tx-hash verification of website events, rule audiences and the
// per-campaign report.
package campaigns

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/chainlens/chainlens/aggregator"

	"cosmossdk.io/math"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"

	"github.com/chainlens/chainlens/config"
	"github.com/chainlens/chainlens/engagement"
	"github.com/chainlens/chainlens/store"
)

// BlockTimeSkew is how far after a block's time an exposure may be and
// still be credited with the block's actions: a CometBFT block's time is
// the previous block's commit time, so a transaction sent after a view can
// carry a time up to one block interval before it.
const BlockTimeSkew = 30 * time.Second

// MaxHeightsPerRun bounds the heights one run of an on-chain conversions
// job matches, so a catch-up is spread over runs of bounded transactions.
const MaxHeightsPerRun = 5000

// Onchain attributes the actions of one indexed chain to campaigns: a
// successful action matching an onchain goal, by a wallet that saw or
// clicked the campaign at most attribution_window before the block time,
// becomes a conversion. Every goal keeps its own scanned height, so a goal
// added later is matched from its campaign's start.
type Onchain struct {
	Chain config.Chain
	// Prices values amounts in USD; nil when no dex chain is configured.
	Prices *Prices
}

// Name is engagement_conversions.<chain id>.
func (j Onchain) Name() string { return "engagement_conversions." + j.Chain.ID }

// RawInputs: whatever message and event types the campaigns' goals name.
func (j Onchain) RawInputs() aggregator.RawInputs {
	return aggregator.RawInputs{ChainID: j.Chain.ID, Any: true}
}

// Version is the version of the job's rows (see aggregator.Job).
func (Onchain) Version() string { return "1" }

// Tables: conversions are attributed once, when they happen (a rebuild
// must not take them back or count them twice), so nothing is owned.
func (Onchain) Tables() aggregator.Tables {
	return aggregator.Tables{Shared: []string{"conversions", "campaign_goals"}}
}

func (j Onchain) evm() bool { return j.Chain.IsEVM() }

// goal is an onchain campaign_goals row with its campaign's window.
type goal struct {
	ID, CampaignID int64
	MsgType        string
	Contract       string
	EventType      string
	Denom          string
	MinAmount      *math.Int
	Window         time.Duration
	Start, End     time.Time
	Scanned        int64 // -1: not started
}

// Run matches the heights after the goals' scanned heights, up to the
// indexed tip, at most MaxHeightsPerRun of them.
func (j Onchain) Run(ctx context.Context, tx bun.Tx, wm, bound int64) (int64, int64, error) {
	tip, err := store.IndexedTip(ctx, tx, j.Chain.ID)
	if err != nil || tip <= 0 {
		return wm, 0, err
	}
	goals, err := j.goals(ctx, tx, tip)
	if err != nil || len(goals) == 0 {
		return max(wm, tip), 0, err
	}
	lo := tip
	for _, g := range goals {
		lo = min(lo, g.Scanned)
	}
	hi := min(tip, lo+MaxHeightsPerRun)
	var rows int64
	if hi > lo {
		var convs []conversion
		if j.evm() {
			convs, err = j.matchEVM(ctx, tx, goals, lo, hi)
		} else {
			convs, err = j.matchCosmos(ctx, tx, goals, lo, hi)
		}
		if err != nil {
			return wm, 0, err
		}
		if rows, err = insertConversions(ctx, tx, convs); err != nil {
			return wm, 0, err
		}
	}
	ids := make([]int64, len(goals))
	for i, g := range goals {
		ids[i] = g.ID
	}
	if _, err := tx.NewRaw(`UPDATE campaign_goals SET scanned_height = ? WHERE id = ANY(?::bigint[]) AND coalesce(scanned_height, -1) < ?`,
		hi, pgdialect.Array(ids), hi).Exec(ctx); err != nil {
		return wm, 0, fmt.Errorf("goal watermarks: %w", err)
	}
	return hi, rows, nil
}

// goals loads the chain's onchain goals; a goal not started yet begins
// just before the first block at or after its campaign's start (or at the
// tip when there is none yet), and a goal whose campaign's attribution
// window has closed before its scanned height's block is left out.
func (j Onchain) goals(ctx context.Context, tx bun.Tx, tip int64) ([]goal, error) {
	var rows []struct {
		ID         int64      `bun:"id"`
		CampaignID int64      `bun:"campaign_id"`
		MsgType    string     `bun:"msg_type"`
		Contract   string     `bun:"contract"`
		EventType  string     `bun:"event_type"`
		Denom      string     `bun:"denom"`
		MinAmount  *string    `bun:"min_amount"`
		WindowS    int64      `bun:"attribution_window_s"`
		Start      time.Time  `bun:"start_date"`
		End        time.Time  `bun:"end_date"`
		Scanned    *int64     `bun:"scanned_height"`
		ScannedAt  *time.Time `bun:"scanned_time"`
	}
	err := tx.NewRaw(`SELECT g.id, g.campaign_id, coalesce(g.msg_type, '') AS msg_type, coalesce(g.contract, '') AS contract,
		coalesce(g.event_type, '') AS event_type, coalesce(g.denom, '') AS denom, g.min_amount::text AS min_amount,
		c.attribution_window_s, c.start_date, c.end_date, g.scanned_height, b.time AS scanned_time
		FROM campaign_goals g JOIN campaigns c ON c.id = g.campaign_id
		LEFT JOIN block_headers b ON b.chain_id = g.chain_id AND b.height = g.scanned_height
		WHERE g.kind = 'onchain' AND g.chain_id = ? AND coalesce(g.scanned_height, -1) < ?
		ORDER BY g.id`, j.Chain.ID, tip).Scan(ctx, &rows)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("goals of %s: %w", j.Chain.ID, err)
	}
	var out []goal
	var done []int64
	for _, r := range rows {
		g := goal{ID: r.ID, CampaignID: r.CampaignID, MsgType: r.MsgType, Contract: r.Contract, EventType: r.EventType,
			Denom: r.Denom, Window: time.Duration(r.WindowS) * time.Second, Start: r.Start, End: r.End, Scanned: -1}
		if r.MinAmount != nil {
			n, ok := math.NewIntFromString(*r.MinAmount)
			if !ok {
				return nil, fmt.Errorf("goal %d: min_amount %q", r.ID, *r.MinAmount)
			}
			g.MinAmount = &n
		}
		if r.Scanned != nil {
			g.Scanned = *r.Scanned
			if r.ScannedAt != nil && r.ScannedAt.After(g.End.Add(g.Window)) {
				done = append(done, g.ID) // the window has closed: nothing more can convert
				continue
			}
		} else {
			// A new goal's scan starts at its start time: the heights
			// before it count as scanned (all of them, up to the tip, when
			// no block has reached it yet).
			before, err := store.HeightBefore(ctx, tx, j.Chain.ID, g.Start)
			if err != nil {
				return nil, err
			}
			g.Scanned = min(before, tip)
		}
		out = append(out, g)
	}
	if len(done) > 0 {
		if _, err := tx.NewRaw(`UPDATE campaign_goals SET scanned_height = ? WHERE id = ANY(?::bigint[])`, tip, pgdialect.Array(done)).Exec(ctx); err != nil {
			return nil, fmt.Errorf("close goals: %w", err)
		}
	}
	return out, nil
}

// conversion is a conversions row.
type conversion struct {
	bun.BaseModel `bun:"table:conversions"`

	CampaignID  int64     `bun:"campaign_id"`
	GoalID      int64     `bun:"goal_id"`
	SourceKey   string    `bun:"source_key"`
	Source      string    `bun:"source"`
	AddressNorm string    `bun:"address_norm"`
	Attribution string    `bun:"attribution"`
	ExposedAt   time.Time `bun:"exposed_at"`
	ConvertedAt time.Time `bun:"converted_at"`
	ChainID     *string   `bun:"chain_id"`
	TxHash      *string   `bun:"tx_hash"`
	Height      *int64    `bun:"height"`
	EventID     *string   `bun:"event_id"`
	Verified    bool      `bun:"verified"`
	Denom       *string   `bun:"denom"`
	Amount      *string   `bun:"amount"`
	ValueUSD    *string   `bun:"value_usd"`
}

func insertConversions(ctx context.Context, tx bun.Tx, convs []conversion) (int64, error) {
	var n int64
	for start := 0; start < len(convs); start += 1000 {
		batch := convs[start:min(start+1000, len(convs))]
		res, err := tx.NewInsert().Model(&batch).On("CONFLICT DO NOTHING").Exec(ctx)
		if err != nil {
			return n, fmt.Errorf("insert conversions: %w", err)
		}
		k, _ := res.RowsAffected()
		n += k
	}
	return n, nil
}

// exposure is a view or click of a campaign by an address.
type exposure struct {
	at    time.Time
	click bool
}

// exposures maps campaign id and normalised address to the address's views
// and clicks of the campaign in [from, to], oldest first; an address's
// clicks include those of the anonymous visitors linked to it.
type exposures map[int64]map[string][]exposure

func loadExposures(ctx context.Context, tx bun.Tx, campaigns []int64, addrs []string, from, to time.Time) (exposures, error) {
	out := exposures{}
	if len(campaigns) == 0 || len(addrs) == 0 {
		return out, nil
	}
	rows, err := tx.QueryContext(ctx, `
SELECT campaign_id, address_norm, shown_at, false FROM impressions
WHERE campaign_id = ANY(?::bigint[]) AND address_norm = ANY(?::text[]) AND shown_at BETWEEN ? AND ?
UNION ALL
SELECT campaign_id, address_norm, clicked_at, true FROM clicks
WHERE campaign_id = ANY(?::bigint[]) AND address_norm = ANY(?::text[]) AND clicked_at BETWEEN ? AND ?
UNION
-- The clicks of anonymous visitors since linked to the wallet: the click id
-- their website events carried (identity_links, from identify or alias).
SELECT c.campaign_id, l.identity_norm, c.clicked_at, true FROM identity_links l
JOIN tracked_events e ON e.anonymous_id = l.anonymous_id AND e.click_id IS NOT NULL
JOIN clicks c ON c.click_id = e.click_id
WHERE l.identity_norm = ANY(?::text[]) AND c.campaign_id = ANY(?::bigint[]) AND c.clicked_at BETWEEN ? AND ?
ORDER BY 3`, pgdialect.Array(campaigns), pgdialect.Array(addrs), from, to, pgdialect.Array(campaigns), pgdialect.Array(addrs), from, to,
		pgdialect.Array(addrs), pgdialect.Array(campaigns), from, to)
	if err != nil {
		return nil, fmt.Errorf("exposures: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var c int64
		var a string
		var e exposure
		if err := rows.Scan(&c, &a, &e.at, &e.click); err != nil {
			return nil, fmt.Errorf("exposures: %w", err)
		}
		if out[c] == nil {
			out[c] = map[string][]exposure{}
		}
		out[c][a] = append(out[c][a], e)
	}
	return out, rows.Err()
}

// attribute finds the exposure a conversion at t is credited to: the last
// view or click of the campaign by addr in [t - window, t + skew];
// attribution is click when any click falls in that interval.
func (x exposures) attribute(campaign int64, addr string, t time.Time, window, skew time.Duration) (exposedAt time.Time, attribution string, ok bool) {
	attribution = "impression"
	for _, e := range x[campaign][addr] {
		if e.at.After(t.Add(skew)) {
			break
		}
		if e.at.Before(t.Add(-window)) {
			continue
		}
		exposedAt, ok = e.at, true
		if e.click {
			attribution = "click"
		}
	}
	return exposedAt, attribution, ok
}

// candidateTx is a successful transaction signed by an exposed wallet.
type candidateTx struct {
	Height  int64     `bun:"height"`
	TxIndex int       `bun:"tx_index"`
	Hash    string    `bun:"hash"`
	Time    time.Time `bun:"time"`
	Signers []string  `bun:"signers,array"`
}

// matchCosmos matches the successful transactions of heights (lo, hi].
func (j Onchain) matchCosmos(ctx context.Context, tx bun.Tx, goals []goal, lo, hi int64) ([]conversion, error) {
	var txs []candidateTx
	if err := tx.NewRaw(`SELECT t.height, t.tx_index, t.hash, b.time, t.signers FROM txs t
		JOIN blocks b ON b.chain_id = t.chain_id AND b.height = t.height
		WHERE t.chain_id = ? AND t.height > ? AND t.height <= ? AND t.code = 0 AND NOT t.undecodable
		ORDER BY t.height, t.tx_index`, j.Chain.ID, lo, hi).Scan(ctx, &txs); err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("txs of %s %d-%d: %w", j.Chain.ID, lo+1, hi, err)
	}
	if len(txs) == 0 {
		return nil, nil
	}
	// Normalise every signer once; the exposures of those addresses are
	// the only ones that can convert.
	norm := map[string]string{}
	var addrs []string
	for _, t := range txs {
		for _, s := range t.Signers {
			if _, seen := norm[s]; seen {
				continue
			}
			n, err := engagement.Normalize(s)
			if err != nil {
				n = ""
			} else {
				addrs = append(addrs, n)
			}
			norm[s] = n
		}
	}
	campaigns, maxWindow := goalCampaigns(goals)
	exp, err := loadExposures(ctx, tx, campaigns, addrs, txs[0].Time.Add(-maxWindow), txs[len(txs)-1].Time.Add(BlockTimeSkew))
	if err != nil || len(exp) == 0 {
		return nil, err
	}
	// Keep the transactions with at least one exposed signer, and load
	// their messages, events and transfers.
	type signerHit struct {
		bech32, norm string
	}
	hits := map[[2]int64][]signerHit{}
	var keep []candidateTx
	for _, t := range txs {
		var hs []signerHit
		for _, s := range t.Signers {
			n := norm[s]
			if n == "" {
				continue
			}
			for _, c := range campaigns {
				if len(exp[c][n]) > 0 {
					hs = append(hs, signerHit{s, n})
					break
				}
			}
		}
		if len(hs) > 0 {
			hits[[2]int64{t.Height, int64(t.TxIndex)}] = hs
			keep = append(keep, t)
		}
	}
	if len(keep) == 0 {
		return nil, nil
	}
	detail, err := loadTxDetail(ctx, tx, j.Chain.ID, keep)
	if err != nil {
		return nil, err
	}
	var out []conversion
	for _, t := range keep {
		d := detail[[2]int64{t.Height, int64(t.TxIndex)}]
		for _, s := range hits[[2]int64{t.Height, int64(t.TxIndex)}] {
			for _, g := range goals {
				if t.Height <= g.Scanned {
					continue
				}
				exposedAt, attribution, ok := exp.attribute(g.CampaignID, s.norm, t.Time, g.Window, BlockTimeSkew)
				if !ok {
					continue
				}
				for _, m := range d.actions(g) {
					sent := d.sentBy(s.bech32, m)
					var amount *math.Int
					if g.Denom != "" {
						a := sent[g.Denom]
						if a.IsNil() {
							a = math.ZeroInt()
						}
						amount = &a
					}
					if g.MinAmount != nil && (amount == nil || amount.LT(*g.MinAmount)) {
						continue
					}
					c := conversion{CampaignID: g.CampaignID, GoalID: g.ID, Source: "onchain", AddressNorm: s.norm,
						SourceKey:   j.Chain.ID + ":" + t.Hash + ":" + strconv.Itoa(m),
						Attribution: attribution, ExposedAt: exposedAt, ConvertedAt: t.Time,
						ChainID: &j.Chain.ID, TxHash: ptr(t.Hash), Height: ptr(t.Height), Verified: true}
					if amount != nil {
						c.Denom, c.Amount = ptr(g.Denom), ptr(amount.String())
					}
					v, ok, err := j.valueUSD(ctx, tx, sent, t.Time)
					if err != nil {
						return nil, err
					}
					if ok {
						c.ValueUSD = ptr(v.String())
					}
					out = append(out, c)
				}
			}
		}
	}
	return out, nil
}

// tokenValueUSD is the USD value of amount base units of an EVM chain's
// configured token at its configured price (price_usd; the peg for the USD
// stablecoins, as the stablecoin reports value it); false for a token not
// configured.
func (j Onchain) tokenValueUSD(token string, amount math.Int) (math.LegacyDec, bool) {
	for _, t := range j.Chain.Tokens {
		if strings.EqualFold(t.Address, token) {
			scale := math.LegacyNewDec(10).Power(uint64(t.Decimals))
			return math.LegacyNewDecFromInt(amount).Quo(scale).Mul(t.Price()), true
		}
	}
	return math.LegacyDec{}, false
}

// valueUSD is the USD value of the coins sent, at the dex chain's hourly
// price; false when the chain is not the dex chain or no coin is priced.
func (j Onchain) valueUSD(ctx context.Context, tx bun.Tx, sent map[string]math.Int, at time.Time) (math.LegacyDec, bool, error) {
	if j.Prices == nil || j.Prices.Market.ChainID != j.Chain.ID {
		return math.LegacyDec{}, false, nil
	}
	total, priced := math.LegacyZeroDec(), false
	for denom, amt := range sent {
		v, ok, err := j.Prices.Value(ctx, tx, denom, amt, at)
		if err != nil {
			return math.LegacyDec{}, false, err
		}
		if ok {
			total, priced = total.Add(v), true
		}
	}
	return total, priced, nil
}

func goalCampaigns(goals []goal) ([]int64, time.Duration) {
	seen := map[int64]bool{}
	var ids []int64
	var w time.Duration
	for _, g := range goals {
		if !seen[g.CampaignID] {
			seen[g.CampaignID] = true
			ids = append(ids, g.CampaignID)
		}
		w = max(w, g.Window)
	}
	return ids, w
}

func ptr[T any](v T) *T { return &v }

// txDetail is what goal matching reads of one transaction.
type txDetail struct {
	msgs      []msgRow
	events    []eventRow
	transfers []transferRow // coins spent by an address, per message
}

type msgRow struct {
	MsgIndex int    `bun:"msg_index"`
	TypeURL  string `bun:"type_url"`
	Contract string `bun:"contract"`
}

type eventRow struct {
	MsgIndex int    `bun:"msg_index"`
	Type     string `bun:"type"`
}

type transferRow struct {
	MsgIndex int    `bun:"msg_index"`
	Sender   string `bun:"sender"`
	Denom    string `bun:"denom"`
	Amount   string `bun:"amount"`
}

// msgIndexed reports whether the chain tags events with msg_index
// (cosmos-sdk 0.50+); older chains leave every event at -1.
func (d txDetail) msgIndexed() bool {
	for _, e := range d.events {
		if e.MsgIndex >= 0 {
			return true
		}
	}
	return false
}

// actions are the message indexes of the transaction that satisfy every
// condition the goal sets: message type, contract executed, event type
// emitted by that message (any event of the transaction on chains without
// msg_index).
func (d txDetail) actions(g goal) []int {
	indexed := d.msgIndexed()
	var out []int
	for _, m := range d.msgs {
		if g.MsgType != "" && m.TypeURL != g.MsgType {
			continue
		}
		if g.Contract != "" && m.Contract != g.Contract {
			continue
		}
		if g.EventType != "" {
			found := false
			for _, e := range d.events {
				if e.Type == g.EventType && (!indexed || e.MsgIndex == m.MsgIndex) {
					found = true
					break
				}
			}
			if !found {
				continue
			}
		}
		out = append(out, m.MsgIndex)
	}
	return out
}

// sentBy sums the coins sender spent in message msg. On chains
// without msg_index it sums the whole transaction, which then includes the
// fee the sender paid (the events do not tell the two apart there).
func (d txDetail) sentBy(sender string, msg int) map[string]math.Int {
	indexed := d.msgIndexed()
	out := map[string]math.Int{}
	for _, t := range d.transfers {
		if t.Sender != sender || (indexed && t.MsgIndex != msg) {
			continue
		}
		n, ok := math.NewIntFromString(t.Amount)
		if !ok {
			continue
		}
		if cur, ok := out[t.Denom]; ok {
			n = n.Add(cur)
		}
		out[t.Denom] = n
	}
	return out
}

// loadTxDetail reads the messages, events and coins spent of txs.
func loadTxDetail(ctx context.Context, tx bun.Tx, chainID string, txs []candidateTx) (map[[2]int64]*txDetail, error) {
	hs := make([]int64, len(txs))
	is := make([]int64, len(txs))
	out := map[[2]int64]*txDetail{}
	for i, t := range txs {
		hs[i], is[i] = t.Height, int64(t.TxIndex)
		out[[2]int64{t.Height, int64(t.TxIndex)}] = &txDetail{}
	}
	keys := `(SELECT unnest(?::bigint[]) AS height, unnest(?::int[]) AS tx_index) k`
	var msgs []struct {
		Height  int64 `bun:"height"`
		TxIndex int64 `bun:"tx_index"`
		msgRow
	}
	if err := tx.NewRaw(`SELECT m.height, m.tx_index, m.msg_index, m.type_url, coalesce(m.body->>'contract', '') AS contract
		FROM `+keys+` JOIN messages m ON m.chain_id = ? AND m.height = k.height AND m.tx_index = k.tx_index
		ORDER BY m.height, m.tx_index, m.msg_index`, pgdialect.Array(hs), pgdialect.Array(is), chainID).Scan(ctx, &msgs); err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("messages: %w", err)
	}
	for _, m := range msgs {
		d := out[[2]int64{m.Height, m.TxIndex}]
		d.msgs = append(d.msgs, m.msgRow)
	}
	var evs []struct {
		Height  int64 `bun:"height"`
		TxIndex int64 `bun:"tx_index"`
		eventRow
	}
	if err := tx.NewRaw(`SELECT e.height, e.tx_index, e.msg_index, e.type
		FROM `+keys+` JOIN events e ON e.chain_id = ? AND e.height = k.height AND e.tx_index = k.tx_index`,
		pgdialect.Array(hs), pgdialect.Array(is), chainID).Scan(ctx, &evs); err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("events: %w", err)
	}
	for _, e := range evs {
		d := out[[2]int64{e.Height, e.TxIndex}]
		d.events = append(d.events, e.eventRow)
	}
	// Coins spent (coin_spent balance changes) with the msg_index of their
	// event: a message's own spends, never the fee (which has none).
	var trs []struct {
		Height  int64 `bun:"height"`
		TxIndex int64 `bun:"tx_index"`
		transferRow
	}
	if err := tx.NewRaw(`SELECT bc.height, bc.tx_index, e.msg_index, bc.address AS sender, bc.denom, (-bc.delta)::text AS amount
		FROM `+keys+` JOIN balance_changes bc ON bc.chain_id = ? AND bc.height = k.height AND bc.tx_index = k.tx_index
		JOIN events e ON e.chain_id = bc.chain_id AND e.height = bc.height AND e.tx_index = bc.tx_index AND e.event_index = bc.event_index
		WHERE bc.delta < 0`, pgdialect.Array(hs), pgdialect.Array(is), chainID).Scan(ctx, &trs); err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("coins spent: %w", err)
	}
	for _, t := range trs {
		d := out[[2]int64{t.Height, t.TxIndex}]
		d.transfers = append(d.transfers, t.transferRow)
	}
	return out, nil
}

// matchEVM matches the ERC-20 transfers of heights (lo, hi]: a goal on an
// EVM chain names the token contract; the wallet is the sender.
func (j Onchain) matchEVM(ctx context.Context, tx bun.Tx, goals []goal, lo, hi int64) ([]conversion, error) {
	tokens := map[string]bool{}
	var list []string
	for _, g := range goals {
		t := strings.ToLower(g.Contract)
		if t != "" && !tokens[t] {
			tokens[t] = true
			list = append(list, t)
		}
	}
	if len(list) == 0 {
		return nil, nil
	}
	var trs []struct {
		Height   int64     `bun:"height"`
		TxHash   string    `bun:"tx_hash"`
		LogIndex int       `bun:"log_index"`
		Token    string    `bun:"token"`
		Sender   string    `bun:"sender"`
		Amount   string    `bun:"amount"`
		Time     time.Time `bun:"time"`
	}
	if err := tx.NewRaw(`SELECT t.height, t.tx_hash, t.log_index, t.token, t.sender, t.amount::text AS amount, b.time
		FROM erc20_transfers t JOIN evm_blocks b ON b.chain_id = t.chain_id AND b.height = t.height
		WHERE t.chain_id = ? AND t.token = ANY(?::text[]) AND t.height > ? AND t.height <= ? AND t.kind = 'transfer'
		ORDER BY t.height, t.log_index`, j.Chain.ID, pgdialect.Array(list), lo, hi).Scan(ctx, &trs); err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("erc20 transfers of %s %d-%d: %w", j.Chain.ID, lo+1, hi, err)
	}
	if len(trs) == 0 {
		return nil, nil
	}
	var addrs []string
	seen := map[string]bool{}
	for _, t := range trs {
		n := strings.TrimPrefix(t.Sender, "0x")
		if !seen[n] {
			seen[n] = true
			addrs = append(addrs, n)
		}
	}
	campaigns, maxWindow := goalCampaigns(goals)
	exp, err := loadExposures(ctx, tx, campaigns, addrs, trs[0].Time.Add(-maxWindow), trs[len(trs)-1].Time.Add(BlockTimeSkew))
	if err != nil || len(exp) == 0 {
		return nil, err
	}
	var out []conversion
	for _, t := range trs {
		n := strings.TrimPrefix(t.Sender, "0x")
		amount, ok := math.NewIntFromString(t.Amount)
		if !ok {
			return nil, fmt.Errorf("erc20 transfer %s/%d: amount %q", t.TxHash, t.LogIndex, t.Amount)
		}
		for _, g := range goals {
			if t.Height <= g.Scanned || !strings.EqualFold(g.Contract, t.Token) {
				continue
			}
			if g.MinAmount != nil && amount.LT(*g.MinAmount) {
				continue
			}
			exposedAt, attribution, ok := exp.attribute(g.CampaignID, n, t.Time, g.Window, BlockTimeSkew)
			if !ok {
				continue
			}
			c := conversion{CampaignID: g.CampaignID, GoalID: g.ID, Source: "onchain", AddressNorm: n,
				SourceKey:   j.Chain.ID + ":" + t.TxHash + ":" + strconv.Itoa(t.LogIndex),
				Attribution: attribution, ExposedAt: exposedAt, ConvertedAt: t.Time,
				ChainID: &j.Chain.ID, TxHash: ptr(t.TxHash), Height: ptr(t.Height), Verified: true,
				Denom: ptr(t.Token), Amount: ptr(amount.String())}
			if v, ok := j.tokenValueUSD(t.Token, amount); ok {
				c.ValueUSD = ptr(v.String())
			}
			out = append(out, c)
		}
	}
	return out, nil
}
