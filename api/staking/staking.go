// Package staking serves the multi-chain staking group from the report
// tables of the liquid_staking job (aggregator/liquidstaking), which reads
// the Cosmos Hub's staking and x/liquid events and the state snapshots of
// the providers' delegations (indexer/snapshot), and
// /aez/revenue_share_by_consumer from the ics_rewards job
// (aggregator/icsrewards) priced by the dex chain's dex_prices job.
package staking

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"math/big"
	"strconv"
	"strings"
	"time"

	"github.com/chainlens/chainlens/api/problem"
	"github.com/chainlens/chainlens/api/route"
	report "github.com/chainlens/chainlens/report/staking"

	dexreport "github.com/chainlens/chainlens/report/dex"

	"github.com/uptrace/bun"

	"github.com/chainlens/chainlens/api"
	"github.com/chainlens/chainlens/config"
)

// Service answers the staking endpoints.
type Service struct {
	db      *bun.DB
	chainID string
	chain   config.Chain
	ok      bool
	// providers and consumers count the configured liquid staking
	// providers and consumer chain channels: without any, their endpoints
	// answer not-configured.
	providers, consumers int
	exponent             int // display exponent of the bond denom
	dex                  dexreport.Market
}

// New returns the service of the first configured chain of kind cosmoshub.
func New(cfg *config.Config, db *bun.DB) *Service {
	ch, ok := report.Chain(cfg)
	s := &Service{db: db, chainID: ch.ID, chain: ch, ok: ok, exponent: 6}
	if cfg != nil {
		s.providers, s.consumers = len(cfg.Staking.Providers), len(cfg.Staking.ConsumerChannels)
	}
	if d, ok := dexreport.Chain(cfg); ok {
		s.dex = dexreport.NewMarket(d)
	}
	bond := ch.StakingDenom
	if bond == "" {
		bond = "uatom"
	}
	for _, a := range ch.Assets {
		if a.Denom == bond {
			s.exponent = a.Exponent
		}
	}
	return s
}

// Handlers binds the built operations.
func (s *Service) Handlers() map[route.ID]api.Handler {
	return map[route.ID]api.Handler{route.StakingFlowByProvider: s.flowByProvider, route.StakingShareByProvider: s.shareByProvider,
		route.StakingRevenueShareByConsumer: s.revenueShareByConsumer}
}

func (s *Service) begin(ctx context.Context) (api.Freshness, error) {
	if !s.ok {
		return api.Freshness{}, api.NoChainOfKind("cosmoshub")
	}
	if s.providers == 0 {
		return api.Freshness{}, problem.NotConfigured("staking.providers", "no liquid staking provider is configured")
	}
	h, err := api.JobHeight(ctx, api.Reader(ctx, s.db), s.chainID, report.JobLiquidStaking)
	if err != nil {
		return api.Freshness{}, err
	}
	return api.Freshness{Chains: []api.ChainHeight{h}}, nil
}

// flowByProvider is, per UTC day of the range (up to the last aggregated
// block), the ATOM that entered and left the provider (or all providers)
// and the largest single flow each way; a day without flows has zeros and
// no tx ids.
func (s *Service) flowByProvider(ctx context.Context, req *api.Request) (*api.Response, error) {
	rng, err := req.Params.DateRange(req.Now, false)
	if err != nil {
		return nil, err
	}
	fresh, err := s.begin(ctx)
	if err != nil {
		return nil, err
	}
	days, err := api.Buckets(rng.Start, rng.End, fresh.Chains[0], api.Day)
	if err != nil {
		return nil, err
	}
	type out struct {
		Labels   string      `json:"labels"`
		In       json.Number `json:"total_inflow"`
		Out      json.Number `json:"total_outflow"`
		TopIn    json.Number `json:"top_inflow"`
		TopInTx  string      `json:"top_inflow_tx_id"`
		TopOut   json.Number `json:"top_outflow"`
		TopOutTx string      `json:"top_outflow_tx_id"`
	}
	body := make([]out, 0, len(days))
	if len(days) == 0 {
		return &api.Response{Body: body, Freshness: fresh}, nil
	}
	provider := req.Params.String("provider")
	scale := "1e-" + strconv.Itoa(s.exponent)
	var rows []struct {
		Day    time.Time      `bun:"day"`
		In     string         `bun:"total_in"`
		Out    string         `bun:"total_out"`
		TopIn  string         `bun:"top_in"`
		TopOut string         `bun:"top_out"`
		InTx   sql.NullString `bun:"top_in_tx"`
		OutTx  sql.NullString `bun:"top_out_tx"`
	}
	if err := api.Reader(ctx, s.db).NewRaw(`WITH f AS (
			SELECT date_trunc('day', time, 'UTC') AS day, direction, amount * ?::numeric AS atom, tx_hash, height, tx_index, event_index
			FROM liquid_flows WHERE chain_id = ? AND (? = 'total' OR provider = ?) AND time >= ? AND time < ?)
		SELECT day,
			coalesce(sum(atom) FILTER (WHERE direction = 'in'), 0)::text AS total_in,
			coalesce(sum(atom) FILTER (WHERE direction = 'out'), 0)::text AS total_out,
			coalesce(max(atom) FILTER (WHERE direction = 'in'), 0)::text AS top_in,
			coalesce(max(atom) FILTER (WHERE direction = 'out'), 0)::text AS top_out,
			(array_agg(tx_hash ORDER BY atom DESC, height, tx_index, event_index) FILTER (WHERE direction = 'in'))[1] AS top_in_tx,
			(array_agg(tx_hash ORDER BY atom DESC, height, tx_index, event_index) FILTER (WHERE direction = 'out'))[1] AS top_out_tx
		FROM f GROUP BY day ORDER BY day`, scale, s.chainID, provider, provider, days[0], api.NextBucket(days[len(days)-1], api.Day)).Scan(ctx, &rows); err != nil {
		return nil, fmt.Errorf("liquid flows: %w", err)
	}
	i := 0
	for _, d := range days {
		if i < len(rows) && rows[i].Day.Equal(d) {
			r := rows[i]
			body = append(body, out{d.Format(time.DateTime), api.Number(r.In), api.Number(r.Out), api.Number(r.TopIn), r.InTx.String,
				api.Number(r.TopOut), r.OutTx.String})
			i++
			continue
		}
		body = append(body, out{d.Format(time.DateTime), "0", "0", "0", "", "0", ""})
	}
	return &api.Response{Body: body, Freshness: fresh}, nil
}

