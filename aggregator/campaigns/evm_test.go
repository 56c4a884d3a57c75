package campaigns_test

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"cosmossdk.io/math"
	"github.com/uptrace/bun"

	"github.com/chainlens/chainlens/aggregator"
	"github.com/chainlens/chainlens/aggregator/campaigns"
	"github.com/chainlens/chainlens/config"
	"github.com/chainlens/chainlens/engagement"
	"github.com/chainlens/chainlens/internal/app"
	"github.com/chainlens/chainlens/internal/evmtest"
)

// TestOnchainConversionOnEVM indexes the recorded go-ethereum devnet from
// its replay node: the sender of one indexed ERC-20 transfer, who saw the
// campaign 5 s before (10 s window), converts on the token's goal. The
// conversion carries the transfer's tx hash, height and amount, and its USD
// value at the token's configured price (price_usd; the peg for a USD
// stablecoin): amount ÷ 10^decimals × price.
func TestOnchainConversionOnEVM(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, ch, tr := indexEVM(t)
	var token config.Token
	for _, tk := range ch.Tokens {
		if strings.EqualFold(tk.Address, tr.Token) {
			token = tk
		}
	}
	if token.Symbol == "" {
		t.Fatalf("token %s is not configured", tr.Token)
	}
	start := tr.Time.Add(-time.Hour).UTC().Truncate(time.Second)
	f := &engagement.File{
		Audiences: []engagement.AudienceSpec{{Name: "sender", Kind: "addresses", Addresses: []string{tr.Sender}}},
		Campaigns: []engagement.CampaignSpec{{Owner: "o", Name: "send", StartDate: start.Format(time.RFC3339),
			EndDate: start.Add(24 * time.Hour).Format(time.RFC3339), Audiences: []string{"sender"}, AttributionWindow: "10s",
			Creatives: []engagement.CreativeSpec{{PositionID: "wallet_home", URL: "https://app.example/"}},
			Goals:     []engagement.GoalSpec{{Kind: "onchain", Chain: ch.ID, Contract: tr.Token, MinAmount: tr.Amount}}}},
	}
	if err := f.CheckChains(map[string]string{ch.ID: ch.Kind}); err != nil {
		t.Fatal(err)
	}
	res, err := engagement.Import(ctx, db, f)
	if err != nil {
		t.Fatal(err)
	}
	norm, _ := engagement.Normalize(tr.Sender)
	if _, err := db.ExecContext(ctx, `INSERT INTO impressions (campaign_id, audience_id, position_id, address, address_norm, shown_at)
		SELECT ?, id, 'wallet_home', ?, ?, ? FROM audiences WHERE name = 'sender'`, res.Campaigns[0], tr.Sender, norm, tr.Time.Add(-5*time.Second)); err != nil {
		t.Fatal(err)
	}
	sched, err := aggregator.New(db, config.Aggregator{}, slog.New(slog.DiscardHandler), nil, app.Jobs(&config.Config{Chains: []config.Chain{ch}})...)
	if err != nil {
		t.Fatal(err)
	}
	if err := sched.RunOnce(ctx); err != nil {
		t.Fatal(err)
	}
	var got []struct {
		TxHash string `bun:"tx_hash"`
		Height int64  `bun:"height"`
		Amount string `bun:"amount"`
		Value  string `bun:"value_usd"`
	}
	if err := db.NewRaw(`SELECT tx_hash, height, amount::text AS amount, value_usd::text AS value_usd FROM conversions WHERE campaign_id = ?`,
		res.Campaigns[0]).Scan(ctx, &got); err != nil {
		t.Fatal(err)
	}
	amt, _ := math.NewIntFromString(tr.Amount)
	want := math.LegacyNewDecFromInt(amt).Quo(math.LegacyNewDec(10).Power(uint64(token.Decimals))).Mul(token.Price())
	if len(got) != 1 || got[0].TxHash != tr.TxHash || got[0].Height != tr.Height || got[0].Amount != tr.Amount {
		t.Fatalf("conversions %+v, want one of tx %s at %d for %s", got, tr.TxHash, tr.Height, tr.Amount)
	}
	if v, err := math.LegacyNewDecFromStr(got[0].Value); err != nil || !v.Equal(want) || !want.IsPositive() {
		t.Errorf("value_usd %s, want %s (%s %s at %s)", got[0].Value, want, tr.Amount, token.Symbol, token.Price())
	}
}

// evmTransfer is the first indexed ERC-20 transfer of the recorded devnet.
type evmTransfer struct {
	Token  string    `bun:"token"`
	Sender string    `bun:"sender"`
	Amount string    `bun:"amount"`
	TxHash string    `bun:"tx_hash"`
	Height int64     `bun:"height"`
	Time   time.Time `bun:"time"`
}

// indexEVM indexes the recorded go-ethereum devnet from its replay node and
// returns its first ERC-20 transfer.
func indexEVM(t *testing.T) (*bun.DB, config.Chain, evmTransfer) {
	t.Helper()
	ctx := context.Background()
	db, ch := evmtest.Index(t)
	var tr evmTransfer
	if err := db.NewRaw(`SELECT t.token, t.sender, t.amount::text AS amount, t.tx_hash, t.height, b.time FROM erc20_transfers t
		JOIN evm_blocks b ON b.chain_id = t.chain_id AND b.height = t.height
		WHERE t.chain_id = ? AND t.kind = 'transfer' ORDER BY t.height, t.log_index LIMIT 1`, ch.ID).Scan(ctx, &tr); err != nil {
		t.Fatal(err)
	}
	return db, ch, tr
}

