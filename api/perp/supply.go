package perp

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math/big"

	report "github.com/chainlens/chainlens/report/perp"

	"github.com/chainlens/chainlens/api"
	"github.com/chainlens/chainlens/api/problem"
)

// supply answers one supply metric in NATIVE (perp_supply and the latest
// perp_module_balances_daily rows): total_supply the bank supply (genesis
// balances plus every balance change since); max_supply the supply created
// at genesis (the perp chain has no mint cap parameter); minted_supply and
// burnt_supply the coinbase and burn amounts since genesis; locked_supply
// the balances of the treasury and vester module accounts (the vesters
// hold what is not vested yet); circulating_supply total minus locked.
// mode=debug adds every term as components.
func (s *Service) supply(ctx context.Context, req *api.Request) (*api.Response, error) {
	fresh, err := s.begin(ctx, report.ModuleBalancesDaily, report.Supply)
	if err != nil {
		return nil, err
	}
	var sup struct {
		Decimals int64  `bun:"decimals"`
		Genesis  string `bun:"genesis"`
		Total    string `bun:"total"`
		Minted   string `bun:"minted"`
		Burnt    string `bun:"burnt"`
	}
	err = api.Reader(ctx, s.db).NewRaw(`SELECT n.decimals, s.genesis::text AS genesis, s.total::text AS total, s.minted::text AS minted, s.burnt::text AS burnt
		FROM perp_supply s, LATERAL (SELECT decimals FROM dydx_native_token WHERE chain_id = s.chain_id ORDER BY height DESC LIMIT 1) n
		WHERE s.chain_id = ?`, s.chainID).Scan(ctx, &sup)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("chain %s: no supply computed (the genesis was not imported): %w", s.chainID, problem.ErrNotIndexed)
	}
	if err != nil {
		return nil, fmt.Errorf("supply: %w", err)
	}
	var modules []struct {
		Account string `bun:"account"`
		Balance string `bun:"balance"`
	}
	if err := api.Reader(ctx, s.db).NewRaw(`SELECT DISTINCT ON (account) account, balance::text AS balance FROM perp_module_balances_daily
		WHERE chain_id = ? ORDER BY account, day DESC`, s.chainID).Scan(ctx, &modules); err != nil {
		return nil, fmt.Errorf("module balances: %w", err)
	}
	unit := pow10(-sup.Decimals)
	native := func(raw string) (*big.Rat, error) {
		r, err := rat(raw)
		if err != nil {
			return nil, err
		}
		return r.Mul(r, unit), nil
	}
	terms := map[string]*big.Rat{}
	for name, raw := range map[string]string{"genesis_supply": sup.Genesis, "total_supply": sup.Total, "minted_since_genesis": sup.Minted,
		"burnt_since_genesis": sup.Burnt} {
		if terms[name], err = native(raw); err != nil {
			return nil, err
		}
	}
	locked := new(big.Rat)
	for _, m := range report.TreasuryModules {
		terms[m] = new(big.Rat)
	}
	for _, m := range modules {
		v, err := native(m.Balance)
		if err != nil {
			return nil, err
		}
		terms[m.Account] = v
		locked.Add(locked, v)
	}
	values := map[string]*big.Rat{
		"total_supply": terms["total_supply"], "max_supply": terms["genesis_supply"], "minted_supply": terms["minted_since_genesis"],
		"burnt_supply": terms["burnt_since_genesis"], "locked_supply": locked,
		"circulating_supply": new(big.Rat).Sub(terms["total_supply"], locked),
	}
	metric := req.Params.String("metric")
	v, ok := values[metric]
	if !ok {
		return nil, problem.BadParam("metric", "is not a supply metric")
	}
	digits := int(sup.Decimals)
	out := map[string]any{metric: api.Number(v.FloatString(digits))}
	if req.Params.String("mode") == "debug" {
		comps := map[string]any{}
		for name, t := range terms {
			comps[name] = api.Number(t.FloatString(digits))
		}
		out["components"] = comps
	}
	return &api.Response{Body: out, Freshness: fresh}, nil
}
