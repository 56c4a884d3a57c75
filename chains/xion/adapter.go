// Package xion is the XION chain kind: the generic cosmos adapter plus the
// abstract (smart) accounts of x/abstractaccount and the authenticator
// changes their account contracts emit (chain-events.md §10).
package xion

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/chainlens/chainlens/chains"
	"github.com/chainlens/chainlens/chains/cosmos"
)

// Kind is the config kind this adapter serves.
const Kind = "xion"

// Adapter is the XION adapter.
type Adapter struct {
	*cosmos.Adapter
}

var _ chains.Adapter = (*Adapter)(nil)

// NewAdapter returns the XION adapter for the bech32 prefix (xion).
func NewAdapter(bech32Prefix string) *Adapter {
	return &Adapter{Adapter: cosmos.NewAdapter(Kind, bech32Prefix, "xion")}
}

var (
	accountsTable = chains.Table{Name: "xion_smart_accounts", Columns: []string{
		"chain_id", "height", "tx_index", "event_index", "account", "code_id", "account_number", "creator"}}
	authTable = chains.Table{Name: "xion_authenticator_changes", Columns: []string{
		"chain_id", "height", "tx_index", "event_index", "account", "action", "authenticator_id", "auth_type", "authenticator"}}
)

// Tables lists the generic tables and the smart account ones.
func (a *Adapter) Tables() []chains.Table {
	return append(a.Adapter.Tables(), accountsTable, authTable)
}

// Rows appends the generic rows, then, for every successful tx, each
// registered account (abstractaccount.v1.EventAccountRegistered) and each
// authenticator an account contract added (wasm-create_abstract_account,
// wasm-add_auth_method) or removed (wasm-remove_auth_method). Only events
// a contract emitted about itself count (contract_address equals the
// emitting _contract_address); the report job keeps those of registered
// accounts.
func (a *Adapter) Rows(b *chains.Block, out *chains.Rows) error {
	if err := a.Adapter.Rows(b, out); err != nil {
		return err
	}
	for t := range b.Txs {
		tx := &b.Txs[t]
		if !tx.Succeeded() {
			continue
		}
		for i := range tx.Events {
			ev := &tx.Events[i]
			var err error
			switch ev.Type {
			case "abstractaccount.v1.EventAccountRegistered":
				err = accountRow(b, ev, out)
			case "wasm-create_abstract_account", "wasm-add_auth_method", "wasm-remove_auth_method":
				// Any contract may emit these names about itself: one that
				// is not an account's is skipped (counted), not a failed height.
				if authRow(b, ev, out) != nil {
					b.Stats.ForeignEvents++
				}
			}
			if err != nil {
				return fmt.Errorf("height %d tx %d event %d (%s): %w", b.Height, ev.TxIndex, ev.Index, ev.Type, err)
			}
		}
	}
	return nil
}

// typed reads an attribute of a typed event (values are JSON).
func typed(ev *chains.Event, key string) (string, error) {
	v, ok := ev.Get(key)
	if !ok {
		return "", fmt.Errorf("no %s", key)
	}
	var s string
	if err := json.Unmarshal([]byte(v), &s); err != nil {
		return "", fmt.Errorf("%s %q: %w", key, v, err)
	}
	return s, nil
}

func accountRow(b *chains.Block, ev *chains.Event, out *chains.Rows) error {
	account, err := typed(ev, "contract_addr")
	if err != nil {
		return err
	}
	creator, err := typed(ev, "creator")
	if err != nil {
		return err
	}
	code, err := typed(ev, "code_id")
	if err != nil {
		return err
	}
	codeID, err := strconv.ParseInt(code, 10, 64)
	if err != nil {
		return fmt.Errorf("code_id %q: %w", code, err)
	}
	var number any // absent in older versions of the module
	if _, ok := ev.Get("account_number"); ok {
		n, err := typed(ev, "account_number")
		if err != nil {
			return err
		}
		number = n
	}
	out.Add(accountsTable.Name, b.ChainID, b.Height, ev.TxIndex, ev.Index, account, codeID, number, creator)
	return nil
}

