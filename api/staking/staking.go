// Package staking serves the multi-chain staking group from the report
// tables of the liquid_staking job (aggregator/liquidstaking), which reads
// the Cosmos Hub's staking and x/liquid events. Only the flows are built:
// /staking/liquid/share_by_provider needs the providers' delegation
// balances (state the events alone do not give once validators are
// slashed) and /aez/revenue_share_by_consumer USD prices of the consumer
// reward denoms; both answer 501 until then.
package staking

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/uptrace/bun"

	aggls "github.com/chainlens/chainlens/aggregator/liquidstaking"
	"github.com/chainlens/chainlens/api"
	"github.com/chainlens/chainlens/api/problem"
	"github.com/chainlens/chainlens/config"
)

// OpFlowByProvider is the operation served here.
const OpFlowByProvider = "GET /staking/liquid/flow_by_provider"

// Service answers the staking endpoints.
type Service struct {
	db       *bun.DB
	chainID  string
	ok       bool
	exponent int // display exponent of the bond denom
}

// New returns the service of the first configured chain of kind cosmoshub.
func New(cfg *config.Config, db *bun.DB) *Service {
	ch, ok := aggls.Chain(cfg)
	s := &Service{db: db, chainID: ch.ID, ok: ok, exponent: 6}
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
func (s *Service) Handlers() map[string]api.Handler {
	return map[string]api.Handler{OpFlowByProvider: s.flowByProvider}
}

func (s *Service) begin(ctx context.Context) (api.Freshness, error) {
	if !s.ok {
		return api.Freshness{}, fmt.Errorf("no chain of kind cosmoshub is configured: %w", problem.ErrNotIndexed)
	}
	h, err := api.JobHeight(ctx, s.db, s.chainID, aggls.JobName)
	if err != nil {
		return api.Freshness{}, err
	}
	return api.Freshness{Chains: []api.ChainHeight{h}}, nil
}

// flowByProvider is, per UTC day with flows, the ATOM that entered and left
// the provider (or all providers) and the largest single flow each way.
func (s *Service) flowByProvider(ctx context.Context, req *api.Request) (*api.Response, error) {
	rng, err := req.Params.DateRange(req.Now, false)
	if err != nil {
		return nil, err
	}
	fresh, err := s.begin(ctx)
	if err != nil {
		return nil, err
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
	if err := s.db.NewRaw(`WITH f AS (
			SELECT date_trunc('day', time, 'UTC') AS day, direction, amount * ?::numeric AS atom, tx_hash, height, tx_index, event_index
			FROM liquid_flows WHERE chain_id = ? AND (? = 'total' OR provider = ?) AND time >= ? AND time <= ?)
		SELECT day,
			coalesce(sum(atom) FILTER (WHERE direction = 'in'), 0)::text AS total_in,
			coalesce(sum(atom) FILTER (WHERE direction = 'out'), 0)::text AS total_out,
			coalesce(max(atom) FILTER (WHERE direction = 'in'), 0)::text AS top_in,
			coalesce(max(atom) FILTER (WHERE direction = 'out'), 0)::text AS top_out,
			(array_agg(tx_hash ORDER BY atom DESC, height, tx_index, event_index) FILTER (WHERE direction = 'in'))[1] AS top_in_tx,
			(array_agg(tx_hash ORDER BY atom DESC, height, tx_index, event_index) FILTER (WHERE direction = 'out'))[1] AS top_out_tx
		FROM f GROUP BY day ORDER BY day`, scale, s.chainID, provider, provider, rng.Start, rng.End).Scan(ctx, &rows); err != nil {
		return nil, fmt.Errorf("liquid flows: %w", err)
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
	body := make([]out, 0, len(rows))
	for _, r := range rows {
		body = append(body, out{r.Day.UTC().Format(time.DateTime), api.Number(r.In), api.Number(r.Out), api.Number(r.TopIn), r.InTx.String,
			api.Number(r.TopOut), r.OutTx.String})
	}
	return &api.Response{Body: body, Freshness: fresh}, nil
}
