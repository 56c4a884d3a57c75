package engagement

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"cosmossdk.io/math"
	"github.com/chainlens/chainlens/config"
	"github.com/uptrace/bun"
)

// GoalSpec is one conversion goal of a campaign. Kind event counts a /track
// or /sdk/track event named Event; kind onchain counts an action on the
// indexed chain Chain by a wallet that saw or clicked the campaign: a
// message of type MsgType, a wasm contract (or, on an EVM chain, an ERC-20
// token) Contract, or an event of type EventType in the wallet's
// transaction. With Denom (cosmos) or Contract (EVM) and MinAmount, only
// actions in which the wallet sent at least MinAmount base units count.
type GoalSpec struct {
	Kind      string `json:"kind"`
	Event     string `json:"event,omitempty"`
	Chain     string `json:"chain,omitempty"`
	MsgType   string `json:"msg_type,omitempty"`
	Contract  string `json:"contract,omitempty"`
	EventType string `json:"event_type,omitempty"`
	Denom     string `json:"denom,omitempty"`
	MinAmount string `json:"min_amount,omitempty"` // integer, base units
}

// validate returns the problems of g, each naming its field under p.
func (g GoalSpec) validate(p string) []error {
	var errs []error
	bad := func(field, format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s.%s: %s", p, field, fmt.Sprintf(format, args...)))
	}
	switch g.Kind {
	case "event":
		if strings.TrimSpace(g.Event) == "" {
			bad("event", "an event goal needs the event name")
		}
		if g.Chain != "" || g.MsgType != "" || g.Contract != "" || g.EventType != "" || g.Denom != "" || g.MinAmount != "" {
			bad("kind", "an event goal takes only event; chain, msg_type, contract, event_type, denom and min_amount belong to onchain goals")
		}
	case "onchain":
		if strings.TrimSpace(g.Chain) == "" {
			bad("chain", "an onchain goal needs the chain id of an indexed chain")
		}
		if g.MsgType == "" && g.Contract == "" && g.EventType == "" {
			bad("msg_type", "an onchain goal needs msg_type, contract or event_type")
		}
		if g.Event != "" {
			bad("event", "belongs to event goals")
		}
		if g.MinAmount != "" {
			if n, ok := math.NewIntFromString(g.MinAmount); !ok || n.IsNegative() {
				bad("min_amount", "must be a non-negative integer in base units (got %q)", g.MinAmount)
			}
			if g.Denom == "" && g.Contract == "" {
				bad("denom", "min_amount needs the denom it counts (or the ERC-20 contract on an EVM chain)")
			}
		}
	default:
		bad("kind", "must be event or onchain, not %q", g.Kind)
	}
	return errs
}

// Rule is the definition of a rule audience: every address that meets all
// the conditions given, evaluated over the indexed data of Chain by the
// engagement_audiences job.
type Rule struct {
	// Chain is the indexed chain the rule reads.
	Chain string `json:"chain"`
	// ActiveWithinDays keeps addresses that signed a successful transaction
	// in the last N days.
	ActiveWithinDays int `json:"active_within_days,omitempty"`
	// Holds keeps addresses whose balance of a denom is at least an amount.
	Holds *Holding `json:"holds,omitempty"`
	// MinDexVolumeUSD keeps addresses whose dex swap volume (the dex chain's
	// hourly prices) is at least this many USD, over ActiveWithinDays when
	// set, else over all indexed history.
	MinDexVolumeUSD string `json:"min_dex_volume_usd,omitempty"`
	// MinPerpVolumeUSD keeps perpetual traders (a chain of kind dydx) whose
	// filled notional, as taker or maker, is at least this many USD (USDC
	// quote quantums), over ActiveWithinDays when set, else over all
	// indexed history.
	MinPerpVolumeUSD string `json:"min_perp_volume_usd,omitempty"`
	// MinPerpTrades keeps perpetual traders with at least this many fills
	// (each fill a subaccount of the address took part in), over the same
	// period.
	MinPerpTrades int `json:"min_perp_trades,omitempty"`
}

