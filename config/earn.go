package config

import (
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strings"
)

// Earn declares the earn strategies served by /earn/strategies. Every
// strategy lives on the dex chain (the first chain of kind osmosis).
type Earn struct {
	Strategies []Strategy `yaml:"strategies"`
}

// Strategy is one earn strategy. Its numbers come from indexed data:
//   - kind lp: holding the LP shares (gamm/pool/<pool_id>) of a balancer or
//     stableswap pool: TVL = the pool's reserves, APR = swap fees over the
//     last 7 days, balance = the address's shares, bank-held and locked.
type Strategy struct {
	ID       string `yaml:"id"`       // e.g. osmo-usdc-lp; letters, digits, '.', '_', '-'
	Kind     string `yaml:"kind"`     // lp
	Type     string `yaml:"type"`     // the public type value, one of StrategyTypes
	Name     string `yaml:"name"`     // shown to users
	Provider string `yaml:"provider"` // e.g. Osmosis
	Category string `yaml:"category"` // e.g. Liquidity
	Link     string `yaml:"link"`     // http(s) URL of the strategy's page
	PoolID   int64  `yaml:"pool_id"`  // kind lp: the pool
	// LockDuration is the time withdrawn funds stay locked; 0 = none (not shown).
	LockDuration Duration `yaml:"lock_duration"`
}

// StrategyKinds lists the strategy kinds whose numbers can be computed
// from indexed data.
var StrategyKinds = []string{"lp"}

// StrategyTypes is the value set of an earn strategy's public type.
var StrategyTypes = []string{"osmosis-staking", "liquid-osmosis-staking", "levana-pool-lp", "levana-pool-xlp",
	"umee-lending", "mars-lending", "ondo", "quasar-cl-vault"}

var strategyID = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$`)

func (e *Earn) validate(chains []Chain) []*FieldError {
	var errs []*FieldError
	bad := func(key, format string, args ...any) {
		errs = append(errs, &FieldError{Key: key, Msg: fmt.Sprintf(format, args...)})
	}
	if len(e.Strategies) > 0 && !slices.ContainsFunc(chains, func(c Chain) bool { return c.Kind == "osmosis" }) {
		bad("earn.strategies", "earn strategies need a chain of kind osmosis")
	}
	seen := map[string]bool{}
	for i, s := range e.Strategies {
		key := fmt.Sprintf("earn.strategies[%d]", i)
		switch {
		case s.ID == "":
			bad(key+".id", "is required")
		case !strategyID.MatchString(s.ID):
			bad(key+".id", "%q must be letters, digits, '.', '_' or '-' (at most 128)", s.ID)
		case seen[s.ID]:
			bad(key+".id", "strategy %q is declared twice", s.ID)
		}
		seen[s.ID] = true
		if !slices.Contains(StrategyKinds, s.Kind) {
			bad(key+".kind", "must be one of %s", strings.Join(StrategyKinds, ", "))
		}
		if !slices.Contains(StrategyTypes, s.Type) {
			bad(key+".type", "must be one of %s", strings.Join(StrategyTypes, ", "))
		}
		if s.Name == "" {
			bad(key+".name", "is required")
		}
		if s.Provider == "" {
			bad(key+".provider", "is required")
		}
		if s.Category == "" {
			bad(key+".category", "is required")
		}
		if u, err := url.Parse(s.Link); s.Link != "" && (err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "") {
			bad(key+".link", "%q is not an http(s) URL", s.Link)
		}
		if s.Kind == "lp" && strings.HasSuffix(s.Type, "-staking") {
			bad(key+".type", "%s is a staking type; kind lp needs a pool or vault type", s.Type)
		}
		if s.Kind == "lp" && s.PoolID < 1 {
			bad(key+".pool_id", "is required for kind lp (a pool id, 1 or more)")
		}
	}
	return errs
}
