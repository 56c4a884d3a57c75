package dydx

import (
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"strconv"

	"github.com/chainlens/chainlens/chains"
)

// MsgAddPremiumVotes is the proposer's premium votes message (one per block).
const MsgAddPremiumVotes = "/dydxprotocol.perpetuals.MsgAddPremiumVotes"

// Epoch names of the funding epochs (x/epochs).
const (
	EpochFundingSample = "funding-sample"
	EpochFundingTick   = "funding-tick"
)

var (
	fundingParamsTable = chains.Table{Name: "dydx_funding_params", Columns: []string{"chain_id", "height", "perpetual_id",
		"default_funding_ppm", "max_abs_rate_ppm", "tick_seconds", "sample_seconds", "min_votes_per_sample"}}
	premiumVotesTable  = chains.Table{Name: "dydx_premium_votes", Columns: []string{"chain_id", "height", "perpetual_id", "premium_ppm"}}
	fundingEpochsTable = chains.Table{Name: "dydx_funding_epochs", Columns: []string{"chain_id", "height", "name", "number"}}
)

// fundingRows appends the block's premium votes (the non-zero votes of its
// successful MsgAddPremiumVotes) and the funding epochs it starts (its
// new_epoch events).
func fundingRows(b *chains.Block, out *chains.Rows) error {
	for t := range b.Txs {
		tx := &b.Txs[t]
		if !tx.Succeeded() {
			continue
		}
		for _, m := range tx.Messages {
			if m.TypeURL != MsgAddPremiumVotes {
				continue
			}
			votes, err := decodePremiumVotes(m)
			if err != nil {
				return fmt.Errorf("height %d tx %d: %s: %w", b.Height, tx.Index, m.TypeURL, err)
			}
			for _, v := range votes {
				if v.premium != 0 {
					out.Add(premiumVotesTable.Name, b.ChainID, b.Height, v.perpetual, v.premium)
				}
			}
		}
	}
	for i := range b.Events {
		ev := &b.Events[i]
		if ev.Type != "new_epoch" {
			continue
		}
		name, _ := ev.Get("epoch_info_name")
		if name != EpochFundingSample && name != EpochFundingTick {
			continue
		}
		v, _ := ev.Get("epoch_number")
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return fmt.Errorf("height %d: new_epoch %s: epoch_number %q is not a number", b.Height, name, v)
		}
		out.Add(fundingEpochsTable.Name, b.ChainID, b.Height, name, n)
	}
	return nil
}

type premiumVote struct {
	perpetual int64
	premium   int64
}

// decodePremiumVotes reads MsgAddPremiumVotes{votes=1 repeated
// FundingPremium{perpetual_id=1 uint32, premium_ppm=2 int32}}.
func decodePremiumVotes(m chains.Message) ([]premiumVote, error) {
	pairs, err := repeatedPairs(m, "votes", "perpetual_id", "premium_ppm")
	if err != nil {
		return nil, err
	}
	out := make([]premiumVote, 0, len(pairs))
	for _, p := range pairs {
		premium := int64(p[1])
		if p[0] > math.MaxUint32 || premium < math.MinInt32 || premium > math.MaxInt32 {
			return nil, fmt.Errorf("premium vote %d/%d: perpetual id not a uint32 or premium not an int32", p[0], premium)
		}
		out = append(out, premiumVote{int64(p[0]), premium})
	}
	return out, nil
}