// Holding is a balance condition of a Rule.
type Holding struct {
	Denom     string `json:"denom"`
	MinAmount string `json:"min_amount"` // integer, base units
}

// ParseRule decodes and checks a rule; unknown fields are errors.
func ParseRule(raw []byte) (*Rule, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	var r Rule
	if err := dec.Decode(&r); err != nil {
		return nil, fmt.Errorf("rule: %w (fields: chain, active_within_days, holds {denom, min_amount}, min_dex_volume_usd, min_perp_volume_usd, min_perp_trades)", err)
	}
	var errs []string
	if strings.TrimSpace(r.Chain) == "" {
		errs = append(errs, "chain is required")
	}
	if r.ActiveWithinDays < 0 || r.ActiveWithinDays > 3650 {
		errs = append(errs, "active_within_days must be between 1 and 3650")
	}
	if r.Holds != nil {
		if r.Holds.Denom == "" {
			errs = append(errs, "holds.denom is required")
		}
		if n, ok := math.NewIntFromString(r.Holds.MinAmount); !ok || n.IsNegative() {
			errs = append(errs, fmt.Sprintf("holds.min_amount must be a non-negative integer in base units (got %q)", r.Holds.MinAmount))
		}
	}
	if r.MinDexVolumeUSD != "" {
		if d, err := math.LegacyNewDecFromStr(r.MinDexVolumeUSD); err != nil || d.IsNegative() {
			errs = append(errs, fmt.Sprintf("min_dex_volume_usd must be a non-negative decimal (got %q)", r.MinDexVolumeUSD))
		}
	}
	if r.MinPerpVolumeUSD != "" {
		if d, err := math.LegacyNewDecFromStr(r.MinPerpVolumeUSD); err != nil || d.IsNegative() {
			errs = append(errs, fmt.Sprintf("min_perp_volume_usd must be a non-negative decimal (got %q)", r.MinPerpVolumeUSD))
		}
	}
	if r.MinPerpTrades < 0 {
		errs = append(errs, "min_perp_trades must not be negative")
	}
	if r.ActiveWithinDays == 0 && r.Holds == nil && r.MinDexVolumeUSD == "" && r.MinPerpVolumeUSD == "" && r.MinPerpTrades == 0 {
		errs = append(errs, "a rule needs at least one of active_within_days, holds, min_dex_volume_usd, min_perp_volume_usd, min_perp_trades")
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("rule: %s", strings.Join(errs, "; "))
	}
	return &r, nil
}

