package indexer_test

import (
	"context"
	"log/slog"
	"testing"

	"github.com/chainlens/chainlens/chains/cosmos"
	"github.com/chainlens/chainlens/chains/xion"
	"github.com/chainlens/chainlens/indexer"
	recorded "github.com/chainlens/chainlens/internal/localnet"
	"github.com/chainlens/chainlens/internal/replaytest"
	"github.com/chainlens/chainlens/internal/testdb"
	"github.com/uptrace/bun"
)

// A chain indexed by an older build whose descriptors lacked its own
// modules (here: the XION recording with the common set only) keeps those
// messages raw; --redecode fills their bodies from the stored bytes with
// today's descriptors, exactly as decoding them afresh does, without a
// node, and a second run finds nothing left.
func TestRedecodeFillsMessagesKeptRaw(t *testing.T) {
	t.Parallel()
	db, _ := testdb.New(t)
	ctx := context.Background()
	rec := recorded.XION
	cfg := replaytest.Index(t, db, rec.Dir(), rec.Chain(), cosmos.NewAdapter(rec.Kind, rec.Prefix), rec.LastHeight)

	before, err := indexer.MessageCoverage(ctx, db, cfg.ID)
	if err != nil {
		t.Fatal(err)
	}
	// 7 MsgRegisterAccount (abstract-account) and 2 x/jwk messages.
	want := map[string]int64{"/abstractaccount.v1.MsgRegisterAccount": 7, "/xion.jwk.v1.MsgCreateAudience": 1, "/xion.jwk.v1.MsgCreateAudienceClaim": 1}
	got := map[string]int64{}
	for _, tc := range before.KeptRaw {
		got[tc.TypeURL] = tc.Undecoded
		if tc.Partial != 0 {
			t.Errorf("%s: %d partial", tc.TypeURL, tc.Partial)
		}
	}
	if len(got) != len(want) || before.Undecoded != 9 || before.Messages != 84 {
		t.Fatalf("kept raw %v of %d (undecoded %d), want %v of 84", got, before.Messages, before.Undecoded, want)
	}
	for k, n := range want {
		if got[k] != n {
			t.Errorf("%s: %d kept raw, want %d", k, got[k], n)
		}
	}
	var raw []struct {
		Height  int64  `bun:"height"`
		TxIndex int    `bun:"tx_index"`
		Msg     int    `bun:"msg_index"`
		TypeURL string `bun:"type_url"`
		Raw     []byte `bun:"raw"`
	}
	if err := db.NewRaw("SELECT height, tx_index, msg_index, type_url, raw FROM messages WHERE chain_id = ? AND raw IS NOT NULL ORDER BY 1, 2, 3", cfg.ID).Scan(ctx, &raw); err != nil {
		t.Fatal(err)
	}

	// An older build stored no address rows for the messages it kept raw.
	if _, err := db.ExecContext(ctx, `DELETE FROM message_addresses a USING messages m WHERE m.chain_id = a.chain_id AND m.height = a.height
		AND m.tx_index = a.tx_index AND m.msg_index = a.msg_index AND m.chain_id = ? AND m.raw IS NOT NULL`, cfg.ID); err != nil {
		t.Fatal(err)
	}
	addrBefore := addressRows(t, db, cfg.ID)
	ad := xion.NewAdapter(rec.Prefix)
	res, err := indexer.Redecode(ctx, db, cfg.ID, ad, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	if res.Decoded != 9 || res.Completed != 0 || len(res.StillRaw) != 0 {
		t.Fatalf("redecode: %+v", res)
	}
	for _, r := range raw {
		fresh, complete, err := ad.MessageDecoderAt(r.Height).Decode(r.TypeURL, r.Raw)
		if err != nil || !complete {
			t.Fatalf("%s: %v (complete %v)", r.TypeURL, err, complete)
		}
		var same, rawGone bool
		if err := db.NewRaw("SELECT body = ?::jsonb, raw IS NULL FROM messages WHERE chain_id = ? AND height = ? AND tx_index = ? AND msg_index = ?",
			string(fresh), cfg.ID, r.Height, r.TxIndex, r.Msg).Scan(ctx, &same, &rawGone); err != nil {
			t.Fatal(err)
		}
		if !same || !rawGone {
			t.Errorf("height %d %s: body equal to a fresh decode %v, bytes dropped %v", r.Height, r.TypeURL, same, rawGone)
		}
	}
	after, err := indexer.MessageCoverage(ctx, db, cfg.ID)
	if err != nil {
		t.Fatal(err)
	}
	if after.Messages != 84 || after.Undecoded != 0 || after.Partial != 0 || len(after.KeptRaw) != 0 || after.Decoded() != 1 {
		t.Errorf("after: %+v", after)
	}
	addrAfterFirst := addressRows(t, db, cfg.ID)
	again, err := indexer.Redecode(ctx, db, cfg.ID, xion.NewAdapter(rec.Prefix), slog.New(slog.DiscardHandler))
	if err != nil || again.Decoded != 0 || again.Completed != 0 {
		t.Errorf("second run: %+v, %v", again, err)
	}
	// The redecoded bodies' addresses are stored, once.
	if addrAfter, addrAgain := addrAfterFirst, addressRows(t, db, cfg.ID); addrAfter <= addrBefore || addrAgain != addrAfter {
		t.Errorf("address rows %d before, %d after, %d after a second run", addrBefore, addrAfter, addrAgain)
	}
}

func addressRows(t *testing.T, db *bun.DB, chainID string) int64 {
	t.Helper()
	var n int64
	if err := db.NewRaw(`SELECT count(*) FROM message_addresses WHERE chain_id = ?`, chainID).Scan(context.Background(), &n); err != nil {
		t.Fatal(err)
	}
	return n
}
