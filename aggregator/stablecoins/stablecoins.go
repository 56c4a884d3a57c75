// Package stablecoins builds the report tables of the stablecoin group for
// one EVM chain from the rows of the EVM indexer (indexer/evm, decoding in
// chains/evm): erc20_transfers (transfers, mints, burns) and
// evm_bridge_transfers (CCTP flows), valued in USD with the configured
// token prices and classified by the configured address labels.
package stablecoins

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/chainlens/chainlens/aggregator"

	report "github.com/chainlens/chainlens/report/stablecoins"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"

	"github.com/chainlens/chainlens/config"
	"github.com/chainlens/chainlens/store"
)

// maxBlocks bounds the blocks one run reads (a busy chain's stablecoins
// move some 100 times per block).
const maxBlocks = 20_000

// Tables are the report tables, all keyed by chain_id first.
var Tables = []string{"stablecoin_minute", "stablecoin_senders_minute", "stablecoin_senders_bucket", "stablecoin_category_minute",
	"stablecoin_whales", "stablecoin_bridge_minute"}

// Flows is the job of one EVM chain. Each run adds the blocks past its
// watermark to
//   - stablecoin_minute: minted, burned and transferred USD per token and
//     minute, and the transfer count;
//   - stablecoin_senders_minute: each minute's distinct senders per token;
//   - stablecoin_senders_bucket: the distinct senders of every bucket of
//     each report.Buckets size the run's minutes fall in, counted again
//     from stablecoin_senders_minute (an hour's bucket: an hour of senders);
//   - stablecoin_category_minute: USD received and sent by each counterparty
//     category, and the volume attributed to it;
//   - stablecoin_whales: movements of at least report.WhaleUSD;
//   - stablecoin_bridge_minute: CCTP flows (remote chain from the domain)
//     and transfers into (out) or out of (in) bridge-labelled addresses
//     outside txs with a CCTP flow of the same token (remote chain unknown).
//
// Additions, the watermark and stablecoin_report_state commit in one
// transaction. The chain's reports are rebuilt from the first block when
// the config they were valued with changed (prices, decimals, labels, CCTP
// domains) or when the block at the watermark is no longer the indexed one
// (the indexer rewound a reorg below it, or indexed the chain again with
// other block times: a replayed recording).
type Flows struct {
	Chain config.Chain
	// MaxBlocks bounds the blocks one run reads; 0 = maxBlocks.
	MaxBlocks int64
}

// Name is the job name.
func (j Flows) Name() string { return report.JobPrefix + j.Chain.ID }

// Version is the version of the job's rows: the fingerprint of its rules
// and of the chain's settings the rows are valued with (tokens, prices,
// labels, CCTP), so a change of either rebuilds the chain's rows.
func (j Flows) Version() string { return j.Fingerprint() }

// Tables are the tables the job writes, the chain's rows only.
func (j Flows) Tables() aggregator.Tables {
	return aggregator.Tables{Owned: append(slices.Clone(Tables), "stablecoin_report_state"), ChainID: j.Chain.ID}
}

// Jobs returns one job per configured EVM chain.
func Jobs(cfg *config.Config) []Flows {
	var out []Flows
	for _, ch := range cfg.Chains {
		if ch.IsEVM() {
			out = append(out, Flows{Chain: ch})
		}
	}
	return out
}