func authRow(b *chains.Block, ev *chains.Event, out *chains.Rows) error {
	emitter, _ := ev.Get("_contract_address")
	account, _ := ev.Get("contract_address")
	if account == "" || account != emitter {
		return nil // not about the emitting contract itself
	}
	if ev.Type == "wasm-remove_auth_method" {
		id, err := strconv.ParseInt(attr(ev, "authenticator_id"), 10, 64)
		if err != nil {
			return fmt.Errorf("authenticator_id: %w", err)
		}
		out.Add(authTable.Name, b.ChainID, b.Height, ev.TxIndex, ev.Index, account, "remove", id, nil, nil)
		return nil
	}
	a, err := ParseAuthenticator(attr(ev, "authenticator"))
	if err != nil {
		return err
	}
	if s := attr(ev, "authenticator_id"); s != "" { // wasm-create_abstract_account
		if a.ID, err = strconv.ParseInt(s, 10, 64); err != nil {
			return fmt.Errorf("authenticator_id: %w", err)
		}
	}
	out.Add(authTable.Name, b.ChainID, b.Height, ev.TxIndex, ev.Index, account, "add", a.ID, a.Type, a.Value)
	return nil
}

func attr(ev *chains.Event, key string) string { v, _ := ev.Get(key); return v }

// Authenticator is one authenticator of an account contract.
type Authenticator struct {
	ID    int64
	Type  string // as the API names it: Secp256K1, Ed25519, EthWallet, JWT, Passkey, Secp256R1, ...
	Value string // the identity: a public key (base64), an Ethereum address, "aud.sub" of a JWT, a passkey
}

// ParseAuthenticator reads the contract's AddAuthenticator JSON, serde
// externally tagged: {"Secp256K1": {"id": 0, "pubkey": "…", "signature": "…"}}.
// Binary fields are base64 in this JSON, as the contract stores them; a
// Passkey's credential is replaced by the registered passkey before the
// event is emitted, and a ZKEmail account is known by its email hash (the
// commitment to the address). A variant this parser does not know keeps
// its whole JSON as the identity.
func ParseAuthenticator(s string) (Authenticator, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal([]byte(s), &m); err != nil || len(m) != 1 {
		return Authenticator{}, fmt.Errorf("authenticator %.100q: not one tagged variant", s)
	}
	for variant, raw := range m {
		var v struct {
			ID         *int64 `json:"id"`
			Pubkey     string `json:"pubkey"`
			Address    string `json:"address"`
			Aud        string `json:"aud"`
			Sub        string `json:"sub"`
			Credential string `json:"credential"`
			Passkey    string `json:"passkey"`
			EmailHash  string `json:"email_hash"`
		}
		if err := json.Unmarshal(raw, &v); err != nil {
			return Authenticator{}, fmt.Errorf("authenticator %.100q: %w", s, err)
		}
		a := Authenticator{Type: variant}
		if v.ID != nil {
			a.ID = *v.ID
		}
		switch variant {
		case "Secp256K1", "Ed25519", "Secp256R1", "Sr25519":
			a.Value = v.Pubkey
		case "EthWallet":
			a.Value = strings.ToLower(v.Address)
		case "Jwt", "JWT":
			a.Type, a.Value = "JWT", v.Aud+"."+v.Sub
		case "Passkey":
			a.Value = cmp.Or(v.Passkey, v.Credential)
		case "ZKEmail":
			a.Value = v.EmailHash
		default:
			var compact bytes.Buffer
			if err := json.Compact(&compact, raw); err != nil {
				return Authenticator{}, fmt.Errorf("authenticator %.100q: %w", s, err)
			}
			a.Value = compact.String()
		}
		if a.Value == "" || a.Value == "." {
			return Authenticator{}, fmt.Errorf("authenticator %.100q: no identity", s)
		}
		return a, nil
	}
	return Authenticator{}, nil
}
