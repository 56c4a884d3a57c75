package dex_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chainlens/chainlens/aggregator"
	"github.com/chainlens/chainlens/config"
	"github.com/chainlens/chainlens/indexer/snapshot"
	"github.com/chainlens/chainlens/internal/app"
	"github.com/chainlens/chainlens/internal/osmosistest"
	"github.com/chainlens/chainlens/internal/testdb"
)

// TestAPROnLocalnet indexes the recorded Osmosis localnet, stores the
// staking pool of truth/ as the state snapshot at 299, runs the dex jobs and
// checks the APR endpoints against values worked out by hand from the
// recording.
func TestAPROnLocalnet(t *testing.T) {
	ctx := context.Background()
	db, _ := testdb.New(t)
	ch := osmosistest.Index(t, db)

	raw, err := os.ReadFile(filepath.Join(osmosistest.Dir(), "truth", "staking_pool.json"))
	if err != nil {
		t.Fatal(err)
	}
	var pool struct {
		Pool struct {
			NotBonded string `json:"not_bonded_tokens"`
			Bonded    string `json:"bonded_tokens"`
		} `json:"pool"`
	}
	if err := json.Unmarshal(raw, &pool); err != nil {
		t.Fatal(err)
	}
	var tipTime time.Time
	if err := db.NewRaw("SELECT time FROM blocks WHERE height = ?", osmosistest.LastHeight).Scan(ctx, &tipTime); err != nil {
		t.Fatal(err)
	}
	if err := snapshot.Store(ctx, db, osmosistest.ChainID, osmosistest.LastHeight, tipTime, []snapshot.Row{
		{Kind: snapshot.KindStakingPool, Key: "bonded", Denom: "uosmo", Amount: pool.Pool.Bonded},
		{Kind: snapshot.KindStakingPool, Key: "not_bonded", Denom: "uosmo", Amount: pool.Pool.NotBonded},
		{Kind: snapshot.KindTaken, Key: snapshot.KindStakingPool, Data: json.RawMessage(`{"rows":2}`)},
	}); err != nil {
		t.Fatal(err)
	}

	cfg := &config.Config{Chains: []config.Chain{ch}}
	sched, err := aggregator.New(db, config.Aggregator{}, slog.New(slog.DiscardHandler), nil, app.Jobs(cfg)...)
	if err != nil {
		t.Fatal(err)
	}
	for range 2 { // the second run changes nothing
		if err := sched.RunOnce(ctx); err != nil {
			t.Fatal(err)
		}
	}

	// The staking day: the five distribution blocks (50, 100, 150, 200, 250)
	// paid rewards 1521231.46 + 1231721527.96 + 461939.66 + 1226843233.98 +
	// 510904.38 uosmo, commission 152123.146 + 123172152.796 + 46193.966 +
	// 122684323.398 + 51090.438 (their `rewards`/`commission` events); the
	// blocks cover 21:27:47.839431 (height 1) to 21:32:53.074771 (299), at
	// Postgres's microseconds; bonded = truth/staking_pool.json.
	var day struct {
		Rewards, Commission, Seconds, Bonded string
		Height                               int64
	}
	if err := db.NewRaw(`SELECT rewards::text, commission::text, seconds::text, bonded::text, snapshot_height FROM osmosis_staking_daily`).
		Scan(ctx, &day.Rewards, &day.Commission, &day.Seconds, &day.Bonded, &day.Height); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join([]string{day.Rewards, day.Commission, day.Seconds, day.Bonded}, " "); got !=
		"2461058837.440000000000000000 246105883.744000000000000000 305.235340 10002313583296" || day.Height != 299 {
		t.Errorf("staking day %s at %d", got, day.Height)
	}

	s := serve(t, db, cfg.Chains, time.Date(2026, 11, 21, 22, 30, 0, 0, time.UTC))
	// APR = 2461058837.44 × 31536000 s × 100 / (10002313583296 × 305.23534 s)
	// = 2542.10405254520339764911…, to 18 decimals.
	const aprDay = `[{"labels":"2026-11-21 00:00:00","symbol":"OSMO","apr":2542.104052545203397649}]`
	cases := []struct {
		name, path string
		status     int
		body       string // exact JSON, or a substring for problems
	}{
		{"staking APR, default", "/apr", 200, aprDay},
		{"staking APR, 7 days trailing", "/apr?trailing_period=7d&start_date=2026-11-01&end_date=2026-11-30", 200, aprDay},
		{"staking APR, 30 days trailing", "/apr?trailing_period=30d", 200, aprDay},
		{"staking APR, before the data", "/apr?start_date=2026-11-01&end_date=2026-11-20", 200, "[]"},
		{"staking APR, bad period", "/apr?trailing_period=2d", 400, "trailing_period"},
		{"staking APR, bad range", "/apr?start_date=2026-11-22&end_date=2026-11-21", 400, "start_date"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			resp, body := s.get(t, c.path)
			if resp.StatusCode != c.status {
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, c.status, body)
			}
			if c.status != 200 {
				if !strings.Contains(body, c.body) {
					t.Errorf("body %s, want it to contain %q", body, c.body)
				}
			} else if body != c.body {
				t.Errorf("body\n got %s\nwant %s", body, c.body)
			}
			validateAgainstOpenAPI(t, s, c.path, resp, body)
			if c.status == 200 && resp.Header.Get("X-Data-Height") != "299" {
				t.Errorf("X-Data-Height %q", resp.Header.Get("X-Data-Height"))
			}
		})
	}
}
