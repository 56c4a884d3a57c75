package staking_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"github.com/chainlens/chainlens/aggregator"
	aggics "github.com/chainlens/chainlens/aggregator/icsrewards"
	"github.com/chainlens/chainlens/chains/cosmos"
	"github.com/chainlens/chainlens/config"
	"github.com/chainlens/chainlens/internal/apitest"
	"github.com/chainlens/chainlens/internal/localnet"
	"github.com/chainlens/chainlens/internal/testdb"
)

// Vouchers of the chain registry (osmosis and cosmoshub assetlists).
const (
	ntrnOnHub      = "ibc/0025F8A87464A471E66B234C4F93AEC5B4DA3D42D7986451A059273426290DD5" // transfer/channel-569/untrn
	ntrnOnOsmosis  = "ibc/126DA09104B71B164883842B769C0E9EC1486C0887D27A9999E395C2C8FB5682" // transfer/channel-874/untrn
	strdOnOsmosis  = "ibc/A8CA5EE328FA10C9519DF6057DA1F69682D28F7D0F5CCC7ECB72E3DCA2D157A4" // transfer/channel-326/ustrd
	dexChain       = "osmosis-1"
	rewardsAddress = "cosmos1ap0mh6xzfn8943urr84q6ae7zfnar48am2erhd"
)