// Fingerprint identifies the config the reports are valued with.
func (j Flows) Fingerprint() string {
	type tok struct {
		Address  string
		Decimals int
		Price    string
	}
	var f struct {
		Rules   int // reportRules: a change of how rows are computed rebuilds them
		Tokens  []tok
		Labels  [][2]string
		CCTP    *config.CCTP
		Domains map[int64]string
	}
	f.Rules = reportRules
	for _, t := range j.Chain.Tokens {
		f.Tokens = append(f.Tokens, tok{strings.ToLower(t.Address), t.Decimals, t.Price().String()})
	}
	for a, c := range j.Chain.AddressLabels {
		f.Labels = append(f.Labels, [2]string{strings.ToLower(a), c})
	}
	slices.SortFunc(f.Labels, func(a, b [2]string) int { return strings.Compare(a[0], b[0]) })
	f.CCTP, f.Domains = j.Chain.CCTP, config.CCTPDomains
	b, _ := json.Marshal(f)
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// reportRules numbers the versions of the job's rules; raising it rebuilds
// every chain's reports. 2: an escrow transfer in a tx with a CCTP flow of
// the same token is that flow. 3: senders per bucket.
const reportRules = 3

// Run advances the chain's reports from watermark wm to the indexed tip.
func (j Flows) Run(ctx context.Context, tx bun.Tx, wm, bound int64) (int64, int64, error) {
	id := j.Chain.ID
	tip, err := store.ContiguousTip(ctx, tx, id)
	if err != nil {
		return wm, 0, err
	}
	var st struct {
		Height      int64      `bun:"height"`
		Hash        string     `bun:"block_hash"`
		Time        *time.Time `bun:"block_time"`
		Fingerprint string     `bun:"fingerprint"`
	}
	err = tx.NewRaw("SELECT height, block_hash, block_time, fingerprint FROM stablecoin_report_state WHERE chain_id = ?", id).Scan(ctx, &st)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return 0, 0, fmt.Errorf("stablecoin_report_state: %w", err)
	}
	fp := j.Fingerprint()
	// A watermark of 0 (first run, or reset by an operator) builds from
	// scratch too: rows must never be added twice. (A new Version, which
	// holds the fingerprint, is rebuilt by the scheduler.)
	rebuild := wm == 0 || errors.Is(err, sql.ErrNoRows) || st.Height != wm
	if !rebuild {
		var b struct {
			Hash string    `bun:"hash"`
			Time time.Time `bun:"time"`
		}
		herr := tx.NewRaw("SELECT hash, time FROM evm_blocks WHERE chain_id = ? AND height = ?", id, wm).Scan(ctx, &b)
		if herr != nil && !errors.Is(herr, sql.ErrNoRows) {
			return 0, 0, fmt.Errorf("block %d: %w", wm, herr)
		}
		rebuild = !strings.EqualFold(b.Hash, st.Hash) || st.Time == nil || !st.Time.Equal(b.Time)
	}
	if rebuild {
		if err := store.DeleteChainRows(ctx, tx, id, Tables...); err != nil {
			return 0, 0, err
		}
		wm = 0
	}
	if wm, err = store.SkipToFirst(ctx, tx, id, wm); err != nil {
		return 0, 0, err
	}
	if tip <= wm {
		return wm, 0, nil
	}
	step := j.MaxBlocks
	if step <= 0 {
		step = maxBlocks
	}
	to := min(tip, wm+step)
	var last struct {
		Hash string    `bun:"hash"`
		Time time.Time `bun:"time"`
	}
	if err := tx.NewRaw("SELECT hash, time FROM evm_blocks WHERE chain_id = ? AND height = ?", id, to).Scan(ctx, &last); err != nil {
		return 0, 0, fmt.Errorf("block %d: %w", to, err)
	}
	if _, err := tx.NewRaw(`INSERT INTO stablecoin_report_state (chain_id, height, block_hash, block_time, fingerprint) VALUES (?, ?, ?, ?, ?)
		ON CONFLICT (chain_id) DO UPDATE SET height = EXCLUDED.height, block_hash = EXCLUDED.block_hash, block_time = EXCLUDED.block_time,
			fingerprint = EXCLUDED.fingerprint`,
		id, to, strings.ToLower(last.Hash), last.Time, fp).Exec(ctx); err != nil {
		return 0, 0, fmt.Errorf("stablecoin_report_state: %w", err)
	}

	// Arguments of every query: ?0 chain, ?1 watermark, ?2 last block,
	// ?3 token addresses, ?4 their USD factors (price × 10^-decimals),
	// ?5 labelled addresses, ?6 their categories, ?7 CCTP domains, ?8 their
	// chain ids, ?9 the whale threshold, ?10 the bucket sizes in seconds,
	// ?11 and ?12 the first and last minute of the run's blocks.
	var tokens, factors []string
	for _, t := range j.Chain.Tokens {
		tokens = append(tokens, strings.ToLower(t.Address))
		factors = append(factors, t.Price().String()+"e-"+strconv.Itoa(t.Decimals))
	}
	var addrs, cats []string
	for a, c := range j.Chain.AddressLabels {
		addrs, cats = append(addrs, strings.ToLower(a)), append(cats, c)
	}
	var domains []int64
	var domainChains []string
	if c := j.Chain.CCTP; c != nil {
		seen := map[int64]bool{}
		for d := range config.CCTPDomains {
			seen[d] = true
		}
		for d := range c.Domains {
			seen[d] = true
		}
		for d := range seen {
			domains, domainChains = append(domains, d), append(domainChains, c.DomainChain(d))
		}
	}
	aggs := slices.Sorted(maps.Values(report.Buckets))
	// The minutes of the run's blocks (sendersBucketSQL recounts their buckets).
	var lo, hi bun.NullTime // none: the bucket statement adds nothing
	if err := tx.NewRaw(`SELECT date_trunc('minute', min(time)), date_trunc('minute', max(time)) FROM evm_blocks WHERE chain_id = ? AND height > ? AND height <= ?`,
		id, wm, to).Scan(ctx, &lo, &hi); err != nil {
		return 0, 0, fmt.Errorf("minutes of blocks %d..%d: %w", wm+1, to, err)
	}
	args := []any{id, wm, to, pgdialect.Array(tokens), pgdialect.Array(factors), pgdialect.Array(addrs), pgdialect.Array(cats),
		pgdialect.Array(domains), pgdialect.Array(domainChains), report.WhaleUSD, pgdialect.Array(aggs), lo.Time, hi.Time}
	var rows int64
	for _, step := range []struct{ name, query string }{
		{"stablecoin_minute", minuteSQL},
		{"stablecoin_senders_minute", sendersSQL},
		{"stablecoin_senders_bucket", sendersBucketSQL},
		{"stablecoin_category_minute", categorySQL},
		{"stablecoin_whales", whalesSQL},
		{"stablecoin_bridge_minute cctp", bridgeCCTPSQL},
		{"stablecoin_bridge_minute escrow", bridgeEscrowSQL},
	} {
		res, err := tx.NewRaw(step.query, args...).Exec(ctx)
		if err != nil {
			return 0, 0, fmt.Errorf("%s: %w", step.name, err)
		}
		n, _ := res.RowsAffected()
		rows += n
	}
	return to, rows, nil
}

