package dex_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	report "github.com/chainlens/chainlens/report/dex"

	"github.com/chainlens/chainlens/api"

	"cosmossdk.io/math"
	"github.com/uptrace/bun"

	"github.com/chainlens/chainlens/api/dex"
	"github.com/chainlens/chainlens/internal/osmosistest"
)

func truthFile(t *testing.T, name string, v any) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(osmosistest.Dir(), "truth", name))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, v); err != nil {
		t.Fatal(err)
	}
}

// truthPortfolio values an address's holdings as the node reports them at
// the last height (truth/: bank balances, locks, pools' total shares and
// liquidity, the CL positions' amounts), each denom at its last hourly
// close (osmosis_asset_prices, dex_prices job): what the portfolio must be
// when the indexed holdings equal the node's.
func truthPortfolio(t *testing.T, db *bun.DB, m report.Market, addr string) math.LegacyDec {
	t.Helper()
	var prices []struct {
		Denom string `bun:"denom"`
		Price string `bun:"price"`
	}
	if err := db.NewRaw(`SELECT DISTINCT ON (denom) denom, price_usd::text AS price FROM osmosis_asset_prices
		ORDER BY denom, hour DESC`).Scan(context.Background(), &prices); err != nil {
		t.Fatal(err)
	}
	price := map[string]math.LegacyDec{}
	for _, p := range prices {
		price[p.Denom] = math.LegacyMustNewDecFromStr(p.Price)
	}
	usd := func(denom, amount string) math.LegacyDec {
		p, ok := price[denom]
		if !ok {
			return math.LegacyZeroDec()
		}
		return m.USDValue(denom, math.LegacyMustNewDecFromStr(amount).TruncateInt(), p)
	}
	var balances map[string][]struct{ Denom, Amount string }
	truthFile(t, "balances.json", &balances)
	var pools struct {
		Pools []struct {
			ID          string                   `json:"id"`
			TotalShares *struct{ Amount string } `json:"total_shares"`
		} `json:"pools"`
	}
	truthFile(t, "pools.json", &pools)
	var liquidity map[string]struct {
		Liquidity []struct{ Denom, Amount string } `json:"liquidity"`
	}
	truthFile(t, "pool_total_liquidity.json", &liquidity)
	var locks map[string]struct {
		Lock struct {
			Owner string
			Coins []struct{ Denom, Amount string }
		}
	}
	truthFile(t, "lockup_locks.json", &locks)
	held := balances[addr]
	for _, l := range locks {
		if l.Lock.Owner == addr {
			held = append(held, l.Lock.Coins...)
		}
	}
	total := math.LegacyZeroDec()
	for _, c := range held {
		id, ok := strings.CutPrefix(c.Denom, "gamm/pool/")
		if !ok {
			total = total.Add(usd(c.Denom, c.Amount))
			continue
		}
		pool := math.LegacyZeroDec()
		for _, r := range liquidity[id].Liquidity {
			pool = pool.Add(usd(r.Denom, r.Amount))
		}
		for _, p := range pools.Pools {
			if p.ID == id {
				shares, _ := math.NewIntFromString(c.Amount)
				totalShares, _ := math.NewIntFromString(p.TotalShares.Amount)
				total = total.Add(pool.MulInt(shares).QuoInt(totalShares))
			}
		}
	}
	var users map[string]struct {
		Positions []struct {
			Position struct{ Address string }       `json:"position"`
			Asset0   struct{ Denom, Amount string } `json:"asset0"`
			Asset1   struct{ Denom, Amount string } `json:"asset1"`
		} `json:"positions"`
	}
	truthFile(t, "cl_user_positions.json", &users)
	for _, u := range users {
		for _, p := range u.Positions {
			if p.Position.Address == addr {
				total = total.Add(usd(p.Asset0.Denom, p.Asset0.Amount)).Add(usd(p.Asset1.Denom, p.Asset1.Amount))
			}
		}
	}
	return total
}

