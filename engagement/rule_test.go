package engagement_test

import (
	"encoding/json"
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

// TestCheckChainsGoalShapes: a goal must name a configured chain, in a
// shape that chain's matcher can match.
func TestCheckChainsGoalShapes(t *testing.T) {
	kinds := map[string]string{"osmosis-1": "osmosis", "eth-1": "evm"}
	token := "0x" + strings.Repeat("ab", 20)
	for _, c := range []struct {
		goal string
		want string // "" = accepted
	}{
		{`{"kind": "onchain", "chain": "osmosis-1", "msg_type": "/x.MsgY", "denom": "uosmo", "min_amount": "5"}`, ""},
		{`{"kind": "onchain", "chain": "osmosis-1", "contract": "osmo1wasm"}`, ""},
		{`{"kind": "onchain", "chain": "osmosis-1", "contract": "osmo1wasm", "min_amount": "5"}`, "goals[0].denom: min_amount on osmosis-1 counts an amount of a denom"},
		{`{"kind": "onchain", "chain": "eth-1", "contract": "` + token + `", "min_amount": "5"}`, ""},
		{`{"kind": "onchain", "chain": "eth-1", "msg_type": "/x.MsgY"}`, "goals[0].contract: eth-1 is an EVM chain"},
		{`{"kind": "onchain", "chain": "eth-1", "contract": "` + token + `", "event_type": "transfer"}`, "goals[0]: eth-1 is an EVM chain: msg_type, event_type and denom do not apply"},
		{`{"kind": "onchain", "chain": "nochain", "msg_type": "/x.MsgY"}`, `goals[0].chain: "nochain" is not a configured chain`},
		{`{"kind": "event", "event": "open_position"}`, ""},
	} {
		var g engagement.GoalSpec
		if err := json.Unmarshal([]byte(c.goal), &g); err != nil {
			t.Fatal(err)
		}
		f := &engagement.File{Campaigns: []engagement.CampaignSpec{{Goals: []engagement.GoalSpec{g}}}}
		err := f.CheckChains(kinds)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: %v", c.goal, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s: %v, want %q", c.goal, err, c.want)
		}
	}
}
