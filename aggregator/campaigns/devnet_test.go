package campaigns_test

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"testing"
	"time"

	sdkmath "cosmossdk.io/math"
	sdk "github.com/cosmos/cosmos-sdk/types"
	"github.com/cosmos/cosmos-sdk/types/bech32"
	"github.com/uptrace/bun"

	"github.com/chainlens/chainlens/aggregator"
	"github.com/chainlens/chainlens/api"
	"github.com/chainlens/chainlens/api/apikey"
	"github.com/chainlens/chainlens/api/route"
	"github.com/chainlens/chainlens/chains/cosmos"
	"github.com/chainlens/chainlens/config"
	"github.com/chainlens/chainlens/devchain/devnet"
	"github.com/chainlens/chainlens/engagement"
	"github.com/chainlens/chainlens/indexer"
	"github.com/chainlens/chainlens/indexer/cometbft"
	"github.com/chainlens/chainlens/indexer/snapshot"
	"github.com/chainlens/chainlens/internal/app"
	"github.com/chainlens/chainlens/internal/devnettest"
	"github.com/chainlens/chainlens/internal/testdb"
)

// server is the real API over db, on the wall clock (the chain's block
// times are real too).
type server struct {
	url, key string
	client   *http.Client
}

func serve(t *testing.T, db *bun.DB, cfg *config.Config) server {
	t.Helper()
	log := slog.New(slog.DiscardHandler)
	s, err := api.New(api.Options{DB: db, Config: cfg.API, Ops: route.Table(), Handlers: app.Handlers(cfg, db), Auth: apikey.NewAuthenticator(db),
		Meter: apikey.NewMeter(db, log), Log: log})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(s.Handler(cfg.API.Listen))
	t.Cleanup(srv.Close)
	key, _, err := apikey.Create(context.Background(), db, apikey.Spec{Name: t.Name(), Kind: apikey.Secret, Scopes: []string{"all"},
		QuotaCredits: 100000, QuotaPeriod: time.Hour, RatePerSec: 1000, RateBurst: 1000})
	if err != nil {
		t.Fatal(err)
	}
	return server{url: srv.URL, key: key, client: &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

func (s server) do(t *testing.T, method, path, body string) (int, []byte) {
	t.Helper()
	var r io.Reader
	if body != "" {
		r = bytes.NewBufferString(body)
	}
	req, err := http.NewRequest(method, s.url+path, r)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+s.key)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := s.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

// richMin is the "rich" rules' minimum: a user's genesis funds.
const richMin = devnet.UserFunds

func bankBalance(t *testing.T, ctx context.Context, c *cometbft.Client, address string, height int64) sdkmath.Int {
	t.Helper()
	b, err := devnet.BankBalance(ctx, c, address, devnet.BondDenom, height)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func reprefix(t *testing.T, addr, hrp string) string {
	t.Helper()
	_, raw, err := bech32.DecodeAndConvert(addr)
	if err != nil {
		t.Fatal(err)
	}
	s, err := bech32.ConvertAndEncode(hrp, raw)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func norm(t *testing.T, addr string) string {
	t.Helper()
	n, err := engagement.Normalize(addr)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestConversionsOnDevnet runs a real cosmos-sdk chain in process: wallets
// see (user0, through its osmo1 spelling) and click (user1) a campaign
// through the real API, then act on chain; after indexing, the jobs
// attribute exactly the qualifying actions, verify the tx hash a website
// event carries, and build the report. A second run changes nothing.
func TestConversionsOnDevnet(t *testing.T) {
	t.Parallel()
	n, ctx, addr := devnettest.Start(t, 3*time.Minute)
	db, _ := testdb.New(t)
	chain := config.Chain{ID: n.ChainID(), Kind: "cosmos", RPC: []string{n.RPCURL()}, BatchSize: 10, Concurrency: 4,
		PollInterval: config.Duration(50 * time.Millisecond), Bech32Prefix: "cosmos", StartHeight: 1}
	cfg, err := config.Parse([]byte("database: {url: postgres://postgres@127.0.0.1:5432/x}\n"), "", nil)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Chains = []config.Chain{chain}

	coins := func(a int64) sdk.Coins { return sdk.NewCoins(sdk.NewInt64Coin(devnet.BondDenom, a)) }

	start := time.Now().Add(-time.Hour).UTC().Truncate(time.Second)
	f := &engagement.File{
		Audiences: []engagement.AudienceSpec{{Name: "devnet users", Kind: "addresses",
			Addresses: []string{reprefix(t, addr["user0"], "osmo"), addr["user1"]}},
			{Name: "active", Kind: "rule", Rule: json.RawMessage(fmt.Sprintf(`{"chain": %q, "active_within_days": 1}`, chain.ID))},
			{Name: "rich", Kind: "rule", Rule: json.RawMessage(fmt.Sprintf(`{"chain": %q, "holds": {"denom": "stake", "min_amount": "%d"}}`, chain.ID, richMin))},
			{Name: "active and rich", Kind: "rule", Rule: json.RawMessage(fmt.Sprintf(
				`{"chain": %q, "active_within_days": 1, "holds": {"denom": "stake", "min_amount": "%d"}}`, chain.ID, richMin))}},
		Campaigns: []engagement.CampaignSpec{{Owner: "acme", Name: "stake more", Priority: 1,
			StartDate: start.Format(time.RFC3339), EndDate: start.Add(48 * time.Hour).Format(time.RFC3339),
			Audiences: []string{"devnet users"},
			Creatives: []engagement.CreativeSpec{{PositionID: "wallet_home", Title: "Stake", URL: "https://acme.example/stake"}},
			Goals: []engagement.GoalSpec{
				{Kind: "onchain", Chain: chain.ID, MsgType: "/cosmos.bank.v1beta1.MsgSend", Denom: devnet.BondDenom, MinAmount: "1000"},
				{Kind: "onchain", Chain: chain.ID, MsgType: "/cosmos.staking.v1beta1.MsgDelegate"},
				{Kind: "event", Event: "wallet_connected"},
			}}},
	}
	if err := f.CheckChains(map[string]string{chain.ID: chain.Kind}); err != nil {
		t.Fatal(err)
	}
	imp, err := engagement.Import(ctx, db, f)
	if err != nil {
		t.Fatal(err)
	}
	campaignID := imp.Campaigns[0]
	var goalIDs []int64
	if err := db.NewRaw(`SELECT id FROM campaign_goals WHERE campaign_id = ? ORDER BY id`, campaignID).Scan(ctx, &goalIDs); err != nil || len(goalIDs) != 3 {
		t.Fatalf("goals %v: %v", goalIDs, err)
	}
	var audienceID int64
	if err := db.NewRaw(`SELECT id FROM audiences WHERE name = 'devnet users'`).Scan(ctx, &audienceID); err != nil {
		t.Fatal(err)
	}

	srv := serve(t, db, cfg)
	// user0 sees the campaign (asked under its osmo1 spelling); user1 clicks it.
	if code, b := srv.do(t, "GET", "/campaign/"+reprefix(t, addr["user0"], "osmo")+"?position_id=wallet_home", ""); code != 200 || !bytes.Contains(b, []byte(`"stake more"`)) {
		t.Fatalf("campaign: %d %s", code, b)
	}
	q := url.Values{"url": {"https://acme.example/stake"}, "address": {addr["user1"]}, "campaign_id": {strconv.FormatInt(campaignID, 10)},
		"audience_id": {strconv.FormatInt(audienceID, 10)}, "position_id": {"wallet_home"}}
	if code, b := srv.do(t, "GET", "/click?"+q.Encode(), ""); code != http.StatusFound {
		t.Fatalf("click: %d %s", code, b)
	}

	sendHash, sendHeight, err := n.Send(ctx, "user0", addr["user2"], coins(5000)) // converts: 5000 >= 1000
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := n.Send(ctx, "user0", addr["user2"], coins(999)); err != nil { // below min_amount
		t.Fatal(err)
	}
	otherHash, _, err := n.Send(ctx, "user2", addr["user0"], coins(3000)) // user2 never saw the campaign
	if err != nil {
		t.Fatal(err)
	}
	delHash, delHeight, err := n.Delegate(ctx, "user1", n.Validators()[0], sdk.NewInt64Coin(devnet.BondDenom, 2_000_000)) // click attribution
	if err != nil {
		t.Fatal(err)
	}

	// Website events: wallet_connected by user0 carrying its send's hash
	// (verified), and one carrying user2's hash (signer mismatch).
	ts := time.Now().UnixMilli()
	ev := func(id, hash string) string {
		return fmt.Sprintf(`{"name":"wallet_connected","identity":{"type":"address","id":%q},"timestamp":%d,"attributes":{"tx_hash":%q}}`, id, ts, hash)
	}
	var evIDs []string
	for _, body := range []string{ev(addr["user0"], sendHash), ev(addr["user1"], otherHash)} {
		code, b := srv.do(t, "POST", "/track", body)
		if code != 200 {
			t.Fatalf("track: %d %s", code, b)
		}
		var a struct {
			ID string `json:"id"`
		}
		if err := json.Unmarshal(b, &a); err != nil {
			t.Fatalf("track answer %s: %v", b, err)
		}
		evIDs = append(evIDs, a.ID)
	}

	until := delHeight + 1
	if err := n.WaitForHeight(ctx, until); err != nil {
		t.Fatal(err)
	}
	client, err := cometbft.New(chain.RPC, cometbft.Retry{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	m, _ := indexer.NewMetrics(nil)
	x := indexer.NewCosmos(chain, db, indexer.NewClientSource(client), cosmos.NewAdapter(chain.Kind, chain.Bech32Prefix), slog.New(slog.DiscardHandler), m)
	if err := x.Run(ctx, until); err != nil {
		t.Fatal(err)
	}
	// The snapshotter takes the holder list the "rich" rules need at until.
	snapChain := chain
	snapChain.SnapshotEvery = until
	if taken, err := snapshot.NewSnapshotter(db, client, snapChain, nil).Poll(ctx); err != nil || fmt.Sprint(taken) != fmt.Sprint([]int64{until}) {
		t.Fatalf("snapshot: %v %v", taken, err)
	}
	sched, err := aggregator.New(db, config.Aggregator{}, slog.New(slog.DiscardHandler), nil, app.Jobs(cfg)...)
	if err != nil {
		t.Fatal(err)
	}
	if err := sched.RunOnce(ctx); err != nil {
		t.Fatal(err)
	}

	type conv struct {
		GoalID      int64  `bun:"goal_id"`
		SourceKey   string `bun:"source_key"`
		Source      string `bun:"source"`
		AddressNorm string `bun:"address_norm"`
		Attribution string `bun:"attribution"`
		TxHash      string `bun:"tx_hash"`
		Height      int64  `bun:"height"`
		Denom       string `bun:"denom"`
		Amount      string `bun:"amount"`
		Verified    bool   `bun:"verified"`
	}
	read := func() []conv {
		var got []conv
		if err := db.NewRaw(`SELECT goal_id, source_key, source, address_norm, attribution, coalesce(tx_hash, '') AS tx_hash,
			coalesce(height, 0) AS height, coalesce(denom, '') AS denom, coalesce(amount::text, '') AS amount, verified
			FROM conversions WHERE campaign_id = ? ORDER BY source, goal_id`, campaignID).Scan(ctx, &got); err != nil {
			t.Fatal(err)
		}
		return got
	}
	want := []conv{
		{goalIDs[0], chain.ID + ":" + sendHash + ":0", "onchain", norm(t, addr["user0"]), "impression", sendHash, sendHeight, devnet.BondDenom, "5000", true},
		{goalIDs[1], chain.ID + ":" + delHash + ":0", "onchain", norm(t, addr["user1"]), "click", delHash, delHeight, "", "", true},
		{goalIDs[2], evIDs[0], "website", norm(t, addr["user0"]), "impression", "", 0, "", "", true},
		{goalIDs[2], evIDs[1], "website", norm(t, addr["user1"]), "click", "", 0, "", "", false},
	}
	got := read()
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("conversions:\n got %+v\nwant %+v", got, want)
	}
	var status []string
	if err := db.NewRaw(`SELECT tx_status || ':' || tx_chain_id FROM tracked_events WHERE id IN (?, ?) ORDER BY id = ? DESC`,
		evIDs[0], evIDs[1], evIDs[0]).Scan(ctx, &status); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(status) != fmt.Sprint([]string{"verified:" + chain.ID, "signer_mismatch:" + chain.ID}) {
		t.Errorf("tx status %v", status)
	}

	type report struct {
		Impressions int64   `bun:"impressions"`
		Clicks      int64   `bun:"clicks"`
		Website     int64   `bun:"website_conversions"`
		Onchain     int64   `bun:"onchain_conversions"`
		Value       string  `bun:"conversion_value_usd"`
		Unique      int64   `bun:"unique_wallets"`
		Converting  int64   `bun:"converting_wallets"`
		Ret7        *string `bun:"retention_7d"`
	}
	var r report
	if err := db.NewRaw(`SELECT impressions, clicks, website_conversions, onchain_conversions, conversion_value_usd::text AS conversion_value_usd,
		unique_wallets, converting_wallets, retention_7d::text AS retention_7d FROM campaign_reports WHERE campaign_id = ?`, campaignID).Scan(ctx, &r); err != nil {
		t.Fatal(err)
	}
	if r != (report{Impressions: 1, Clicks: 1, Website: 2, Onchain: 2, Value: "0", Unique: 2, Converting: 2}) {
		t.Errorf("report %+v", r)
	}

	// Rule audiences: every user signed a tx today; only user2 holds at
	// least richMin (it received more than it sent); every other holder the
	// chain lists (module accounts, the validator) holds that much at until.
	members := func(name string) []string {
		var out []string
		if err := db.NewRaw(`SELECT m.address FROM audience_members m JOIN audiences a ON a.id = m.audience_id WHERE a.name = ? ORDER BY 1`, name).Scan(ctx, &out); err != nil {
			t.Fatal(err)
		}
		return out
	}
	users := []string{norm(t, addr["user0"]), norm(t, addr["user1"]), norm(t, addr["user2"])}
	slices.Sort(users)
	if got := members("active"); fmt.Sprint(got) != fmt.Sprint(users) {
		t.Errorf("active members %v, want %v", got, users)
	}
	if got := members("active and rich"); fmt.Sprint(got) != fmt.Sprint([]string{norm(t, addr["user2"])}) {
		t.Errorf("active and rich members %v, want user2 %s", got, norm(t, addr["user2"]))
	}
	rich := members("rich")
	if !slices.Contains(rich, norm(t, addr["user2"])) || slices.Contains(rich, norm(t, addr["user0"])) || slices.Contains(rich, norm(t, addr["user1"])) {
		t.Errorf("rich members %v", rich)
	}
	for _, m := range rich {
		raw, _ := hex.DecodeString(m)
		a, _ := bech32.ConvertAndEncode("cosmos", raw)
		if b := bankBalance(t, ctx, client, a, until); b.LT(sdkmath.NewInt(richMin)) {
			t.Errorf("rich member %s holds %s at %d", a, b, until)
		}
	}

	// Idempotent: running every job again adds nothing.
	if err := sched.RunOnce(ctx); err != nil {
		t.Fatal(err)
	}
	if again := read(); fmt.Sprint(again) != fmt.Sprint(got) {
		t.Errorf("second run changed conversions:\n%+v\n%+v", again, got)
	}
}