// TestPortfolioOnLocalnet indexes the localnet from genesis, runs every job
// and checks each named account's portfolio against the node's own state
// valued at the same prices, exactly.
func TestPortfolioOnLocalnet(t *testing.T) {
	t.Parallel()
	db, ch, cfg := aggregatedLocalnet(t)
	s := serve(t, db, cfg.Chains, time.Date(2026, 11, 21, 22, 30, 0, 0, time.UTC))
	m := report.NewMarket(ch)

	var named struct {
		Users map[string]string `json:"users"`
	}
	truthFile(t, "named_accounts.json", &named)
	if len(named.Users) != 6 {
		t.Fatalf("named users %v", named.Users)
	}
	// alice: liquid coins, gamm/pool/3 shares and CL position 8; bob: CL
	// position 1; erin: positions 4 and 7 and position 2 transferred to her
	// by alice; every user: liquid coins.
	for name, addr := range named.Users {
		want := truthPortfolio(t, db, m, addr)
		if !want.IsPositive() {
			t.Errorf("%s: truth value %s", name, want)
		}
		path := "/users/portfolio/current?address=" + addr
		resp, body := s.get(t, path)
		if resp.StatusCode != 200 {
			t.Fatalf("%s: %d %s", name, resp.StatusCode, body)
		}
		if wantBody := `{"usd":` + string(api.Number(want.String())) + `}`; body != wantBody {
			t.Errorf("%s: %s, want %s", name, body, wantBody)
		}
		validateAgainstOpenAPI(t, s, path, resp, body)
		// Every step of the chart ends after the last block (21:32): each
		// point is the current value.
		for _, c := range []struct{ rg, labels string }{
			{"1d", "2026-11-21 21:00:00,2026-11-21 22:00:00"},
			{"7d", "2026-11-21 21:00:00,2026-11-21 22:00:00"},
			{"1mo", "2026-11-21 00:00:00"},
			{"1y", "2026-11-21 00:00:00"},
			{"all", "2026-11-16 00:00:00"},
		} {
			path := "/users/portfolio/over_time?range=" + c.rg + "&address=" + addr
			resp, body := s.get(t, path)
			var pts []struct {
				Timestamp string      `json:"timestamp"`
				USD       json.Number `json:"usd"`
			}
			if err := json.Unmarshal([]byte(body), &pts); resp.StatusCode != 200 || err != nil {
				t.Fatalf("%s: %d %s", path, resp.StatusCode, body)
			}
			var labels []string
			for _, p := range pts {
				labels = append(labels, p.Timestamp)
				if p.USD != api.Number(want.String()) {
					t.Errorf("%s: %s at %s, want %s", path, p.USD, p.Timestamp, want)
				}
			}
			if strings.Join(labels, ",") != c.labels {
				t.Errorf("%s: labels %v, want %s", path, labels, c.labels)
			}
			validateAgainstOpenAPI(t, s, path, resp, body)
		}
	}
	for _, c := range []struct {
		name, path string
		status     int
		body       string
	}{
		{"an address without holdings", "/users/portfolio/current?address=osmo1wphhyarxdakxjmedw3jhxapdv9jxgu3pvcc04f", 200, `{"usd":0}`},
		// The zero account (a burn address here) holds 409854663 uosmo at the last close 1.81103865829427774.
		// Hand-checked from truth/ at the last closes (uatom 17.145233255422220063,
		// uion 4.153327807957258175, uosmo 1.81103865829427774, uusdc 1, uweth
		// 1.281698821270455963) with exact decimals: alice 30084992.3334221291750954917
		// (five liquid coins, 98333333333333333333 gamm/pool/3 shares held and
		// 1666666666666666667 locked (lock 2) of 108000000001200406700, position 8 =
		// 39691411 uweth), bob 31044738.7486378675377415803 (liquid coins,
		// 1250000000000000000 gamm/pool/3 locked (lock 3), position 1 = 896024143
		// uion + 2232081300 uosmo); each term is rounded to 18 decimals here.
		{"alice", "/users/portfolio/current?address=" + named.Users["alice"], 200, `{"usd":30084992.333422129175095489}`},
		{"bob", "/users/portfolio/current?address=" + named.Users["bob"], 200, `{"usd":31044738.748637867537741579}`},
		{"the zero account", "/users/portfolio/current?address=osmo1qqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqmcn030", 200, `{"usd":742.262638975173357956}`},
		{"another chain's address", "/users/portfolio/current?address=cosmos1qqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqnrql8a", 400, "address"},
		{"not an address", "/users/portfolio/current?address=osmo1abc", 400, "address"},
		// BIP-173: an all-upper-case bech32 string is the same address.
		{"upper case", "/users/portfolio/current?address=" + strings.ToUpper(named.Users["alice"]), 200, `{"usd":30084992.333422129175095489}`},
		{"mixed case", "/users/portfolio/current?address=" + strings.ToUpper(named.Users["alice"][:6]) + named.Users["alice"][6:], 400, "address"},
		{"missing address", "/users/portfolio/current", 400, "address"},
		{"bad range", "/users/portfolio/over_time?range=2d&address=" + named.Users["alice"], 400, "range"},
	} {
		resp, body := s.get(t, c.path)
		if resp.StatusCode != c.status || !strings.Contains(body, c.body) {
			t.Errorf("%s: %d %s", c.name, resp.StatusCode, body)
		}
	}

	// Without the genesis (indexing started later) balances are unknown: 503.
	if _, err := db.ExecContext(context.Background(), "DELETE FROM genesis_imports"); err != nil {
		t.Fatal(err)
	}
	s = serve(t, db, cfg.Chains, time.Date(2026, 11, 21, 22, 30, 0, 0, time.UTC)) // no cached answers
	for _, path := range []string{"/users/portfolio/current?address=" + named.Users["bob"], "/users/portfolio/over_time?range=1d&address=" + named.Users["bob"]} {
		if resp, body := s.get(t, path); resp.StatusCode != 503 || !strings.Contains(body, "not indexed from its genesis") {
			t.Errorf("%s without genesis: %d %s", path, resp.StatusCode, body)
		}
	}
}

