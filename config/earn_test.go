package config

import (
	"strings"
	"testing"
)

const withEarn = minimal + `earn:
  strategies:
    - id: ion-osmo-usdc-lp
      kind: lp
      type: levana-pool-lp
      name: ION/OSMO/USDC liquidity
      provider: Osmosis
      category: Liquidity
      link: https://app.osmosis.zone/pool/1
      pool_id: 1
      lock_duration: 24h
`

func TestParseEarnStrategies(t *testing.T) {
	cfg, err := Parse([]byte(withEarn), "", nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Earn.Strategies) != 1 {
		t.Fatalf("%d strategies", len(cfg.Earn.Strategies))
	}
	s := cfg.Earn.Strategies[0]
	if s.ID != "ion-osmo-usdc-lp" || s.Kind != "lp" || s.PoolID != 1 || s.LockDuration.D().Hours() != 24 || s.Link != "https://app.osmosis.zone/pool/1" {
		t.Errorf("strategy %+v", s)
	}
}

func TestEarnErrorsNameKeyAndLine(t *testing.T) {
	cases := []struct {
		name string
		yaml string
		want []string
	}{
		{"unknown key", strings.Replace(withEarn, "      pool_id: 1\n", "      pool_id: 1\n      vault: x\n", 1), []string{`unknown key "vault"`, "line 18"}},
		{"bad kind", strings.Replace(withEarn, "kind: lp", "kind: lending", 1), []string{"earn.strategies[0].kind (line 11)", "must be one of lp"}},
		{"bad type", strings.Replace(withEarn, "type: levana-pool-lp", "type: pool", 1), []string{"earn.strategies[0].type (line 12)", "must be one of osmosis-staking"}},
		{"staking type for lp", strings.Replace(withEarn, "type: levana-pool-lp", "type: osmosis-staking", 1), []string{"earn.strategies[0].type (line 12)", "kind lp needs a pool or vault type"}},
		{"bad id", strings.Replace(withEarn, "id: ion-osmo-usdc-lp", "id: a/b", 1), []string{"earn.strategies[0].id (line 10)", `"a/b" must be letters`}},
		{"missing name", strings.Replace(withEarn, "      name: ION/OSMO/USDC liquidity\n", "", 1), []string{"earn.strategies[0].name (line 10)", "is required"}},
		{"bad link", strings.Replace(withEarn, "https://app.osmosis.zone/pool/1", "app.osmosis.zone", 1), []string{"earn.strategies[0].link (line 16)", "not an http(s) URL"}},
		{"missing pool", strings.Replace(withEarn, "      pool_id: 1\n", "", 1), []string{"earn.strategies[0].pool_id (line 10)", "is required for kind lp"}},
		{"bad lock duration", strings.Replace(withEarn, "lock_duration: 24h", "lock_duration: a day", 1), []string{"line 18", `"a day" is not a duration`}},
		{"twice", withEarn + `    - {id: ion-osmo-usdc-lp, kind: lp, type: levana-pool-lp, name: x, provider: y, category: z, pool_id: 3}` + "\n",
			[]string{"earn.strategies[1].id (line 19)", `strategy "ion-osmo-usdc-lp" is declared twice`}},
		{"no dex chain", strings.Replace(withEarn, "kind: osmosis", "kind: noble", 1), []string{"earn.strategies (line 9)", "need a chain of kind osmosis"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse([]byte(c.yaml), "", nil)
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
}
