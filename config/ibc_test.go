package config

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestIBCChannelsFromRegistry(t *testing.T) {
	dir := t.TempDir()
	src, err := os.ReadFile(filepath.Join("..", "testdata", "registry", "_IBC", "cosmoshub-osmosis.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "cosmoshub-osmosis.json"), src, 0o600); err != nil {
		t.Fatal(err)
	}
	yaml := minimal + `ibc:
  registry: [cosmoshub-osmosis.json]
  channels:
    - {chain: osmosis, channel: channel-75, counterparty: stargaze, counterparty_channel: channel-0}
`
	cfg, err := Parse([]byte(yaml), dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []IBCChannel{
		{Chain: "osmosis", Channel: "channel-75", Port: "transfer", Counterparty: "stargaze", CounterpartyChannel: "channel-0", CounterpartyPort: "transfer"},
		{Chain: "cosmoshub", Channel: "channel-141", Port: "transfer", Counterparty: "osmosis", CounterpartyChannel: "channel-0", CounterpartyPort: "transfer"},
	}
	if !reflect.DeepEqual(cfg.IBC.Channels, want) {
		t.Errorf("channels %+v", cfg.IBC.Channels)
	}
	if cfg.Chains[0].Name != "osmosis" {
		t.Errorf("chain name %q, want the kind's registry name", cfg.Chains[0].Name)
	}
}

func TestIBCErrorsNameKeyAndLine(t *testing.T) {
	base := minimal + `ibc:
  channels:
    - {chain: osmosis, channel: channel-75, counterparty: stargaze, counterparty_channel: channel-0}
`
	cases := []struct {
		name string
		yaml string
		want []string
	}{
		{"bad channel", strings.Replace(base, "channel: channel-75", "channel: seventy-five", 1), []string{"ibc.channels[0].channel (line 10)", `"seventy-five" is not a channel id`}},
		{"bad name", strings.Replace(base, "counterparty: stargaze", "counterparty: Stargaze", 1), []string{"ibc.channels[0].counterparty (line 10)", "not a chain-registry name"}},
		{"same chain", strings.Replace(base, "counterparty: stargaze", "counterparty: osmosis", 1), []string{"ibc.channels[0].counterparty (line 10)", "must differ"}},
		{"twice", base + "    - {chain: osmosis, channel: channel-75, counterparty: lum, counterparty_channel: channel-3}\n",
			[]string{"ibc.channels[1] (line 11)", "channel channel-75 of osmosis is already declared (ibc.channels[0])"}},
		{"unknown key", strings.Replace(base, "counterparty_channel: channel-0", "counterparty_channel: channel-0, port_id: x", 1), []string{`unknown key "port_id"`}},
		{"missing registry file", minimal + "ibc:\n  registry: [nope.json]\n", []string{"ibc.registry[0] (line 9)", "nope.json"}},
		{"same name twice", minimal + "  - {id: osmo-2, kind: osmosis, rpc: [http://127.0.0.1:1]}\n", []string{"chains[1].name (line 8)", `chain name "osmosis" is already used by chain localosmosis`}},
		{"bad chain name", strings.Replace(minimal, "    kind: osmosis", "    kind: osmosis\n    name: Osmosis Hub", 1), []string{"chains[0].name (line 7)", "not a chain-registry name"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse([]byte(c.yaml), t.TempDir(), nil)
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

// TestShippedConfigsIBC: both shipped configs declare the 13 channels of
// the 11 chain-registry _IBC files in testdata/registry.
func TestShippedConfigsIBC(t *testing.T) {
	for _, file := range []string{"local.yaml", "mainnet.yaml"} {
		cfg, err := Load(file, func(string) string { return "" })
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		if len(cfg.IBC.Channels) != 13 {
			t.Errorf("%s: %d channels, want 13", file, len(cfg.IBC.Channels))
		}
		want := IBCChannel{Chain: "cosmoshub", Channel: "channel-141", Port: "transfer", Counterparty: "osmosis", CounterpartyChannel: "channel-0", CounterpartyPort: "transfer"}
		if len(cfg.IBC.Channels) > 2 && cfg.IBC.Channels[2] != want {
			t.Errorf("%s: third channel %+v, want %+v", file, cfg.IBC.Channels[2], want)
		}
		if cfg.Chains[0].Name != "osmosis" {
			t.Errorf("%s: first chain named %q", file, cfg.Chains[0].Name)
		}
	}
}
