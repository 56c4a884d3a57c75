package perp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	report "github.com/chainlens/chainlens/report/perp"

	"github.com/chainlens/chainlens/api"
	"github.com/chainlens/chainlens/api/problem"
)

// CommunityPoolSpend is one row of /governance/community_pool_usage. The
// vote tallies are null: the chain records them in the proposal's state,
// not in events.
type CommunityPoolSpend struct {
	Height      int64       `json:"block_height"`
	Timestamp   string      `json:"block_timestamp"`
	ProposalID  int64       `json:"proposal_id"`
	TokenAmount json.Number `json:"token_amount"`
	TokenSymbol string      `json:"token_symbol"`
	Receivers   int64       `json:"receivers_count"`
	VoteYes     *int64      `json:"vote_yes"`
	VoteNo      *int64      `json:"vote_no"`
	VoteVeto    *int64      `json:"vote_veto"`
	VoteAbstain *int64      `json:"vote_abstain"`
}

// communityPoolUsage lists the executed proposals that spent from the
// community pool up to the last aggregated block, newest first, one row
// per proposal and denom (perp_community_pool_spends): NATIVE and USDC in
// display units, any other denom in its base units under its own name.
func (s *Service) communityPoolUsage(ctx context.Context, _ *api.Request) (*api.Response, error) {
	fresh, err := s.begin(ctx, report.CommunityPoolSpends)
	if err != nil {
		return nil, err
	}
	type symbol struct {
		name     string
		decimals int64
	}
	symbols := map[string]symbol{}
	native, err := s.nativeToken(ctx)
	switch {
	case err == nil:
		symbols[native.Denom] = symbol{"NATIVE", native.Decimals}
		symbols[native.Quote] = symbol{"USDC", 6}
	case errors.Is(err, problem.ErrNotIndexed):
		// No genesis catalog: every denom in its base units.
	default:
		return nil, err
	}
	var rows []struct {
		Proposal  int64     `bun:"proposal_id"`
		Height    int64     `bun:"height"`
		Time      time.Time `bun:"time"`
		Denom     string    `bun:"denom"`
		Amount    string    `bun:"amount"`
		Receivers int64     `bun:"receivers"`
	}
	if err := api.Reader(ctx, s.db).NewRaw(`SELECT proposal_id, height, time, denom, amount::text AS amount, receivers FROM perp_community_pool_spends
		WHERE chain_id = ? AND height <= ? ORDER BY height DESC, proposal_id DESC, denom`, s.chainID, fresh.Chains[0].Height).Scan(ctx, &rows); err != nil {
		return nil, fmt.Errorf("perp_community_pool_spends: %w", err)
	}
	out := make([]CommunityPoolSpend, 0, len(rows))
	for _, r := range rows {
		amount, err := rat(r.Amount)
		if err != nil {
			return nil, err
		}
		sym, ok := symbols[r.Denom]
		if !ok {
			sym = symbol{r.Denom, 0}
		}
		amount.Mul(amount, pow10(-sym.decimals))
		out = append(out, CommunityPoolSpend{Height: r.Height, Timestamp: r.Time.UTC().Format(time.DateTime), ProposalID: r.Proposal,
			TokenAmount: api.Number(amount.FloatString(int(sym.decimals))), TokenSymbol: sym.name, Receivers: r.Receivers})
	}
	return &api.Response{Body: out, Freshness: fresh}, nil
}