// genesisFundingRows appends a dydx_funding_params row per perpetual:
// its default funding, the funding rate clamp of its liquidity tier
// (funding_rate_clamp_factor_ppm × (initial margin − maintenance margin),
// each product of ppm divided by 10^6 and truncated as the chain does),
// and the funding epochs' durations with min_num_votes_per_sample.
func genesisFundingRows(g *chains.Genesis, out *chains.Rows) error {
	var state struct {
		Perpetuals struct {
			Perpetuals []struct {
				Params struct {
					ID             intJSON `json:"id"`
					DefaultFunding intJSON `json:"default_funding_ppm"`
					LiquidityTier  intJSON `json:"liquidity_tier"`
				} `json:"params"`
			} `json:"perpetuals"`
			Tiers []struct {
				ID                  intJSON `json:"id"`
				InitialMargin       intJSON `json:"initial_margin_ppm"`
				MaintenanceFraction intJSON `json:"maintenance_fraction_ppm"`
			} `json:"liquidity_tiers"`
			Params struct {
				ClampFactor intJSON `json:"funding_rate_clamp_factor_ppm"`
				MinVotes    intJSON `json:"min_num_votes_per_sample"`
			} `json:"params"`
		} `json:"perpetuals"`
		Epochs *struct {
			List []struct {
				Name     string  `json:"name"`
				Duration intJSON `json:"duration"`
			} `json:"epoch_info_list"`
		} `json:"epochs"`
	}
	if err := json.Unmarshal(g.AppState, &state); err != nil {
		return fmt.Errorf("genesis funding: %w", err)
	}
	if state.Epochs == nil {
		return fmt.Errorf("genesis funding: the app state has no epochs module: %w", chains.ErrGenesisUnsupported)
	}
	num := func(what string, v intJSON) (int64, error) {
		if v == "" { // proto3 JSON leaves zero out
			return 0, nil
		}
		n, err := strconv.ParseInt(string(v), 10, 64)
		if err != nil {
			return 0, fmt.Errorf("genesis funding: %s %q: %w", what, v, err)
		}
		return n, nil
	}
	durations := map[string]int64{}
	for _, e := range state.Epochs.List {
		d, err := num("epoch "+e.Name+" duration", e.Duration)
		if err != nil {
			return err
		}
		durations[e.Name] = d
	}
	tick, sample := durations[EpochFundingTick], durations[EpochFundingSample]
	if tick <= 0 || sample <= 0 {
		return fmt.Errorf("genesis funding: epochs %s (%ds) and %s (%ds) must both have a duration", EpochFundingTick, tick, EpochFundingSample, sample)
	}
	p := state.Perpetuals
	clamp, err := num("funding_rate_clamp_factor_ppm", p.Params.ClampFactor)
	if err != nil {
		return err
	}
	minVotes, err := num("min_num_votes_per_sample", p.Params.MinVotes)
	if err != nil {
		return err
	}
	bounds := map[string]int64{}
	for _, t := range p.Tiers {
		im, err := num("initial_margin_ppm", t.InitialMargin)
		if err != nil {
			return err
		}
		mf, err := num("maintenance_fraction_ppm", t.MaintenanceFraction)
		if err != nil {
			return err
		}
		tid, err := num("liquidity tier id", t.ID)
		if err != nil {
			return err
		}
		bounds[strconv.FormatInt(tid, 10)] = MaxAbsFundingRatePpm(clamp, im, mf)
	}
	for _, perp := range p.Perpetuals {
		id, err := num("perpetual id", perp.Params.ID)
		if err != nil {
			return err
		}
		def, err := num("default_funding_ppm", perp.Params.DefaultFunding)
		if err != nil {
			return err
		}
		tier, err := num("liquidity_tier", perp.Params.LiquidityTier)
		if err != nil {
			return err
		}
		bound, ok := bounds[strconv.FormatInt(tier, 10)]
		if !ok {
			return fmt.Errorf("genesis funding: perpetual %d names liquidity tier %d, which the genesis does not define", id, tier)
		}
		out.Add(fundingParamsTable.Name, g.ChainID, int64(chains.GenesisHeight), id, def, bound, tick, sample, minVotes)
	}
	return nil
}

// MaxAbsFundingRatePpm is the largest |funding rate| a liquidity tier
// allows: clamp × (initial margin − maintenance margin) / 10^6, where the
// maintenance margin is initial margin × maintenance fraction / 10^6, both
// truncated (x/perpetuals LiquidityTier.GetMaxAbsFundingClampPpm).
func MaxAbsFundingRatePpm(clampFactorPpm, initialMarginPpm, maintenanceFractionPpm int64) int64 {
	mm := new(big.Int).Mul(big.NewInt(initialMarginPpm), big.NewInt(maintenanceFractionPpm))
	mm.Quo(mm, big.NewInt(1_000_000))
	d := new(big.Int).Sub(big.NewInt(initialMarginPpm), mm)
	d.Mul(d, big.NewInt(clampFactorPpm))
	return d.Quo(d, big.NewInt(1_000_000)).Int64()
}
