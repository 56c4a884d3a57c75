package campaigns_test

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"cosmossdk.io/math"

	"github.com/chainlens/chainlens/aggregator"
	"github.com/chainlens/chainlens/config"
	"github.com/chainlens/chainlens/engagement"
	"github.com/chainlens/chainlens/internal/app"
	"github.com/chainlens/chainlens/internal/osmosistest"
)

// TestOnchainConversionValueOnOsmosis indexes the recorded Osmosis
// localnet: alice, who saw the campaign 5 s before (10 s window), swaps
// uatom for uosmo in pool 3 (actions.md #38): her message spends 1698065
// uatom into the pool plus a 1700 uatom taker fee, 1699765 in all (the
// indexed coin_spent events). The conversion carries that amount, exactly
// the goal's minimum, and its USD value at the dex_prices price of uatom
// for the hour; the uusdc swap goal matches nothing in the window.
func TestOnchainConversionValueOnOsmosis(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, chain := osmosistest.New(t)
	const swapHash = "4315C6B71C6ACBAE2BAC26FDF6647CC34634781B00C1CF651C8B74895499B36F"
	var swap struct {
		Height  int64     `bun:"height"`
		Signers []string  `bun:"signers,array"`
		Time    time.Time `bun:"time"`
	}
	if err := db.NewRaw(`SELECT t.height, t.signers, b.time FROM txs t JOIN blocks b USING (chain_id, height) WHERE t.hash = ?`, swapHash).Scan(ctx, &swap); err != nil {
		t.Fatal(err)
	}
	alice := swap.Signers[0]
	start := swap.Time.Add(-time.Hour).UTC().Truncate(time.Second)
	f := &engagement.File{
		Audiences: []engagement.AudienceSpec{{Name: "alice", Kind: "addresses", Addresses: []string{alice}}},
		Campaigns: []engagement.CampaignSpec{{Owner: "o", Name: "swap", StartDate: start.Format(time.RFC3339),
			EndDate: start.Add(24 * time.Hour).Format(time.RFC3339), Audiences: []string{"alice"}, AttributionWindow: "10s",
			Creatives: []engagement.CreativeSpec{{PositionID: "wallet_home", URL: "https://dex.example/"}},
			Goals: []engagement.GoalSpec{
				{Kind: "onchain", Chain: chain.ID, MsgType: "/osmosis.poolmanager.v1beta1.MsgSwapExactAmountIn", Denom: "uatom", MinAmount: "1699765"},
				{Kind: "onchain", Chain: chain.ID, MsgType: "/osmosis.poolmanager.v1beta1.MsgSwapExactAmountIn", Denom: "uusdc", MinAmount: "1"},
			}}},
	}
	res, err := engagement.Import(ctx, db, f)
	if err != nil {
		t.Fatal(err)
	}
	norm, _ := engagement.Normalize(alice)
	if _, err := db.ExecContext(ctx, `INSERT INTO impressions (campaign_id, audience_id, position_id, address, address_norm, shown_at)
		SELECT ?, id, 'wallet_home', ?, ?, ? FROM audiences WHERE name = 'alice'`, res.Campaigns[0], alice, norm, swap.Time.Add(-5*time.Second)); err != nil {
		t.Fatal(err)
	}
	cfg := &config.Config{Chains: []config.Chain{chain}}
	sched, err := aggregator.New(db, config.Aggregator{}, slog.New(slog.DiscardHandler), nil, app.Jobs(cfg)...)
	if err != nil {
		t.Fatal(err)
	}
	if err := sched.RunOnce(ctx); err != nil {
		t.Fatal(err)
	}
	var got []struct {
		SourceKey string `bun:"source_key"`
		Height    int64  `bun:"height"`
		Denom     string `bun:"denom"`
		Amount    string `bun:"amount"`
		Value     string `bun:"value_usd"`
	}
	if err := db.NewRaw(`SELECT source_key, height, denom, amount::text AS amount, value_usd::text AS value_usd FROM conversions
		WHERE campaign_id = ? ORDER BY goal_id, source_key`, res.Campaigns[0]).Scan(ctx, &got); err != nil {
		t.Fatal(err)
	}
	// The uatom price of the swap's hour, as the dex_prices job stored it.
	var price string
	if err := db.NewRaw(`SELECT price_usd::text FROM osmosis_asset_prices WHERE chain_id = ? AND denom = 'uatom' AND hour = date_trunc('hour', ?::timestamptz)`,
		chain.ID, swap.Time).Scan(ctx, &price); err != nil {
		t.Fatalf("uatom price: %v", err)
	}
	p, _ := math.LegacyNewDecFromStr(price)
	want := p.MulInt64(1699765).QuoInt64(1_000_000)
	if len(got) != 1 || got[0].SourceKey != chain.ID+":"+swapHash+":0" || got[0].Height != swap.Height || got[0].Denom != "uatom" || got[0].Amount != "1699765" {
		t.Fatalf("conversions %+v", got)
	}
	if v, err := math.LegacyNewDecFromStr(got[0].Value); err != nil || !v.Equal(want) || !v.IsPositive() {
		t.Errorf("value_usd %s, want %s (price %s)", got[0].Value, want, price)
	}
}
