package config

import (
	"strings"
	"testing"
)

func TestTypeFilterKeeps(t *testing.T) {
	tests := []struct {
		name string
		f    TypeFilter
		keep map[string]bool
	}{
		{"zero keeps all", TypeFilter{}, map[string]bool{"/a.B": true, "transfer": true}},
		{"exclude exact and prefix", TypeFilter{Exclude: []string{"/ibc.core.client.v1.*", "coin_spent"}},
			map[string]bool{"/ibc.core.client.v1.MsgUpdateClient": false, "/ibc.core.channel.v1.MsgRecvPacket": true, "coin_spent": false, "coin_spent2": true}},
		{"include then exclude", TypeFilter{Include: []string{"wasm*"}, Exclude: []string{"wasm-spam"}},
			map[string]bool{"wasm": true, "wasm-swap": true, "wasm-spam": false, "transfer": false}},
	}
	for _, tc := range tests {
		for typ, want := range tc.keep {
			if got := tc.f.Keeps(typ); got != want {
				t.Errorf("%s: Keeps(%q) = %v, want %v", tc.name, typ, got, want)
			}
		}
	}
}

func TestRawFilterValidation(t *testing.T) {
	base := `database: {url: "postgres://u@h:5432/d"}
chains:
  - {id: c1, kind: cosmos, rpc: ["http://127.0.0.1:1"], bech32_prefix: c, raw: RAW}
`
	tests := []struct {
		raw  string
		errs []string
	}{
		{`{messages: {exclude: ["/ibc.core.client.v1.*"]}, events: {include: ["transfer", "wasm-*"]}}`, nil},
		{`{messages: {exclude: [""]}}`, []string{`chains[0].raw.messages.exclude[0] (line 3): "" must be a type`}},
		{`{events: {include: ["*"]}}`, []string{`chains[0].raw.events.include[0] (line 3): "*" must be a type`}},
		{`{events: {exclude: ["a*b"]}}`, []string{`chains[0].raw.events.exclude[0] (line 3): "a*b" must be a type`}},
		{`{event: {exclude: ["a"]}}`, []string{`line 3: unknown key "event"`}},
	}
	for _, tc := range tests {
		_, err := Parse([]byte(strings.Replace(base, "RAW", tc.raw, 1)), ".", func(string) string { return "" })
		if len(tc.errs) == 0 {
			if err != nil {
				t.Errorf("%s: %v", tc.raw, err)
			}
			continue
		}
		for _, want := range tc.errs {
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("%s: error %v, want %q", tc.raw, err, want)
			}
		}
	}
}
