package xion_test

import (
	"context"
	"testing"

	"github.com/chainlens/chainlens/chains"
	"github.com/chainlens/chainlens/chains/xion"
	"github.com/chainlens/chainlens/internal/localnet"
	"github.com/chainlens/chainlens/internal/testdb"
)

func TestParseAuthenticator(t *testing.T) {
	tests := []struct {
		in   string
		want xion.Authenticator
		err  bool
	}{
		{`{"Secp256K1":{"id":0,"pubkey":"AgTk2YYFes9UhFK+e39dog3nrRCMgsWvszIxA7aEkOu2","signature":"oc29"}}`,
			xion.Authenticator{0, "Secp256K1", "AgTk2YYFes9UhFK+e39dog3nrRCMgsWvszIxA7aEkOu2"}, false},
		{`{"EthWallet":{"id":2,"address":"0x327F97deab541345682b1963266d389caf92d640","signature":"x"}}`,
			xion.Authenticator{2, "EthWallet", "0x327f97deab541345682b1963266d389caf92d640"}, false},
		{`{"Jwt":{"id":0,"aud":"localxion-aud-A","sub":"user-A-1","token":"eyJ"}}`,
			xion.Authenticator{0, "JWT", "localxion-aud-A.user-A-1"}, false},
		{`{"Ed25519":{"id":1,"pubkey":"3N30m9lcivKdrMmlOQHvB0emxjrLw0r2BKhbgofHr14=","signature":"s"}}`,
			xion.Authenticator{1, "Ed25519", "3N30m9lcivKdrMmlOQHvB0emxjrLw0r2BKhbgofHr14="}, false},
		// The contract puts the registered passkey in place of the
		// credential; both are base64 (cosmwasm Binary), stored as they are.
		{`{"Passkey":{"id":3,"url":"https://xion.example","credential":"eyJpZCI6InBrIn0="}}`,
			xion.Authenticator{3, "Passkey", "eyJpZCI6InBrIn0="}, false},
		{`{"ZKEmail":{"id":4,"vkey":"dmtleQ==","email_hash":"sAcYdn1nulpzJIM0RMaX6Vn5GPPGXuHxM//AfW7b7yU=","email_domain":"gmail.com","proof":"cA=="}}`,
			xion.Authenticator{4, "ZKEmail", "sAcYdn1nulpzJIM0RMaX6Vn5GPPGXuHxM//AfW7b7yU="}, false},
		{`{"ZKEmail":{"id":5,"verification_contract":"xion1v","email_hash":"c2Vjb25k","dkim_domain":"gmail.com"}}`,
			xion.Authenticator{5, "ZKEmail", "c2Vjb25k"}, false},
		{`{"Future":{"id":6, "key": "k"}}`, xion.Authenticator{6, "Future", `{"id":6,"key":"k"}`}, false},
		{`{"Secp256K1":{"id":0}}`, xion.Authenticator{}, true},
		{`{"A":{},"B":{}}`, xion.Authenticator{}, true},
		{`not json`, xion.Authenticator{}, true},
	}
	for _, tt := range tests {
		got, err := xion.ParseAuthenticator(tt.in)
		if (err != nil) != tt.err || got != tt.want {
			t.Errorf("%s: %+v, %v; want %+v", tt.in, got, err, tt.want)
		}
	}
}

// TestRecordedLocalnet indexes the recorded XION localnet: the README's 5
// registered accounts, 11 authenticators added (5 at registration, 6
// add_auth_method) and 3 removed; the failed removal of id 7 is not there.
func TestRecordedLocalnet(t *testing.T) {
	db, _ := testdb.New(t)
	localnet.XION.Index(t, db)
	var n struct {
		Accounts int `bun:"accounts"`
		Adds     int `bun:"adds"`
		Removes  int `bun:"removes"`
		Seven    int `bun:"seven"`
	}
	if err := db.NewRaw(`SELECT (SELECT count(*) FROM xion_smart_accounts) AS accounts,
		(SELECT count(*) FROM xion_authenticator_changes WHERE action = 'add') AS adds,
		(SELECT count(*) FROM xion_authenticator_changes WHERE action = 'remove') AS removes,
		(SELECT count(*) FROM xion_authenticator_changes WHERE authenticator_id = 7) AS seven`).Scan(context.Background(), &n); err != nil {
		t.Fatal(err)
	}
	if n.Accounts != 5 || n.Adds != 11 || n.Removes != 3 || n.Seven != 0 {
		t.Errorf("got %+v", n)
	}
}

// TestForeignAuthEventsAreSkipped: any contract may emit
// wasm-add_auth_method about itself; one whose authenticator is not an
// account's is skipped and counted, the height is not failed.
func TestForeignAuthEventsAreSkipped(t *testing.T) {
	const c = "xion1foreigncontract"
	ev := chains.Event{Type: "wasm-add_auth_method", Attrs: []chains.Attr{
		{Key: "_contract_address", Value: c}, {Key: "contract_address", Value: c}, {Key: "authenticator", Value: "not json"}}}
	b := &chains.Block{ChainID: "xion-1", Height: 5, Txs: []chains.Tx{{Index: 0, Events: []chains.Event{ev}}}}
	out := chains.NewRows()
	if err := xion.NewAdapter("xion").Rows(b, out); err != nil {
		t.Fatalf("a foreign contract's event failed the height: %v", err)
	}
	if b.Stats.ForeignEvents != 1 {
		t.Errorf("%d foreign events, want 1", b.Stats.ForeignEvents)
	}
}
