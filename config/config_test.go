package config

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

const minimal = `
database: {url: postgres://postgres@127.0.0.1:5432/chainlens}
api: {listen: 127.0.0.1:8080}
chains:
  - id: localosmosis
    kind: osmosis
    rpc: [http://127.0.0.1:26657]
`

func TestParseMinimalFillsDefaults(t *testing.T) {
	cfg, err := Parse([]byte(minimal), "", nil)
	if err != nil {
		t.Fatal(err)
	}
	ch := cfg.Chains[0]
	checks := []struct {
		name      string
		got, want any
	}{
		{"chain id", ch.ID, "localosmosis"},
		{"prefix", ch.Bech32Prefix, "osmo"},
		{"batch", ch.BatchSize, 100},
		{"concurrency", ch.Concurrency, 4},
		{"poll", ch.PollInterval.D(), time.Second},
		{"listen", cfg.API.Listen, "127.0.0.1:8080"},
		{"schedule", cfg.Aggregator.Schedule, "@every 30s"},
		{"quota", cfg.API.Quota.Credits, int64(1_000_000)},
		{"max conns", cfg.Database.MaxConns, 10},
		{"response cache", cfg.API.CacheTTL.D(), time.Minute},
		{"stale answers", cfg.API.CacheStale.D(), 10 * time.Second},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
	// An explicit 0s turns the response cache off (it was taken for unset).
	off, err := Parse([]byte(strings.Replace(minimal, "api: {listen: 127.0.0.1:8080}", "api: {listen: 127.0.0.1:8080, cache_ttl: 0s}", 1)), "", nil)
	if err != nil {
		t.Fatal(err)
	}
	if off.API.CacheTTL.D() != 0 {
		t.Errorf("cache_ttl: 0s gave %v", off.API.CacheTTL.D())
	}
}

func TestParseErrorsNameKeyAndLine(t *testing.T) {
	cases := []struct {
		name string
		yaml string
		want []string // substrings of the error
	}{
		{"unknown top key", minimal + "colour: red\n", []string{`unknown key "colour"`, "line 8"}},
		{"unknown chain key", strings.Replace(minimal, "    kind: osmosis", "    kind: osmosis\n    rpcs: [x]", 1), []string{`unknown key "rpcs"`, "line 7"}},
		{"missing id", strings.Replace(minimal, "  - id: localosmosis\n    kind", "  - kind", 1), []string{"chains[0].id", "is required"}},
		{"bad kind", strings.Replace(minimal, "kind: osmosis", "kind: solana", 1), []string{"chains[0].kind (line 6)", "must be one of"}},
		{"bad rpc url", strings.Replace(minimal, "http://127.0.0.1:26657", "127.0.0.1:26657", 1), []string{"chains[0].rpc[0] (line 7)", "not an http(s) URL"}},
		{"bad duration", minimal + "    poll_interval: soon\n", []string{"line 8", `"soon" is not a duration`}},
		{"bad cron", minimal + "aggregator: {schedule: \"every now and then\"}\n", []string{"aggregator.schedule (line 8)", "bad cron spec"}},
		{"bad listen", strings.Replace(minimal, "127.0.0.1:8080", "localhost", 1), []string{"api.listen (line 3)", "not host:port"}},
		{"bad db url", strings.Replace(minimal, "postgres://postgres@127.0.0.1:5432/chainlens", "mysql://x", 1), []string{"database.url (line 2)"}},
		{"empty host in a host list", strings.Replace(minimal, "postgres://postgres@127.0.0.1:5432/chainlens", `"postgres://postgres@127.0.0.1:5432,,h2:5432/chainlens"`, 1), []string{"database.url (line 2)", "hosts may be a list"}},
		{"bad read url", strings.Replace(minimal, "/chainlens}", "/chainlens, read_urls: [\"http://r\"]}", 1), []string{"database.read_urls[0]"}},
		{"bad session url", strings.Replace(minimal, "/chainlens}", "/chainlens, session_url: x}", 1), []string{"database.session_url"}},
		{"missing db", strings.Replace(minimal, "database: {url: postgres://postgres@127.0.0.1:5432/chainlens}\n", "", 1), []string{"database.url", "is required"}},
		{"empty retention", minimal + "    retention: {}\n", []string{"chains[0].retention", "needs keep_heights"}},
		{"negative retention", minimal + "    retention: {keep_heights: -5}\n", []string{"chains[0].retention", "needs keep_heights"}},
		{"retention of an evm chain", minimal + "  - {id: bsc, kind: evm, evm_chain_id: 56, rpc: [http://127.0.0.1:8545], retention: {keep_for: 720h}}\n", []string{"chains[1].retention", "cosmos chains"}},
		{"duplicate chain", minimal + "  - {id: localosmosis, kind: osmosis, rpc: [http://127.0.0.1:1]}\n", []string{"chains[1].id (line 8)", "declared twice"}},
		{"unknown group", minimal + "  \n", nil},
		{"bad group name", strings.Replace(minimal, "api: {listen: 127.0.0.1:8080}", "api: {listen: 127.0.0.1:8080, groups: {dexx: {prefix: /d}}}", 1), []string{"api.groups.dexx (line 3)", "unknown group"}},
		{"lens group placed", strings.Replace(minimal, "api: {listen: 127.0.0.1:8080}", "api: {listen: 127.0.0.1:8080, groups: {dex_lens: {prefix: /lens}}}", 1),
			[]string{"api.groups.dex_lens (line 3)", "shares the base address of dex: place it with api.groups.dex"}},
		{"two dex chains, none named", minimal + "  - {id: osmo2, name: osmosis2, kind: osmosis, rpc: [http://127.0.0.1:1]}\n",
			[]string{"api.groups.dex.chain", "2 chains of kind osmosis are configured (localosmosis, osmo2): name the one the dex group reads"}},
		{"group chain unknown", strings.Replace(minimal, "api: {listen: 127.0.0.1:8080}", "api: {listen: 127.0.0.1:8080, groups: {dex: {chain: nope}}}", 1),
			[]string{"api.groups.dex.chain (line 3)", `no chain "nope" is configured`}},
		{"group chain of another kind", strings.Replace(minimal, "api: {listen: 127.0.0.1:8080}", "api: {listen: 127.0.0.1:8080, groups: {perp: {chain: localosmosis}}}", 1),
			[]string{"api.groups.perp.chain (line 3)", "chain localosmosis is of kind osmosis; the perp group reads a chain of kind dydx"}},
		{"group that reads no one chain", strings.Replace(minimal, "api: {listen: 127.0.0.1:8080}", "api: {listen: 127.0.0.1:8080, groups: {stablecoins: {chain: localosmosis}}}", 1),
			[]string{"api.groups.stablecoins.chain (line 3)", "the stablecoins group does not read one chain"}},
		{"evm without tokens", minimal + "  - {id: eth, kind: evm, rpc: [http://127.0.0.1:8545]}\n", []string{"chains[1].tokens", "at least one token"}},
		{"evm bad token", minimal + "  - {id: eth, kind: evm, rpc: [http://127.0.0.1:8545], tokens: [{address: 0x12, symbol: USDC, decimals: 6}]}\n", []string{"chains[1].tokens[0].address (line 8)"}},
		{"evm bad price", minimal + "  - {id: eth, kind: evm, rpc: [http://127.0.0.1:8545], tokens: [{address: 0xd87f14a1b784f5eda472997fd01530c7f60f4781, symbol: LINK, decimals: 18, price_usd: cheap}]}\n",
			[]string{"chains[1].tokens[0].price_usd (line 8)", `"cheap" is not a decimal`}},
		{"evm price needed", minimal + "  - {id: eth, kind: evm, rpc: [http://127.0.0.1:8545], tokens: [{address: 0xd87f14a1b784f5eda472997fd01530c7f60f4781, symbol: LINK, decimals: 18}]}\n",
			[]string{"chains[1].tokens[0].price_usd (line 8)", "is required for LINK"}},
		{"evm bad label", minimal + "  - {id: eth, kind: evm, rpc: [http://127.0.0.1:8545], tokens: [{address: 0xd87f14a1b784f5eda472997fd01530c7f60f4781, symbol: USDC, decimals: 6}], address_labels: {\"0x8fa6b5a7aefa73b4adf58bb4b996e068b0bf6d5f\": exchange}}\n",
			[]string{"chains[1].address_labels.0x8fa6b5a7aefa73b4adf58bb4b996e068b0bf6d5f", `category "exchange" must be one of dex, cex, bridge, lending, other`}},
		{"evm zero address label", minimal + "  - {id: eth, kind: evm, rpc: [http://127.0.0.1:8545], tokens: [{address: 0xd87f14a1b784f5eda472997fd01530c7f60f4781, symbol: USDC, decimals: 6}], address_labels: {\"0x0000000000000000000000000000000000000000\": dex}}\n",
			[]string{"always mint_burn"}},
		{"evm bad cctp", minimal + "  - {id: eth, kind: evm, rpc: [http://127.0.0.1:8545], tokens: [{address: 0xd87f14a1b784f5eda472997fd01530c7f60f4781, symbol: USDC, decimals: 6}], cctp: {token_messenger: 0x1}}\n",
			[]string{"chains[1].cctp.token_messenger", "chains[1].cctp.message_transmitter"}},
		{"evm duplicate token", minimal + "  - {id: eth, kind: evm, rpc: [http://127.0.0.1:8545], tokens: [{address: 0xd87f14a1b784f5eda472997fd01530c7f60f4781, symbol: USDC, decimals: 6}, {address: 0xD87F14A1B784F5EDA472997FD01530C7F60F4781, symbol: USDC, decimals: 6}]}\n",
			[]string{"chains[1].tokens[1].address", "listed twice"}},
		{"cctp on a cosmos chain", strings.Replace(minimal, "    kind: osmosis", "    kind: osmosis\n    evm_chain_id: 1", 1), []string{"chains[0]", "are for evm chains"}},
		{"providers need a hub", minimal + "staking: {providers: {stride: [cosmos1m8nflc0uw0gwxphasy9k8gdl56n3neq9wt2vdl]}}\n",
			[]string{"staking.providers", "needs a chain of kind cosmoshub"}},
		{"unknown provider", minimal + "  - {id: hub, kind: cosmoshub, rpc: [http://127.0.0.1:1]}\nstaking: {providers: {lido: [cosmos1m8nflc0uw0gwxphasy9k8gdl56n3neq9wt2vdl]}}\n",
			[]string{"staking.providers.lido", "must be one of stride, pstake, quicksilver, drop"}},
		{"provider account of another chain", minimal + "  - {id: hub, kind: cosmoshub, rpc: [http://127.0.0.1:1]}\nstaking: {providers: {stride: [osmo1u8fw2qcjg52u4uamxw4dfzzc2w0f7a7c9qpqd3]}}\n",
			[]string{"staking.providers.stride[0]", "not an account of chain hub"}},
		{"consumer channels need a hub", minimal + "staking: {consumer_channels: {channel-569: neutron-1}}\n",
			[]string{"staking.consumer_channels", "needs a chain of kind cosmoshub"}},
		{"bad consumer channel", minimal + "  - {id: hub, kind: cosmoshub, rpc: [http://127.0.0.1:1]}\nstaking: {consumer_channels: {569: neutron-1, channel-1: \"\"}}\n",
			[]string{"staking.consumer_channels.569", "not a channel id", "staking.consumer_channels.channel-1", "needs the consumer chain id"}},
		{"negative cache stale", strings.Replace(minimal, "api: {listen: 127.0.0.1:8080}", "api: {listen: 127.0.0.1:8080, cache_stale: -5s}", 1), []string{"line 3", `"-5s" is not a duration`}},
		{"cosmos needs prefix", minimal + "  - {id: x, kind: cosmos, rpc: [http://127.0.0.1:1]}\n", []string{"chains[1].bech32_prefix", "required for kind cosmos"}},
		{"grants need a dydx chain", minimal + "perp: {grant_recipients: [dydx199tqg4wdlnu4qjlxchpd7seg454937hjrknju4]}\n",
			[]string{"perp.grant_recipients", "needs a chain of kind dydx"}},
		{"grant recipient of another chain", minimal + "  - {id: d, kind: dydx, rpc: [http://127.0.0.1:1]}\nperp: {grant_recipients: [osmo1u8fw2qcjg52u4uamxw4dfzzc2w0f7a7c9qpqd3]}\n",
			[]string{"perp.grant_recipients[0]", "not an account of chain d (prefix dydx)"}},
		{"treasury wallet listed twice", minimal + "  - {id: d, kind: dydx, rpc: [http://127.0.0.1:1]}\nperp: {treasury_subdao: [dydx199tqg4wdlnu4qjlxchpd7seg454937hjrknju4, dydx199tqg4wdlnu4qjlxchpd7seg454937hjrknju4]}\n",
			[]string{"perp.treasury_subdao[1]", "listed twice"}},
		{"treasury wallet of another chain", minimal + "  - {id: d, kind: dydx, rpc: [http://127.0.0.1:1]}\nperp: {treasury_subdao: [osmo1u8fw2qcjg52u4uamxw4dfzzc2w0f7a7c9qpqd3]}\n",
			[]string{"perp.treasury_subdao[0]", "not an account of chain d (prefix dydx)"}},
		{"grant recipient not an address", minimal + "  - {id: d, kind: dydx, rpc: [http://127.0.0.1:1]}\nperp: {grant_recipients: [bob]}\n",
			[]string{"perp.grant_recipients[0]", "not a bech32 address"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse([]byte(c.yaml), "", nil)
			if c.want == nil {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatal("expected an error")
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
}

func TestEnvOverrides(t *testing.T) {
	env := map[string]string{
		"DATABASE_URL":                   "postgres://postgres@h1:5999,h2:5999/other?target_session_attrs=read-write",
		"CHAINLENS_DATABASE_SESSION_URL": "postgres://postgres@h1:5432/other",
		"CHAINLENS_DATABASE_READ_URLS":   "postgres://postgres@r1:5432/other  postgres://postgres@r2:5432/other",
		"CHAINLENS_API_LISTEN":           "127.0.0.1:9999",
		"CHAINLENS_LOG_LEVEL":            "debug",
	}
	cfg, err := Parse([]byte(minimal), "", func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Database.URL != env["DATABASE_URL"] || cfg.API.Listen != "127.0.0.1:9999" || cfg.Log.Level != "debug" {
		t.Fatalf("overrides not applied: %+v %+v %+v", cfg.Database, cfg.API.Listen, cfg.Log)
	}
	if cfg.Database.SessionURL != env["CHAINLENS_DATABASE_SESSION_URL"] ||
		strings.Join(cfg.Database.ReadURLs, " ") != "postgres://postgres@r1:5432/other postgres://postgres@r2:5432/other" ||
		cfg.Database.MaxReplicaLag.D() != 30*time.Second {
		t.Fatalf("database overrides: %+v", cfg.Database)
	}
}

func TestChainFromRegistry(t *testing.T) {
	y := `
database: {url: postgres://postgres@127.0.0.1:5432/chainlens}
chains:
  - kind: osmosis
    registry: {chain: ../testdata/registry/osmosis/chain.json, assetlist: ../testdata/registry/osmosis/assetlist.json}
    assets: [{denom: uosmo, symbol: OSMO, exponent: 6, main: true}]
  - kind: noble
    rpc: [http://127.0.0.1:26659]
    registry: {chain: ../testdata/registry/noble/chain.json}
`
	cfg, err := Parse([]byte(y), ".", nil)
	if err != nil {
		t.Fatal(err)
	}
	osmo, noble := cfg.Chains[0], cfg.Chains[1]
	if osmo.ID != "osmosis-1" || osmo.Bech32Prefix != "osmo" || osmo.StakingDenom != "uosmo" || osmo.FeeDenoms[0] != "uosmo" {
		t.Fatalf("osmosis from registry: %+v", osmo)
	}
	if osmo.RPC[0] != "https://rpc.osmosis.zone/" {
		t.Errorf("rpc[0] = %q", osmo.RPC[0])
	}
	if len(osmo.Assets) != 597 {
		t.Errorf("assets = %d, want 597 (the uosmo entry from config wins over the registry's)", len(osmo.Assets))
	}
	if !osmo.Assets[0].Main || osmo.Assets[0].Denom != "uosmo" {
		t.Errorf("configured asset not kept first: %+v", osmo.Assets[0])
	}
	if noble.ID != "noble-1" || noble.RPC[0] != "http://127.0.0.1:26659" || noble.Bech32Prefix != "noble" {
		t.Errorf("noble: %+v", noble)
	}

	_, err = Parse([]byte(strings.Replace(y, "noble/chain.json", "nope/chain.json", 1)), ".", nil)
	if err == nil || !strings.Contains(err.Error(), "chains[1].registry (line 9)") {
		t.Fatalf("missing registry file: %v", err)
	}
}

func TestShippedConfigsLoad(t *testing.T) {
	cases := []struct {
		file   string
		chains []string
	}{
		{"local.yaml", []string{"localosmosis", "localdydxprotocol", "localneutron", "localxion", "localcosmos", "binance-smart-chain-56", "chainlens-devnet"}},
		{"mainnet.yaml", []string{"osmosis-1", "dydx-mainnet-1", "neutron-1", "cosmoshub-4", "xion-mainnet-1", "noble-1"}},
	}
	for _, c := range cases {
		cfg, err := Load(c.file, func(string) string { return "" })
		if err != nil {
			t.Fatalf("%s: %v", c.file, err)
		}
		var ids []string
		for _, ch := range cfg.Chains {
			ids = append(ids, ch.ID)
			if len(ch.RPC) == 0 || (ch.Bech32Prefix == "" && ch.Kind != "evm") {
				t.Errorf("%s: chain %s lacks rpc or prefix", c.file, ch.ID)
			}
		}
		if strings.Join(ids, ",") != strings.Join(c.chains, ",") {
			t.Errorf("%s: chains %v, want %v", c.file, ids, c.chains)
		}
	}
}

// TestEVMConfirmations: an EVM chain waits 2 confirmations by default, and
// an explicit 0 (a devnet) is kept, not taken for unset.
func TestEVMConfirmations(t *testing.T) {
	const evm = minimal + "  - {id: eth, kind: evm, rpc: [http://127.0.0.1:8545], tokens: [{address: 0xd87f14a1b784f5eda472997fd01530c7f60f4781, symbol: USDC, decimals: 6}]%s}\n"
	cases := []struct {
		set  string
		want int
	}{
		{"", 2},
		{", confirmations: 0", 0},
		{", confirmations: 12", 12},
	}
	for _, c := range cases {
		cfg, err := Parse([]byte(fmt.Sprintf(evm, c.set)), "", nil)
		if err != nil {
			t.Fatal(err)
		}
		if got := cfg.Chains[1].Confirmations; got != c.want {
			t.Errorf("%q: confirmations = %d, want %d", c.set, got, c.want)
		}
	}
	// Set through a merged anchor, as shared chain settings are.
	anchored := minimal + `  - &devnet {id: eth, kind: evm, rpc: ["http://127.0.0.1:8545"], confirmations: 0,
      tokens: [{address: "0xd87f14a1b784f5eda472997fd01530c7f60f4781", symbol: USDC, decimals: 6}]}
  - <<: *devnet
    id: base-8453
`
	cfg, err := Parse([]byte(anchored), "", nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := cfg.Chains[2].Confirmations; got != 0 {
		t.Errorf("confirmations: 0 merged from an anchor = %d, want 0", got)
	}
}

// TestGroupChain: a group reads the chain its config names, else the only
// chain of its kind.
func TestGroupChain(t *testing.T) {
	two := minimal + "  - {id: osmo2, name: osmosis2, kind: osmosis, rpc: [http://127.0.0.1:1]}\n"
	for _, c := range []struct {
		name, yaml, base, want string
	}{
		{"the only one", minimal, "dex", "localosmosis"},
		{"named", strings.Replace(two, "api: {listen: 127.0.0.1:8080}", "api: {listen: 127.0.0.1:8080, groups: {dex: {chain: osmo2}}}", 1), "dex", "osmo2"},
		{"none of the kind", minimal, "perp", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg, err := Parse([]byte(c.yaml), "", nil)
			if err != nil {
				t.Fatal(err)
			}
			ch, ok := cfg.GroupChain(c.base)
			if ch.ID != c.want || ok != (c.want != "") {
				t.Fatalf("%q %v, want %q", ch.ID, ok, c.want)
			}
		})
	}
}
