package dex_test

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/chainlens/chainlens/aggregator"
	"github.com/chainlens/chainlens/config"
	"github.com/chainlens/chainlens/internal/app"
	"github.com/chainlens/chainlens/internal/osmosistest"
	"github.com/chainlens/chainlens/internal/testdb"
)

// TestIBCStatusOnMainnetBlock indexes the recorded Osmosis mainnet block
// 2,836,990 (2022-01-17T17:14:01.589129908Z) and answers the IBC status
// from its packets (mainnet-txs-block-2836990.json): Osmosis sent two
// transfers to stargaze on channel-75 (sequences 8595, 8596) and one to lum
// on channel-115 (sequence 2190), none acknowledged within the recording,
// and received uatom from the Cosmos Hub (its channel-141, sequence
// 304240) on channel-0. The channel pairs are the chain registry's
// (cosmoshub-osmosis.json: channel-141 ↔ channel-0; osmosis ↔ stargaze
// channel-75 ↔ channel-0 and osmosis ↔ lumnetwork channel-115 ↔ channel-3
// are written in the packets' own dst fields).
func TestIBCStatusOnMainnetBlock(t *testing.T) {
	t.Parallel()
	db, _ := testdb.New(t)
	ch := osmosistest.IndexMainnet(t, db)
	hub := config.Chain{ID: "cosmoshub-4", Name: "cosmoshub", Kind: "cosmoshub", RPC: []string{"http://127.0.0.1:1"}, Bech32Prefix: "cosmos"}
	cfg := &config.Config{Chains: []config.Chain{ch, hub}, IBC: config.IBC{Channels: []config.IBCChannel{
		{Chain: "cosmoshub", Channel: "channel-141", Port: "transfer", Counterparty: "osmosis", CounterpartyChannel: "channel-0", CounterpartyPort: "transfer"},
		{Chain: "osmosis", Channel: "channel-75", Port: "transfer", Counterparty: "stargaze", CounterpartyChannel: "channel-0", CounterpartyPort: "transfer"},
		{Chain: "osmosis", Channel: "channel-115", Port: "transfer", Counterparty: "lumnetwork", CounterpartyChannel: "channel-3", CounterpartyPort: "transfer"},
	}}}
	ctx := context.Background()
	run := func() {
		t.Helper()
		sched, err := aggregator.New(db, config.Aggregator{}, slog.New(slog.DiscardHandler), nil, app.Jobs(cfg)...)
		if err != nil {
			t.Fatal(err)
		}
		if err := sched.RunOnce(ctx); err != nil {
			t.Fatal(err)
		}
	}
	run()
	dump := func() string {
		var rows []string
		if err := db.NewRaw(`SELECT concat_ws(' ', chain_id, src_port, src_channel, sequence, coalesce(sent_height::text, '-'),
				coalesce(to_char(sent_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS'), '-'), coalesce(closed_chain, '-'),
				coalesce(closed_height::text, '-'), coalesce(closed_by, '-'))
			FROM ibc_packet_status ORDER BY 1`).Scan(ctx, &rows); err != nil {
			t.Fatal(err)
		}
		return strings.Join(rows, "\n")
	}
	want := strings.Join([]string{
		"cosmoshub-4 transfer channel-141 304240 - - osmosis-1 2836990 recv",
		"osmosis-1 transfer channel-115 2190 2836990 2022-01-17T17:14:01 - - -",
		"osmosis-1 transfer channel-75 8595 2836990 2022-01-17T17:14:01 - - -",
		"osmosis-1 transfer channel-75 8596 2836990 2022-01-17T17:14:01 - - -",
	}, "\n")
	if got := dump(); got != want {
		t.Fatalf("ibc_packet_status\n%s\nwant\n%s", got, want)
	}
	// A rerun from watermark 0 writes the same rows.
	if _, err := db.ExecContext(ctx, "UPDATE aggregator_jobs SET watermark = 0 WHERE name LIKE 'ibc_packets.%'"); err != nil {
		t.Fatal(err)
	}
	run()
	if got := dump(); got != want {
		t.Fatalf("after a rerun\n%s\nwant\n%s", got, want)
	}

	// 90 minutes and 30 seconds after the block.
	s := serveConfig(t, db, cfg, osmosistest.MainnetTime.Add(90*time.Minute+30*time.Second))
	cases := []struct {
		name, path string
		status     int
		body       string
	}{
		{"to stargaze", "/ibc/v1/source/osmosis/destination/stargaze", 200,
			`[{"source":"osmosis","destination":"stargaze","channel_id":"channel-75","size_queue":2,"duration_minutes":90}]`},
		{"to lum", "/ibc/v1/source/osmosis/destination/lumnetwork", 200,
			`[{"source":"osmosis","destination":"lumnetwork","channel_id":"channel-115","size_queue":1,"duration_minutes":90}]`},
		{"to the hub: only a receipt on channel-0", "/ibc/v1/source/osmosis/destination/cosmoshub", 200,
			`[{"source":"osmosis","destination":"cosmoshub","channel_id":"channel-0","size_queue":0,"duration_minutes":0}]`},
		{"from the hub, not indexed", "/ibc/v1/source/cosmoshub/destination/osmosis", 503, "cosmoshub"},
		{"from stargaze, not a configured chain", "/ibc/v1/source/stargaze/destination/osmosis", 503, "stargaze"},
		{"unknown destination", "/ibc/v1/source/osmosis/destination/mars", 404, "mars"},
		{"unknown source", "/ibc/v1/source/mars/destination/osmosis", 404, "mars"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			resp, body := s.get(t, c.path)
			if resp.StatusCode != c.status {
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, c.status, body)
			}
			if c.status == 200 && body != c.body || c.status != 200 && !strings.Contains(body, c.body) {
				t.Errorf("body\n%s\nwant\n%s", body, c.body)
			}
			if c.status == 200 && resp.Header.Get("X-Data-Height") != "2836990" {
				t.Errorf("X-Data-Height %q", resp.Header.Get("X-Data-Height"))
			}
			validateAgainstOpenAPI(t, s, c.path, resp, body)
		})
	}
}