// TestRevenueShareByConsumer adds interchain-security rewards to real txs
// of the indexed Hub recording, as the indexer stores a relayer's
// MsgRecvPacket (an ibc_packets receipt and the provider module's event
// after it): no recording holds a consumer chain, the events follow
// chain-events.md §8.3. The dex chain's receipts and hourly prices are
// stored as its indexer and dex_prices job do.
func TestRevenueShareByConsumer(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, _ := testdb.New(t)
	hub := localnet.Hub.Index(t, db)
	var ok, failed []struct {
		Height  int64     `bun:"height"`
		TxIndex int       `bun:"tx_index"`
		Time    time.Time `bun:"time"`
	}
	for _, q := range []struct {
		dst  any
		code string
	}{{&ok, "= 0"}, {&failed, "<> 0"}} {
		if err := db.NewRaw(`SELECT t.height, t.tx_index, b.time FROM txs t JOIN blocks b USING (chain_id, height)
			WHERE t.chain_id = ? AND t.code `+q.code+` ORDER BY t.height, t.tx_index LIMIT 2`, hub.ID).Scan(ctx, q.dst); err != nil {
			t.Fatal(err)
		}
	}
	if len(ok) < 2 || len(failed) < 1 {
		t.Fatalf("recording: %d successful and %d failed txs", len(ok), len(failed))
	}
	// recv adds a receipt of packetDenom on the Hub's channel at event
	// 900+10i of the tx, then the reward event of its kind.
	recv := func(tx struct {
		Height  int64     `bun:"height"`
		TxIndex int       `bun:"tx_index"`
		Time    time.Time `bun:"time"`
	}, i int, kind, consumerID, consumer, channel, packetDenom, amount string) {
		t.Helper()
		ev := 900 + 10*i
		denom := cosmos.VoucherDenom("transfer/" + channel + "/" + packetDenom)
		mustExec(t, db, `INSERT INTO ibc_packets (chain_id, height, tx_index, event_index, msg_index, kind, src_port, src_channel,
			dst_port, dst_channel, sequence, timeout_timestamp, denom, amount, sender, receiver, success)
			VALUES (?, ?, ?, ?, -1, 'recv', 'transfer', 'channel-1', 'transfer', ?, ?, 0, ?, ?, 'consumer1x', ?, true)`,
			hub.ID, tx.Height, tx.TxIndex, ev, channel, 100+i, packetDenom, amount, rewardsAddress)
		attrs, _ := json.Marshal([]map[string]string{{"key": "module", "value": "provider"}, {"key": "consumer_id", "value": consumerID},
			{"key": "consumer_chain_id", "value": consumer}, {"key": "reward_denom", "value": denom}, {"key": "reward_amount", "value": amount}})
		mustExec(t, db, `INSERT INTO events (chain_id, height, tx_index, event_index, msg_index, mode, type, attributes)
			VALUES (?, ?, ?, ?, -1, '', ?, ?)`, hub.ID, tx.Height, tx.TxIndex, ev+3, kind, string(attrs))
	}
	if d := cosmos.VoucherDenom("transfer/channel-569/untrn"); d != ntrnOnHub {
		t.Fatalf("NTRN on the Hub: %s", d)
	}
	recv(ok[0], 0, "received_ics_rewards", "0", "neutron-1", "channel-569", "untrn", "2500000")
	recv(ok[1], 1, "update_consumer", "0", "neutron-1", "channel-569", "untrn", "1000000") // an interim release's event
	recv(ok[1], 2, "received_ics_rewards", "1", "stride-1", "channel-391", "ustrd", "7000000")
	recv(failed[0], 3, "received_ics_rewards", "0", "neutron-1", "channel-569", "untrn", "999000000") // a failed tx: no reward
	recv(ok[0], 4, "received_ics_rewards", "2", "elys-1", "channel-536", "uusdc", "3000000")
	// A second event about receipt 0 counts once; a consumer update
	// without reward attributes is no reward.
	for i, attrs := range []string{
		`[{"key":"module","value":"provider"},{"key":"consumer_id","value":"0"},{"key":"consumer_chain_id","value":"neutron-1"},` +
			`{"key":"reward_denom","value":"` + ntrnOnHub + `"},{"key":"reward_amount","value":"2500000"},{"key":"reward_distribution","value":"scheduled"}]`,
		`[{"key":"module","value":"provider"},{"key":"consumer_id","value":"0"},{"key":"consumer_chain_id","value":"neutron-1"},{"key":"consumer_phase","value":"CONSUMER_PHASE_LAUNCHED"}]`,
	} {
		mustExec(t, db, `INSERT INTO events (chain_id, height, tx_index, event_index, msg_index, mode, type, attributes)
			VALUES (?, ?, ?, ?, -1, '', 'update_consumer', ?)`, hub.ID, ok[0].Height, ok[0].TxIndex, 905+i, attrs)
	}

	apitest.RunJobs(t, db, &config.Config{Chains: []config.Chain{hub}})
	var stored int
	if err := db.NewRaw(`SELECT count(*) FROM ics_rewards WHERE chain_id = ? AND base_denom = (CASE consumer_chain_id
		WHEN 'neutron-1' THEN 'untrn' WHEN 'stride-1' THEN 'ustrd' WHEN 'elys-1' THEN 'uusdc' END)`, hub.ID).Scan(ctx, &stored); err != nil || stored != 4 {
		t.Fatalf("ics_rewards: %d rows with their consumers' base denoms (%v), want 4", stored, err)
	}

	// The dex chain received NTRN over channel-874 and STRD over
	// channel-326 and prices NTRN from 21:00 and STRD from later on.
	day := ok[0].Time.UTC().Truncate(24 * time.Hour)
	hour := ok[0].Time.UTC().Truncate(time.Hour)
	if !ok[1].Time.UTC().Truncate(time.Hour).Equal(hour) {
		t.Fatalf("the two txs are in different hours: %s, %s", ok[0].Time, ok[1].Time)
	}
	for i, r := range []struct{ channel, denom string }{{"channel-874", "untrn"}, {"channel-326", "ustrd"}, {"channel-874", "untrn"},
		{"channel-750", "uusdc"}, {"channel-208", "uusdc"}} {
		mustExec(t, db, `INSERT INTO ibc_packets (chain_id, height, tx_index, event_index, msg_index, kind, src_port, src_channel,
			dst_port, dst_channel, sequence, timeout_timestamp, denom, amount, sender, receiver, success)
			VALUES (?, 5, 0, ?, -1, 'recv', 'transfer', 'channel-9', 'transfer', ?, ?, 0, ?, '1', 'x', 'osmo1x', true)`,
			dexChain, i, r.channel, i, r.denom)
	}
	price := func(denom string, at time.Time, usd string) {
		mustExec(t, db, `INSERT INTO osmosis_asset_prices (chain_id, denom, hour, price_usd) VALUES (?, ?, ?, ?)`, dexChain, denom, at, usd)
	}
	price(ntrnOnOsmosis, hour.Add(-time.Hour), "0.5")
	price(ntrnOnOsmosis, hour, "0.4")
	price(ntrnOnOsmosis, hour.Add(time.Hour), "9") // after the receipts
	// USDC arrives over two channels, both priced.
	usdcNoble := cosmos.VoucherDenom("transfer/channel-750/uusdc")
	price(usdcNoble, hour, "1")
	price(cosmos.VoucherDenom("transfer/channel-208/uusdc"), hour, "1")
	dex := config.Chain{ID: dexChain, Kind: "osmosis", Bech32Prefix: "osmo", Assets: []config.Asset{
		{Denom: "factory/osmo147h5x9pcj7lm0cttlaefx6sqq5vdfnmwfcqxkmjd7exqm9gc7grqhr75m0/alloyed/allUSDC", Symbol: "USDC", Exponent: 6},
		{Denom: ntrnOnOsmosis, Symbol: "NTRN", Exponent: 6}, {Denom: strdOnOsmosis, Symbol: "STRD", Exponent: 6}}}
	match := func(dex config.Chain, wm int64) {
		t.Helper()
		if err := db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
			_, _, err := aggics.Job{Chain: hub, Dex: dex}.Run(ctx, tx, wm, aggregator.NoBound) // at the tip: matches the tokens priced since
			return err
		}); err != nil {
			t.Fatal(err)
		}
	}
	match(dex, localnet.Hub.LastHeight)

	cfg := &config.Config{Chains: []config.Chain{hub, dex}, Staking: config.Staking{ConsumerChannels: map[string]string{"channel-569": "neutron-1"}}}
	cfg.API = apitest.DefaultAPI(t, true)
	srv := apitest.Serve(t, db, cfg, day.Add(48*time.Hour))
	label := day.Format(time.DateTime)
	check := func(path, want string) {
		t.Helper()
		resp, body := srv.Get(t, path)
		if resp.StatusCode != 200 {
			t.Fatalf("%s: %d %s", path, resp.StatusCode, body)
		}
		_, doc := srv.Get(t, "/openapi.json")
		apitest.Validate(t, doc, "GET", path, resp, body)
		// The dex chain's prices job never ran here: only the Hub's height.
		if h := resp.Header.Get("X-Data-Height"); h != fmt.Sprint(localnet.Hub.LastHeight) {
			t.Errorf("%s: X-Data-Height %q", path, h)
		}
		if !sameJSON(t, body, want) {
			t.Errorf("%s:\n got %s\nwant %s", path, body, want)
		}
	}
	// NTRN: 2.5 + 1 at 0.4 USD; STRD has no price yet.
	all := "/aez/revenue_share_by_consumer?consumers=neutron-1,stride-1,elys-1,total"
	check(all, `[{"labels":"`+label+`","neutron-1":1.4,"stride-1":null,"elys-1":null,"total":null}]`)
	check("/aez/revenue_share_by_consumer", `[{"labels":"`+label+`","total":null}]`)

	// STRD gets a price, and the dex chain's assets name Noble's USDC: the
	// next run matches both.
	price(strdOnOsmosis, hour, "2")
	dex.Assets = append(dex.Assets, config.Asset{Denom: usdcNoble, Symbol: "USDC", Exponent: 6})
	match(dex, localnet.Hub.LastHeight)
	want := `[{"labels":"` + label + `","neutron-1":1.4,"stride-1":14,"elys-1":3,"total":18.4}]`
	check(all, want)
	match(dex, 0) // a rebuild gives the same
	check(all, want)
	check(all+"&start_date="+day.Format(time.DateOnly)+"T01:00:00Z", `[]`) // a day belongs to the range when its start is in it
	// A range after the last aggregated block is not indexed yet.
	if resp, body := srv.Get(t, "/aez/revenue_share_by_consumer?consumers=stride-1&start_date="+day.Add(24*time.Hour).Format(time.DateOnly)); resp.StatusCode != 503 {
		t.Errorf("a range after the tip: %d %s, want 503", resp.StatusCode, body)
	}
	resp, body := srv.Get(t, "/aez/revenue_share_by_consumer?consumers=cosmoshub-4")
	if resp.StatusCode != 400 || !bytes.Contains(body, []byte(`"name":"consumers"`)) {
		t.Errorf("unknown consumer: %d %s", resp.StatusCode, body)
	}
}