// shareByProvider is, per UTC day of the range (up to the last aggregated
// block), the ATOM delegated by each requested provider's accounts at the
// day's end: at the last delegation snapshot of that day or, on a day
// without one, of the latest day before it; total = all providers. Days
// before the first snapshot have no row (nothing is known of them).
func (s *Service) shareByProvider(ctx context.Context, req *api.Request) (*api.Response, error) {
	rng, err := req.Params.DateRange(req.Now, false)
	if err != nil {
		return nil, err
	}
	fresh, err := s.begin(ctx)
	if err != nil {
		return nil, err
	}
	days, err := api.Buckets(rng.Start, rng.End, fresh.Chains[0], api.Day)
	if err != nil {
		return nil, err
	}
	body := []api.SeriesRow{}
	if len(days) == 0 {
		return &api.Response{Body: body, Freshness: fresh}, nil
	}
	cols := req.Params.Strings("providers")
	if len(cols) == 0 {
		cols = []string{"total"}
	}
	// Every snapshot day has a row per configured provider; the first day
	// read is the latest snapshot day at or before the range's first day.
	var rows []struct {
		Day      time.Time `bun:"day"`
		Provider string    `bun:"provider"`
		Amount   string    `bun:"amount"`
	}
	if err := api.Reader(ctx, s.db).NewRaw(`SELECT day, provider, (amount * ?0::numeric)::text AS amount FROM liquid_provider_daily
		WHERE chain_id = ?1 AND day <= ?3::date
			AND day >= coalesce((SELECT max(day) FROM liquid_provider_daily WHERE chain_id = ?1 AND day <= ?2::date), ?2::date)
		ORDER BY day, provider`, "1e-"+strconv.Itoa(s.exponent), s.chainID, days[0].Format(time.DateOnly),
		days[len(days)-1].Format(time.DateOnly)).Scan(ctx, &rows); err != nil {
		return nil, fmt.Errorf("provider balances: %w", err)
	}
	if len(rows) == 0 {
		// No snapshot day at or before the range's end: when the chain
		// has none at all, the cause is the snapshots, as for the supply.
		var some bool
		if err := api.Reader(ctx, s.db).NewRaw(`SELECT EXISTS (SELECT 1 FROM liquid_provider_daily WHERE chain_id = ?)`, s.chainID).Scan(ctx, &some); err != nil {
			return nil, fmt.Errorf("provider balances: %w", err)
		}
		if !some {
			return nil, api.NoSnapshot(s.chain, "delegation snapshot")
		}
	}
	var at map[string]string // provider → amount at the latest snapshot day so far
	i := 0
	for _, d := range days {
		for i < len(rows) && !rows[i].Day.After(d) {
			at = map[string]string{}
			for day := rows[i].Day; i < len(rows) && rows[i].Day.Equal(day); i++ {
				at[rows[i].Provider] = rows[i].Amount
			}
		}
		if at == nil {
			continue // before the first snapshot
		}
		vals := make([]json.Number, len(cols))
		for k, c := range cols {
			vals[k] = "0"
			if c == "total" {
				for _, a := range at {
					vals[k] = api.Number(addDecimal(string(vals[k]), a))
				}
			} else if a, ok := at[c]; ok {
				vals[k] = api.Number(a)
			}
		}
		body = append(body, api.SeriesRow{Labels: d.Format(time.DateTime), Columns: cols, Values: vals})
	}
	return &api.Response{Body: body, Freshness: fresh}, nil
}

// addDecimal adds two decimal strings exactly.
func addDecimal(a, b string) string {
	x, ok1 := new(big.Rat).SetString(a)
	y, ok2 := new(big.Rat).SetString(b)
	if !ok1 || !ok2 {
		return "0"
	}
	scale := 0
	for _, s := range []string{a, b} {
		if i := strings.IndexByte(s, '.'); i >= 0 {
			scale = max(scale, len(s)-i-1)
		}
	}
	return x.Add(x, y).FloatString(scale)
}
