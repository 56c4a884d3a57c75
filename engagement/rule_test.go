package engagement_test

import (
	"strings"
	"testing"

	"github.com/chainlens/chainlens/engagement"
)

func TestParseRule(t *testing.T) {
	cases := []struct {
		rule string
		want string // "" = valid; else a substring of the error
	}{
		{`{"chain": "dydx-1", "min_perp_volume_usd": "2500.5"}`, ""},
		{`{"chain": "dydx-1", "min_perp_trades": 3, "active_within_days": 30}`, ""},
		{`{"chain": "osmo-1", "holds": {"denom": "uosmo", "min_amount": "10"}, "min_dex_volume_usd": "1"}`, ""},
		{`{"chain": "dydx-1", "min_perp_volume_usd": "-1"}`, "min_perp_volume_usd must be a non-negative decimal"},
		{`{"chain": "dydx-1", "min_perp_volume_usd": "lots"}`, "min_perp_volume_usd must be a non-negative decimal"},
		{`{"chain": "dydx-1", "min_perp_trades": -2}`, "min_perp_trades must not be negative"},
		{`{"chain": "dydx-1"}`, "a rule needs at least one of active_within_days, holds, min_dex_volume_usd, min_perp_volume_usd, min_perp_trades"},
		{`{"chain": "dydx-1", "min_perp_volume": "5"}`, `unknown field "min_perp_volume"`},
		{`{"min_perp_trades": 1}`, "chain is required"},
	}
	for _, c := range cases {
		_, err := engagement.ParseRule([]byte(c.rule))
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: %v", c.rule, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s: error %v, want %q", c.rule, err, c.want)
		}
	}
}