// TestTxLookupsTakeTurns: with more pending tx hashes than a run looks up,
// those not found yet go after the others, so a newer event's hash is
// verified on the next run (it waited for the older ones to time out, 24 h).
func TestTxLookupsTakeTurns(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, _, tr := indexEVM(t)
	now := tr.Time.Add(time.Hour)
	ev := func(id, hash string, received time.Time) {
		t.Helper()
		if _, err := db.ExecContext(ctx, `INSERT INTO tracked_events (id, source, name, identity_type, identity_id, identity_norm, attributes, timestamp, received_at, dedupe_key)
			VALUES (?, 'track', 'swap', 'address', ?, ?, jsonb_build_object('tx_hash', ?::text), ?, ?, ?)`,
			id, tr.Sender, strings.TrimPrefix(tr.Sender, "0x"), hash, received, received, "k"+id); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 3 {
		ev(fmt.Sprintf("evt_old%d", i), "0x"+strings.Repeat(fmt.Sprint(i), 64), now.Add(time.Duration(i-10)*time.Minute))
	}
	ev("evt_new", tr.TxHash, now.Add(-time.Minute))
	job := campaigns.Website{Now: func() time.Time { return now }, Batch: 2}
	status := func() string {
		var s sql.NullString
		if err := db.NewRaw(`SELECT tx_status FROM tracked_events WHERE id = 'evt_new'`).Scan(ctx, &s); err != nil {
			t.Fatal(err)
		}
		return s.String
	}
	for run := 1; run <= 2; run++ {
		tx, err := db.BeginTx(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := job.Run(ctx, tx, 0, aggregator.NoBound); err != nil {
			t.Fatal(err)
		}
		if err := tx.Commit(); err != nil {
			t.Fatal(err)
		}
		if got, want := status(), map[int]string{1: "", 2: "verified"}[run]; got != want {
			t.Errorf("after run %d: the newest event's tx is %q, want %q", run, got, want)
		}
	}
}

// TestOnchainConversionThroughAnAnonymousClick: a visitor clicked the
// campaign's link before connecting a wallet (the click has no wallet; the
// landing page's event carried its click id and the visitor's anonymousId),
// then identified as the transfer's sender: the sender's transfer converts,
// credited to that click.
func TestOnchainConversionThroughAnAnonymousClick(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, ch, tr := indexEVM(t)
	start := tr.Time.Add(-time.Hour).UTC().Truncate(time.Second)
	f := &engagement.File{
		Audiences: []engagement.AudienceSpec{{Name: "anyone", Kind: "addresses", Addresses: []string{"0x" + strings.Repeat("11", 20)}}},
		Campaigns: []engagement.CampaignSpec{{Owner: "o", Name: "send", StartDate: start.Format(time.RFC3339),
			EndDate: start.Add(24 * time.Hour).Format(time.RFC3339), Audiences: []string{"anyone"}, AttributionWindow: "10s",
			Creatives: []engagement.CreativeSpec{{PositionID: "site_banner", URL: "https://app.example/"}},
			Goals:     []engagement.GoalSpec{{Kind: "onchain", Chain: ch.ID, Contract: tr.Token, MinAmount: tr.Amount}}}},
	}
	res, err := engagement.Import(ctx, db, f)
	if err != nil {
		t.Fatal(err)
	}
	sender, _ := engagement.Normalize(tr.Sender)
	clicked := tr.Time.Add(-5 * time.Second)
	for _, q := range []struct {
		sql  string
		args []any
	}{
		{`INSERT INTO clicks (click_id, campaign_id, audience_id, position_id, address, address_norm, url, ip_hash, clicked_at)
			SELECT 'clk_anon', ?, id, 'site_banner', '', '', 'https://app.example/', '\x00', ? FROM audiences WHERE name = 'anyone'`, []any{res.Campaigns[0], clicked}},
		{`INSERT INTO tracked_events (id, source, name, identity_type, identity_id, identity_norm, anonymous_id, click_id, timestamp, received_at, dedupe_key, attributed_at)
			VALUES ('evt_land', 'sdk', 'page', 'anonymous', '', '', 'anon-1', 'clk_anon', ?, ?, 'k-land', ?)`, []any{clicked, clicked, clicked}},
		{`INSERT INTO identity_links (anonymous_id, identity_norm, first_seen, last_seen) VALUES ('anon-1', ?, ?, ?)`, []any{sender, clicked, clicked}},
	} {
		if _, err := db.ExecContext(ctx, q.sql, q.args...); err != nil {
			t.Fatal(err)
		}
	}
	sched, err := aggregator.New(db, config.Aggregator{}, slog.New(slog.DiscardHandler), nil, campaigns.Onchain{Chain: ch})
	if err != nil {
		t.Fatal(err)
	}
	if err := sched.RunOnce(ctx); err != nil {
		t.Fatal(err)
	}
	var got []string
	if err := db.NewRaw(`SELECT tx_hash || ' ' || address_norm || ' ' || attribution FROM conversions WHERE campaign_id = ?`, res.Campaigns[0]).Scan(ctx, &got); err != nil {
		t.Fatal(err)
	}
	if want := tr.TxHash + " " + sender + " click"; len(got) != 1 || got[0] != want {
		t.Errorf("conversions %v, want [%s]", got, want)
	}
}