// sameJSON compares two JSON documents, numbers by their text.
func sameJSON(t *testing.T, got []byte, want string) bool {
	t.Helper()
	decode := func(b []byte) any {
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.UseNumber()
		var v any
		if err := dec.Decode(&v); err != nil {
			t.Fatalf("%s: %v", b, err)
		}
		return v
	}
	return reflect.DeepEqual(decode(got), decode([]byte(want)))
}

func mustExec(t *testing.T, db *bun.DB, query string, args ...any) {
	t.Helper()
	if _, err := db.NewRaw(query, args...).Exec(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// TestRewardsBeforeICSEvents: a provider before ICS v6.1 emitted no event
// about a reward; its receipt by the consumer rewards pool over a channel
// of staking.consumer_channels is the reward of that channel's consumer.
// A receipt by another account, or over a channel not configured, is none;
// a receipt with a reward event counts once (by its event).
func TestRewardsBeforeICSEvents(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, _ := testdb.New(t)
	hub := localnet.Hub.Index(t, db)
	var ok []struct {
		Height  int64 `bun:"height"`
		TxIndex int   `bun:"tx_index"`
	}
	if err := db.NewRaw(`SELECT height, tx_index FROM txs WHERE chain_id = ? AND code = 0 ORDER BY height, tx_index LIMIT 2`, hub.ID).Scan(ctx, &ok); err != nil || len(ok) < 2 {
		t.Fatalf("recording: %v %v", ok, err)
	}
	receipt := func(i, ev int, channel, receiver, amount string) {
		t.Helper()
		mustExec(t, db, `INSERT INTO ibc_packets (chain_id, height, tx_index, event_index, msg_index, kind, src_port, src_channel,
			dst_port, dst_channel, sequence, timeout_timestamp, denom, amount, sender, receiver, success)
			VALUES (?, ?, ?, ?, -1, 'recv', 'transfer', 'channel-1', 'transfer', ?, ?, 0, 'untrn', ?, 'neutron1consumer', ?, true)`,
			hub.ID, ok[i].Height, ok[i].TxIndex, ev, channel, ev, amount, receiver)
	}
	receipt(0, 900, "channel-569", rewardsAddress, "2000000") // a reward of neutron-1
	receipt(0, 910, "channel-569", "cosmos1someoneelse", "5") // not to the pool
	receipt(0, 920, "channel-999", rewardsAddress, "7")       // a channel not configured
	receipt(1, 900, "channel-569", rewardsAddress, "3000000") // with its event (ICS ≥ v6.1): counted by the event
	attrs, _ := json.Marshal([]map[string]string{{"key": "module", "value": "provider"}, {"key": "consumer_id", "value": "0"},
		{"key": "consumer_chain_id", "value": "neutron-1"}, {"key": "reward_denom", "value": ntrnOnHub}, {"key": "reward_amount", "value": "3000000"}})
	mustExec(t, db, `INSERT INTO events (chain_id, height, tx_index, event_index, msg_index, mode, type, attributes)
		VALUES (?, ?, ?, 903, -1, '', 'received_ics_rewards', ?)`, hub.ID, ok[1].Height, ok[1].TxIndex, string(attrs))

	for _, wm := range []int64{0, 0} { // a rebuild gives the same rows
		if err := db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
			if _, err := tx.ExecContext(ctx, "DELETE FROM ics_rewards"); err != nil {
				return err
			}
			_, _, err := aggics.Job{Chain: hub, ConsumerChannels: map[string]string{"channel-569": "neutron-1"}}.Run(ctx, tx, wm, aggregator.NoBound)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		var got []struct {
			ConsumerID string `bun:"consumer_id"`
			Consumer   string `bun:"consumer_chain_id"`
			Denom      string `bun:"denom"`
			Base       string `bun:"base_denom"`
			Amount     string `bun:"amount"`
		}
		if err := db.NewRaw(`SELECT consumer_id, consumer_chain_id, denom, base_denom, amount::text AS amount FROM ics_rewards
			ORDER BY height, tx_index, event_index`).Scan(ctx, &got); err != nil {
			t.Fatal(err)
		}
		want := `[{ neutron-1 ` + ntrnOnHub + ` untrn 2000000} {0 neutron-1 ` + ntrnOnHub + ` untrn 3000000}]`
		if fmt.Sprint(got) != want {
			t.Errorf("ics_rewards %v\nwant %s", got, want)
		}
	}
}
