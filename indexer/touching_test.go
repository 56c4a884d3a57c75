package indexer_test

import (
	"context"
	"strings"
	"testing"

	"github.com/cosmos/cosmos-sdk/types/bech32"

	"github.com/chainlens/chainlens/indexer"
	recorded "github.com/chainlens/chainlens/internal/localnet"
	"github.com/chainlens/chainlens/internal/testdb"
)

// The messages touching an account are found by its bytes, whatever the
// prefix it is written with: every message its key signed, plus those
// naming it (here: bank sends to it, dex deposits for it as receiver), and
// the lookup is an index scan.
func TestMessagesTouchingAnAccount(t *testing.T) {
	t.Parallel()
	db, _ := testdb.New(t)
	ctx := context.Background()
	cfg := recorded.Neutron.Index(t, db)
	const account = "neutron1fu29ajlqx4c3vjgkt5eypjgh4yn9ua4kmhpm4l"
	var signed, named int
	if err := db.NewRaw(`SELECT count(*) FROM messages m JOIN txs t USING (chain_id, height, tx_index) WHERE t.chain_id = ? AND ? = ANY(t.signers)`,
		cfg.ID, account).Scan(ctx, &signed); err != nil {
		t.Fatal(err)
	}
	// Messages it did not sign that name it in their body or events.
	if err := db.NewRaw(`SELECT count(*) FROM messages m JOIN txs t USING (chain_id, height, tx_index) WHERE t.chain_id = ? AND NOT ? = ANY(t.signers)
		AND (m.body::text LIKE '%' || ? || '%' OR EXISTS (SELECT 1 FROM events e WHERE e.chain_id = m.chain_id AND e.height = m.height
		AND e.tx_index = m.tx_index AND e.msg_index = m.msg_index AND e.attributes::text LIKE '%' || ? || '%'))`,
		cfg.ID, account, account, account).Scan(ctx, &named); err != nil {
		t.Fatal(err)
	}
	if signed == 0 || named == 0 {
		t.Fatalf("signed %d, named %d: the recording should have both", signed, named)
	}
	_, b, err := bech32.DecodeAndConvert(account)
	if err != nil {
		t.Fatal(err)
	}
	asCosmos, _ := bech32.ConvertAndEncode("cosmos", b)
	for _, addr := range []string{account, strings.ToUpper(account), asCosmos} {
		refs, err := indexer.MessagesTouching(ctx, db, cfg.ID, addr, 1000)
		if err != nil {
			t.Fatal(err)
		}
		if len(refs) != signed+named {
			t.Errorf("%s: %d messages, want %d signed + %d naming it", addr, len(refs), signed, named)
		}
		for i := 1; i < len(refs); i++ {
			if refs[i].Height > refs[i-1].Height {
				t.Fatalf("not newest first: %+v then %+v", refs[i-1], refs[i])
			}
		}
	}
	if refs, err := indexer.MessagesTouching(ctx, db, "", account, 3); err != nil || len(refs) != 3 || refs[0].TxHash == "" || refs[0].TypeURL == "" {
		t.Errorf("every chain, limit 3: %+v, %v", refs, err)
	}
	for _, bad := range []string{"", "neutron1xyz", "0x12", "cosmosvaloper"} {
		if _, err := indexer.MessagesTouching(ctx, db, cfg.ID, bad, 10); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	var plan []string
	if err := db.NewRaw(`EXPLAIN SELECT height FROM message_addresses WHERE address = ? AND chain_id = ? ORDER BY height DESC LIMIT 20`,
		b, cfg.ID).Scan(ctx, &plan); err != nil {
		t.Fatal(err)
	}
	if p := strings.Join(plan, "\n"); !strings.Contains(p, "message_addresses_") || !strings.Contains(p, "Index") || strings.Contains(p, "Seq Scan") {
		t.Errorf("not an index scan:\n%s", p)
	}
}
