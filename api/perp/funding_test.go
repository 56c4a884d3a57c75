package perp_test

import (
	"strings"
	"testing"
	"time"

	"github.com/chainlens/chainlens/config"
	"github.com/chainlens/chainlens/internal/apitest"
	"github.com/chainlens/chainlens/internal/dydxtest"
)

// TestFundingRate serves the replayed funding ticks of the dYdX localnet
// (aggregator/perp TestFundingTicksReproduceTheFundingIndex checks them
// against the node's funding index): the day's average 1-hour rate in
// percent of BTC-USD (seven ticks at 20,000 ppm per 8 h, one at 20,023)
// and ETH-USD (-15,000 ppm), by perpetual id and by ticker; total and
// unknown markets are 400.
func TestFundingRate(t *testing.T) {
	t.Parallel()
	db, ch := dydxtest.New(t)
	cfg := &config.Config{Chains: []config.Chain{ch}}
	apitest.RunJobs(t, db, cfg)
	var tip time.Time
	if err := db.NewRaw("SELECT time FROM blocks WHERE chain_id = ? AND height = ?", ch.ID, dydxtest.LastHeight).Scan(t.Context(), &tip); err != nil {
		t.Fatal(err)
	}
	cfg.API = apitest.DefaultAPI(t, true)
	srv := apitest.Serve(t, db, cfg, tip.Add(time.Hour))
	day := tip.UTC().Truncate(24 * time.Hour).Format(time.DateTime)
	for _, c := range []struct{ query, want string }{
		{"", "0.2500359375"}, // (7 × 20,000 + 20,023) ÷ 8 ticks ÷ 8 h ÷ 10^4
		{"?market=0", "0.2500359375"},
		{"?market=ETH-USD&granularity=day", "-0.1875"},
		{"?market=1&granularity=month", "-0.1875"},
	} {
		var got []struct {
			Labels      string  `json:"labels"`
			FundingRate float64 `json:"funding_rate"`
		}
		_, body := srv.Get(t, "/trading/funding_rate"+c.query)
		srv.GetJSON(t, "/trading/funding_rate"+c.query, &got)
		if len(got) != 1 || (got[0].Labels != day && c.query != "?market=1&granularity=month") {
			t.Errorf("%s: %s, want one bucket %s", c.query, body, day)
			continue
		}
		if want := `"funding_rate":` + c.want + `}`; !strings.Contains(string(body), want) {
			t.Errorf("%s: %s, want %s", c.query, body, want)
		}
	}
	for _, q := range []string{"?market=total", "?market=NOPE-USD", "?granularity=year"} {
		if resp, body := srv.Get(t, "/trading/funding_rate"+q); resp.StatusCode != 400 {
			t.Errorf("%s: %d %s, want 400", q, resp.StatusCode, body)
		}
	}
}