// moves are the run's movements of configured tokens with their minute,
// USD value and the categories of both sides.
const moves = `WITH tok AS (SELECT * FROM unnest(?3::text[], ?4::numeric[]) AS t(token, factor)),
	lab AS (SELECT * FROM unnest(?5::text[], ?6::text[]) AS l(address, category)),
	m AS (
		SELECT t.height, t.log_index, t.tx_hash, t.token, t.sender, t.recipient, t.kind, b.time,
			date_trunc('minute', b.time) AS minute, t.amount * tok.factor AS usd,
			CASE WHEN t.sender = '0x0000000000000000000000000000000000000000' THEN 'mint_burn'
				ELSE coalesce(ls.category, 'other') END AS sender_cat,
			CASE WHEN t.recipient = '0x0000000000000000000000000000000000000000' THEN 'mint_burn'
				ELSE coalesce(lr.category, 'other') END AS recipient_cat
		FROM erc20_transfers t
		JOIN tok ON tok.token = t.token
		JOIN evm_blocks b ON b.chain_id = t.chain_id AND b.height = t.height
		LEFT JOIN lab ls ON ls.address = t.sender
		LEFT JOIN lab lr ON lr.address = t.recipient
		WHERE t.chain_id = ?0 AND t.height > ?1 AND t.height <= ?2)
	`