// CheckChains reports goals and rules naming a chain not in kinds (the
// configured chains' ids and kinds), so a typo is refused at import rather
// than matching nothing, and goals of a shape the chain's matcher never
// matches: on an EVM chain a goal is an ERC-20 transfer of its contract
// (msg_type and event_type do not exist there); elsewhere min_amount counts
// a denom, which a wasm contract is not.
func (f *File) CheckChains(kinds map[string]string) error {
	var errs []string
	for i, a := range f.Audiences {
		if a.Kind != "rule" {
			continue
		}
		if r, err := ParseRule(a.Rule); err == nil && kinds[r.Chain] == "" {
			errs = append(errs, fmt.Sprintf("audiences[%d].rule.chain: %q is not a configured chain", i, r.Chain))
		}
	}
	for i, c := range f.Campaigns {
		for j, g := range c.Goals {
			if g.Kind != "onchain" || g.Chain == "" {
				continue
			}
			p := fmt.Sprintf("campaigns[%d].goals[%d]", i, j)
			switch kind := kinds[g.Chain]; {
			case kind == "":
				errs = append(errs, fmt.Sprintf("%s.chain: %q is not a configured chain", p, g.Chain))
			case config.FamilyOf(kind) == config.FamilyEVM && g.Contract == "":
				errs = append(errs, fmt.Sprintf("%s.contract: %s is an EVM chain: a goal there names the ERC-20 contract whose transfer counts (msg_type and event_type are cosmos goals)", p, g.Chain))
			case config.FamilyOf(kind) == config.FamilyEVM && (g.MsgType != "" || g.EventType != "" || g.Denom != ""):
				errs = append(errs, fmt.Sprintf("%s: %s is an EVM chain: msg_type, event_type and denom do not apply (the contract is the token)", p, g.Chain))
			case config.FamilyOf(kind) != config.FamilyEVM && g.MinAmount != "" && g.Denom == "":
				errs = append(errs, fmt.Sprintf("%s.denom: min_amount on %s counts an amount of a denom: name it", p, g.Chain))
			}
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("%s", strings.Join(errs, "\n"))
	}
	return nil
}

// goalRow is a campaign_goals row.
type goalRow struct {
	ID        int64   `bun:"id"`
	Kind      string  `bun:"kind"`
	EventName *string `bun:"event_name"`
	ChainID   *string `bun:"chain_id"`
	MsgType   *string `bun:"msg_type"`
	Contract  *string `bun:"contract"`
	EventType *string `bun:"event_type"`
	Denom     *string `bun:"denom"`
	MinAmount *string `bun:"min_amount"`
}

func (r goalRow) spec() GoalSpec {
	s := func(p *string) string {
		if p == nil {
			return ""
		}
		return *p
	}
	return GoalSpec{Kind: r.Kind, Event: s(r.EventName), Chain: s(r.ChainID), MsgType: s(r.MsgType), Contract: s(r.Contract),
		EventType: s(r.EventType), Denom: s(r.Denom), MinAmount: s(r.MinAmount)}
}

func readGoals(ctx context.Context, db bun.IDB, campaignID int64) ([]GoalSpec, error) {
	var rows []goalRow
	if err := db.NewRaw(`SELECT id, kind, event_name, chain_id, msg_type, contract, event_type, denom, min_amount::text AS min_amount
		FROM campaign_goals WHERE campaign_id = ? ORDER BY id`, campaignID).Scan(ctx, &rows); err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("campaign %d goals: %w", campaignID, err)
	}
	out := make([]GoalSpec, len(rows))
	for i, r := range rows {
		out[i] = r.spec()
	}
	return out, nil
}

// writeGoals makes the campaign's goals equal to want, keeping the rows
// (and so the conversions attributed to them) of goals that did not change.
func writeGoals(ctx context.Context, tx bun.Tx, campaignID int64, want []GoalSpec) error {
	var have []goalRow
	if err := tx.NewRaw(`SELECT id, kind, event_name, chain_id, msg_type, contract, event_type, denom, min_amount::text AS min_amount
		FROM campaign_goals WHERE campaign_id = ? ORDER BY id`, campaignID).Scan(ctx, &have); err != nil && !errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("campaign %d goals: %w", campaignID, err)
	}
	keep := map[int64]bool{}
	for _, g := range want {
		found := false
		for _, h := range have {
			if !keep[h.ID] && h.spec() == g {
				keep[h.ID], found = true, true
				break
			}
		}
		if found {
			continue
		}
		null := func(s string) *string {
			if s == "" {
				return nil
			}
			return &s
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO campaign_goals (campaign_id, kind, event_name, chain_id, msg_type, contract, event_type, denom, min_amount)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?::numeric)`, campaignID, g.Kind, null(g.Event), null(g.Chain), null(g.MsgType), null(g.Contract),
			null(g.EventType), null(g.Denom), null(g.MinAmount)); err != nil {
			return fmt.Errorf("campaign %d goal: %w", campaignID, err)
		}
	}
	for _, h := range have {
		if !keep[h.ID] {
			if _, err := tx.ExecContext(ctx, `DELETE FROM campaign_goals WHERE id = ?`, h.ID); err != nil {
				return fmt.Errorf("campaign %d goal %d: %w", campaignID, h.ID, err)
			}
		}
	}
	return nil
}