// TestPortfolioReadsFromItsFirstTime: an answer reads each series' last
// row before its first time and the rows after, not whole histories; the
// values at every hour from there on equal those of the whole history's,
// for every address with holdings and every first time across the
// recording (hour by hour, and the latest state alone).
func TestPortfolioReadsFromItsFirstTime(t *testing.T) {
	t.Parallel()
	db, _, cfg := aggregatedLocalnet(t)
	ctx := context.Background()
	// The recording's report rows span an hour or two: give every series
	// a history of 40 earlier hours, rows copied back with other amounts
	// and prices, one hour in three left without a row (a value then is
	// the row before's). The kept latest rows stay the latest.
	for _, q := range []string{
		`INSERT INTO osmosis_balances_hourly SELECT chain_id, address, denom, hour - k * interval '1 hour', amount * (k + 1) FROM osmosis_balances_hourly, generate_series(1, 40) k WHERE k % 3 <> 0`,
		`INSERT INTO osmosis_locked_hourly SELECT chain_id, address, denom, hour - k * interval '1 hour', amount * (k + 2) FROM osmosis_locked_hourly, generate_series(1, 40) k WHERE k % 3 <> 1`,
		`INSERT INTO osmosis_cl_position_liquidity_hourly SELECT chain_id, position_id, hour - k * interval '1 hour', pool_id, address, lower_tick, upper_tick, liquidity * (k + 1)
			FROM osmosis_cl_position_liquidity_hourly, generate_series(1, 40) k WHERE k % 3 <> 2`,
		`INSERT INTO osmosis_pool_shares_hourly SELECT chain_id, pool_id, hour - k * interval '1 hour', total_shares * (k + 3) FROM osmosis_pool_shares_hourly, generate_series(1, 40) k WHERE k % 3 <> 0`,
		`INSERT INTO osmosis_pool_reserves_hourly SELECT chain_id, pool_id, denom, hour - k * interval '1 hour', amount * (k + 1) FROM osmosis_pool_reserves_hourly, generate_series(1, 40) k WHERE k % 3 <> 1`,
		`INSERT INTO osmosis_cl_state_hourly SELECT chain_id, pool_id, hour - k * interval '1 hour', sqrt_price, tick, liquidity FROM osmosis_cl_state_hourly, generate_series(1, 40) k WHERE k % 3 <> 2`,
		`INSERT INTO osmosis_asset_prices SELECT chain_id, denom, hour - k * interval '1 hour', round(price_usd * (1 + k / 7.0), 18) FROM osmosis_asset_prices, generate_series(1, 40) k WHERE k % 3 <> 0`,
	} {
		if _, err := db.ExecContext(ctx, q+" ON CONFLICT DO NOTHING"); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	s := dex.New(cfg, db)
	var addrs []string
	if err := db.NewRaw(`SELECT address FROM (SELECT address FROM osmosis_balances_hourly UNION SELECT address FROM osmosis_cl_position_liquidity_hourly
		UNION SELECT address FROM osmosis_locked_hourly) a ORDER BY 1`).Scan(ctx, &addrs); err != nil {
		t.Fatal(err)
	}
	var first, last time.Time
	if err := db.NewRaw(`SELECT min(hour), max(hour) FROM (SELECT hour FROM osmosis_balances_hourly UNION ALL SELECT hour FROM osmosis_asset_prices
		UNION ALL SELECT hour FROM osmosis_cl_position_liquidity_hourly) h`).Scan(ctx, &first, &last); err != nil {
		t.Fatal(err)
	}
	var hours []time.Time // every hour from before the first row to after the last
	for h := first.UTC().Add(-time.Hour); !h.After(last.Add(2 * time.Hour)); h = h.Add(time.Hour) {
		hours = append(hours, h)
	}
	if len(addrs) < 6 || len(hours) < 40 {
		t.Fatalf("%d addresses, %d hours: the recording is not what this test needs", len(addrs), len(hours))
	}
	checked, nonzero := 0, 0
	for _, addr := range addrs {
		whole, err := s.PortfolioValues(ctx, addr, time.Time{}, hours)
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range whole {
			if v.IsPositive() {
				nonzero++
			}
		}
		latest, err := s.PortfolioValues(ctx, addr, dex.EndOfTime, []time.Time{dex.EndOfTime})
		if err != nil {
			t.Fatal(err)
		}
		if want := whole[len(whole)-1]; !latest[0].Equal(want) {
			t.Errorf("%s now: %s, the whole history gives %s", addr, latest[0], want)
		}
		// From every hour, and from the middle of every seventh.
		var froms []time.Time
		for i, h := range hours {
			froms = append(froms, h)
			if i%7 == 0 {
				froms = append(froms, h.Add(30*time.Minute))
			}
		}
		for _, from := range froms {
			i := 0
			for i < len(hours) && hours[i].Before(from) {
				i++
			}
			got, err := s.PortfolioValues(ctx, addr, from, hours[i:])
			if err != nil {
				t.Fatal(err)
			}
			for k, v := range got {
				checked++
				if !v.Equal(whole[i+k]) {
					t.Fatalf("%s at %s read from %s: %s, the whole history gives %s", addr, hours[i+k], from, v, whole[i+k])
				}
			}
		}
	}
	if nonzero < len(hours) {
		t.Fatalf("only %d non-zero values: nothing was compared", nonzero)
	}
	t.Logf("%d values compared over %d addresses and %d hours", checked, len(addrs), len(hours))
}