const (
	minuteSQL = moves + `INSERT INTO stablecoin_minute AS s (chain_id, token, minute, minted_usd, burned_usd, volume_usd, transfers)
		SELECT ?0, token, minute,
			coalesce(sum(usd) FILTER (WHERE kind = 'mint'), 0),
			coalesce(sum(usd) FILTER (WHERE kind = 'burn'), 0),
			coalesce(sum(usd) FILTER (WHERE kind = 'transfer'), 0),
			count(*) FILTER (WHERE kind = 'transfer')
		FROM m GROUP BY token, minute
		ON CONFLICT (chain_id, minute, token) DO UPDATE SET
			minted_usd = s.minted_usd + EXCLUDED.minted_usd, burned_usd = s.burned_usd + EXCLUDED.burned_usd,
			volume_usd = s.volume_usd + EXCLUDED.volume_usd, transfers = s.transfers + EXCLUDED.transfers`

	sendersSQL = moves + `INSERT INTO stablecoin_senders_minute (chain_id, token, minute, sender)
		SELECT DISTINCT ?0, token, minute, sender FROM m WHERE kind = 'transfer'
		ON CONFLICT DO NOTHING`

	// The buckets the run's minutes (?11 to ?12) fall in, of every size
	// (?10), counted whole again from the minutes' senders: one index range
	// per size (a join on the range would read every minute of the chain).
	sendersBucketSQL = `INSERT INTO stablecoin_senders_bucket AS s (chain_id, agg_s, bucket, token, senders)
		SELECT ?0, a.s, c.bucket, c.token, c.senders
		FROM unnest(?10::int[]) AS a(s) CROSS JOIN LATERAL (
			SELECT date_bin(make_interval(secs => a.s), m.minute, timestamptz '1970-01-01 00:00:00+00') AS bucket, m.token,
				count(DISTINCT m.sender) AS senders
			FROM stablecoin_senders_minute m
			WHERE m.chain_id = ?0 AND m.minute >= date_bin(make_interval(secs => a.s), ?11::timestamptz, timestamptz '1970-01-01 00:00:00+00')
				AND m.minute <= ?12::timestamptz
			GROUP BY 1, 2) c
		ON CONFLICT (chain_id, agg_s, bucket, token) DO UPDATE SET senders = EXCLUDED.senders`

	categorySQL = moves + `, c AS (
			SELECT token, minute, recipient_cat AS category, usd AS inflow, 0 AS outflow, 0 AS volume FROM m
			UNION ALL SELECT token, minute, sender_cat, 0, usd, 0 FROM m
			UNION ALL SELECT token, minute,
				CASE WHEN kind <> 'transfer' THEN 'mint_burn' WHEN recipient_cat <> 'other' THEN recipient_cat ELSE sender_cat END,
				0, 0, usd FROM m)
		INSERT INTO stablecoin_category_minute AS s (chain_id, token, minute, category, inflow_usd, outflow_usd, volume_usd)
		SELECT ?0, token, minute, category, sum(inflow), sum(outflow), sum(volume) FROM c GROUP BY token, minute, category
		ON CONFLICT (chain_id, minute, token, category) DO UPDATE SET
			inflow_usd = s.inflow_usd + EXCLUDED.inflow_usd, outflow_usd = s.outflow_usd + EXCLUDED.outflow_usd,
			volume_usd = s.volume_usd + EXCLUDED.volume_usd`

	whalesSQL = moves + `INSERT INTO stablecoin_whales (chain_id, height, log_index, time, tx_hash, token, sender, recipient, amount_usd)
		SELECT ?0, height, log_index, time, tx_hash, token, sender, recipient, usd FROM m WHERE usd >= ?9::numeric
		ON CONFLICT (chain_id, height, log_index) DO UPDATE SET amount_usd = EXCLUDED.amount_usd`

	bridgeCCTPSQL = `WITH tok AS (SELECT * FROM unnest(?3::text[], ?4::numeric[]) AS t(token, factor)),
		dom AS (SELECT * FROM unnest(?7::bigint[], ?8::text[]) AS d(domain, chain))
		INSERT INTO stablecoin_bridge_minute AS s (chain_id, token, minute, direction, remote_chain, amount_usd, flows)
		SELECT ?0, f.token, date_trunc('minute', b.time), f.direction,
			coalesce((SELECT chain FROM dom WHERE domain = f.remote_domain), ''), sum(f.amount * tok.factor), count(*)
		FROM evm_bridge_transfers f
		JOIN tok ON tok.token = f.token
		JOIN evm_blocks b ON b.chain_id = f.chain_id AND b.height = f.height
		WHERE f.chain_id = ?0 AND f.height > ?1 AND f.height <= ?2
		GROUP BY 2, 3, 4, 5
		ON CONFLICT (chain_id, minute, token, direction, remote_chain) DO UPDATE SET
			amount_usd = s.amount_usd + EXCLUDED.amount_usd, flows = s.flows + EXCLUDED.flows`

	// Transfers into a bridge escrow leave the chain; out of one, arrive.
	// A transfer in a tx with a CCTP burn or mint of the same token is that
	// CCTP flow (the deposit pulled into the TokenMessenger or TokenMinter
	// before the burn), counted once from the CCTP event, whatever the
	// contract is labelled.
	bridgeEscrowSQL = moves + `, e AS (SELECT address FROM lab WHERE category = 'bridge'),
		x AS (SELECT m.* FROM m WHERE NOT EXISTS (SELECT 1 FROM evm_bridge_transfers b
			WHERE b.chain_id = ?0 AND b.height = m.height AND b.tx_hash = m.tx_hash AND b.token = m.token)),
		f AS (
			SELECT token, minute, 'out' AS direction, usd FROM x
				WHERE kind = 'transfer' AND recipient IN (SELECT address FROM e) AND sender NOT IN (SELECT address FROM e)
			UNION ALL SELECT token, minute, 'in', usd FROM x
				WHERE kind = 'transfer' AND sender IN (SELECT address FROM e) AND recipient NOT IN (SELECT address FROM e))
		INSERT INTO stablecoin_bridge_minute AS s (chain_id, token, minute, direction, remote_chain, amount_usd, flows)
		SELECT ?0, token, minute, direction, '', sum(usd), count(*) FROM f GROUP BY token, minute, direction
		ON CONFLICT (chain_id, minute, token, direction, remote_chain) DO UPDATE SET
			amount_usd = s.amount_usd + EXCLUDED.amount_usd, flows = s.flows + EXCLUDED.flows`
)
