// Package smartaccounts builds the report tables of the smart account
// group (XION) from the rows of the xion adapter (chains/xion) and the
// chain's authz and feegrant messages and fee payments: the registered
// accounts, their current authenticators, and the current grants.
package smartaccounts

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/chainlens/chainlens/aggregator"

	report "github.com/chainlens/chainlens/report/smartaccounts"

	"github.com/uptrace/bun"

	"github.com/chainlens/chainlens/config"
	"github.com/chainlens/chainlens/store"
)

// maxHeights bounds the heights one run reads.
const maxHeights = 50_000

// Tables are the job's report tables.
var Tables = []string{"sa_accounts", "sa_authenticators", "sa_authz_grants", "sa_feegrants"}

// Job brings the reports to the indexed tip, replaying in chain order:
//   - sa_accounts: every registered account;
//   - sa_authenticators: each add and remove of a registered account's
//     authenticators;
//   - sa_authz_grants: MsgGrant (replaces), MsgRevoke, and each MsgExec
//     message spending a send or stake authorization (used up = deleted);
//   - sa_feegrants: MsgGrantAllowance (replaces), MsgRevokeAllowance, and
//     each fee an allowance paid (use_feegrant, charged before the tx's
//     messages, also for txs that then failed).
//
// A watermark of 0 rebuilds from scratch. Limits: grants given through
// MsgExec, and MsgExec calls the chain's codec cannot decode (their inner
// messages are unknown), do not change the grants.
type Job struct {
	Chain config.Chain
}

// Name is the job name.
func (Job) Name() string { return report.Job }

// RawInputs: the authz and feegrant messages, and fee grants used.
func (j Job) RawInputs() aggregator.RawInputs {
	return aggregator.RawInputs{ChainID: j.Chain.ID, Events: []string{"use_feegrant"}, Messages: []string{
		"/cosmos.authz.v1beta1.MsgGrant", "/cosmos.authz.v1beta1.MsgRevoke", "/cosmos.authz.v1beta1.MsgExec",
		"/cosmos.feegrant.v1beta1.MsgGrantAllowance", "/cosmos.feegrant.v1beta1.MsgRevokeAllowance"}}
}

// Version is the version of the job's rows (see aggregator.Job).
func (Job) Version() string { return "1" }

// Tables are the tables the job writes: Tables, the chain's rows only.
func (j Job) Tables() aggregator.Tables { return aggregator.Tables{Owned: Tables, ChainID: j.Chain.ID} }

// Run advances the reports from wm.
func (j Job) Run(ctx context.Context, tx bun.Tx, wm, bound int64) (int64, int64, error) {
	id := j.Chain.ID
	wm, to, err := store.NextRange(ctx, tx, id, wm, maxHeights, Tables...)
	if err != nil {
		return 0, 0, err
	}
	if to <= wm {
		return wm, 0, nil
	}
	res, err := tx.NewRaw(`INSERT INTO sa_accounts (chain_id, account, code_id, account_number, creator, height)
		SELECT chain_id, account, code_id, account_number, creator, height FROM xion_smart_accounts
		WHERE chain_id = ? AND height > ? AND height <= ? ON CONFLICT DO NOTHING`, id, wm, to).Exec(ctx)
	if err != nil {
		return 0, 0, fmt.Errorf("sa_accounts: %w", err)
	}
	rows, _ := res.RowsAffected()
	n, err := authenticators(ctx, tx, id, wm, to)
	if err != nil {
		return 0, 0, err
	}
	rows += n
	if n, err = grants(ctx, tx, id, wm, to); err != nil {
		return 0, 0, err
	}
	return to, rows + n, nil
}

// authenticators applies the authenticator changes of registered accounts.
func authenticators(ctx context.Context, tx bun.Tx, chainID string, wm, to int64) (int64, error) {
	var changes []struct {
		Height  int64          `bun:"height"`
		Account string         `bun:"account"`
		Action  string         `bun:"action"`
		ID      int64          `bun:"authenticator_id"`
		Type    sql.NullString `bun:"auth_type"`
		Value   sql.NullString `bun:"authenticator"`
	}
	if err := tx.NewRaw(`SELECT c.height, c.account, c.action, c.authenticator_id, c.auth_type, c.authenticator
		FROM xion_authenticator_changes c JOIN sa_accounts a ON a.chain_id = c.chain_id AND a.account = c.account
		WHERE c.chain_id = ? AND c.height > ? AND c.height <= ? ORDER BY c.height, c.tx_index, c.event_index`, chainID, wm, to).
		Scan(ctx, &changes); err != nil {
		return 0, fmt.Errorf("authenticator changes: %w", err)
	}
	for _, c := range changes {
		var err error
		if c.Action == "remove" {
			_, err = tx.NewRaw("DELETE FROM sa_authenticators WHERE chain_id = ? AND account = ? AND authenticator_index = ?",
				chainID, c.Account, c.ID).Exec(ctx)
		} else {
			_, err = tx.NewRaw(`INSERT INTO sa_authenticators (chain_id, account, authenticator_index, auth_type, authenticator, height)
				VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (chain_id, account, authenticator_index) DO UPDATE SET
				auth_type = EXCLUDED.auth_type, authenticator = EXCLUDED.authenticator, height = EXCLUDED.height`,
				chainID, c.Account, c.ID, c.Type.String, c.Value.String, c.Height).Exec(ctx)
		}
		if err != nil {
			return 0, fmt.Errorf("authenticator of %s at %d: %w", c.Account, c.Height, err)
		}
	}
	return int64(len(changes)), nil
}

// op is one grant-changing step, in chain order.
type op struct {
	Height  int64           `bun:"height"`
	TxIndex int64           `bun:"tx_index"`
	Order   int64           `bun:"ord"` // -1: the tx's fee; else the message index
	Time    time.Time       `bun:"time"`
	TypeURL string          `bun:"type_url"`
	Body    json.RawMessage `bun:"body"`
	Granter string          `bun:"granter"` // fee payments
	Grantee string          `bun:"grantee"`
	Fee     json.RawMessage `bun:"fee"`
}

const opsSQL = `SELECT m.height, m.tx_index, m.msg_index AS ord, b.time, m.type_url, m.body, '' AS granter, '' AS grantee, NULL::jsonb AS fee
	FROM messages m
	JOIN txs t ON t.chain_id = m.chain_id AND t.height = m.height AND t.tx_index = m.tx_index AND t.code = 0
	JOIN blocks b ON b.chain_id = m.chain_id AND b.height = m.height
	WHERE m.chain_id = ?0 AND m.height > ?1 AND m.height <= ?2 AND m.body IS NOT NULL AND m.type_url IN (
		'/cosmos.authz.v1beta1.MsgGrant', '/cosmos.authz.v1beta1.MsgRevoke', '/cosmos.authz.v1beta1.MsgExec',
		'/cosmos.feegrant.v1beta1.MsgGrantAllowance', '/cosmos.feegrant.v1beta1.MsgRevokeAllowance')
	UNION ALL
	SELECT e.height, e.tx_index, -1, b.time, 'fee', NULL,
		(SELECT a->>'value' FROM jsonb_array_elements(e.attributes) a WHERE a->>'key' = 'granter' LIMIT 1),
		(SELECT a->>'value' FROM jsonb_array_elements(e.attributes) a WHERE a->>'key' = 'grantee' LIMIT 1),
		t.fee
	FROM events e
	JOIN txs t ON t.chain_id = e.chain_id AND t.height = e.height AND t.tx_index = e.tx_index
	JOIN blocks b ON b.chain_id = e.chain_id AND b.height = e.height
	WHERE e.chain_id = ?0 AND e.height > ?1 AND e.height <= ?2 AND e.type = 'use_feegrant'
	ORDER BY 1, 2, 3`

// grants replays the authz and feegrant steps of (wm, to].
func grants(ctx context.Context, tx bun.Tx, chainID string, wm, to int64) (int64, error) {
	var ops []op
	if err := tx.NewRaw(opsSQL, chainID, wm, to).Scan(ctx, &ops); err != nil {
		return 0, fmt.Errorf("grant messages: %w", err)
	}
	for _, o := range ops {
		if err := apply(ctx, tx, chainID, o); err != nil {
			return 0, fmt.Errorf("height %d tx %d (%s): %w", o.Height, o.TxIndex, o.TypeURL, err)
		}
	}
	return int64(len(ops)), nil
}

func apply(ctx context.Context, tx bun.Tx, chainID string, o op) error {
	var m object
	if o.Body != nil {
		if err := json.Unmarshal(o.Body, &m); err != nil {
			return err
		}
	}
	switch o.TypeURL {
	case "/cosmos.authz.v1beta1.MsgGrant":
		g, err := m.obj("grant")
		if err != nil {
			return err
		}
		typeURL, err := MsgTypeURL(g["authorization"])
		if err != nil {
			return err
		}
		var exp *time.Time
		if s := g.str("expiration"); s != "" {
			t, err := time.Parse(time.RFC3339Nano, s)
			if err != nil {
				return fmt.Errorf("expiration %q: %w", s, err)
			}
			exp = &t
		}
		_, err = tx.NewRaw(`INSERT INTO sa_authz_grants (chain_id, granter, grantee, msg_type_url, auth, expiration, height)
			VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (chain_id, granter, grantee, msg_type_url) DO UPDATE SET
			auth = EXCLUDED.auth, expiration = EXCLUDED.expiration, height = EXCLUDED.height`,
			chainID, m.str("granter"), m.str("grantee"), typeURL, string(g["authorization"]), exp, o.Height).Exec(ctx)
		return err
	case "/cosmos.authz.v1beta1.MsgRevoke":
		_, err := tx.NewRaw("DELETE FROM sa_authz_grants WHERE chain_id = ? AND granter = ? AND grantee = ? AND msg_type_url = ?",
			chainID, m.str("granter"), m.str("grantee"), m.str("msg_type_url")).Exec(ctx)
		return err
	case "/cosmos.authz.v1beta1.MsgExec":
		var msgs []json.RawMessage
		if err := json.Unmarshal(m["msgs"], &msgs); err != nil {
			return fmt.Errorf("msgs: %w", err)
		}
		grantee := m.str("grantee")
		for _, inner := range msgs {
			typeURL, granter, amount, err := Signer(inner)
			if err != nil {
				return err
			}
			if granter == "" || granter == grantee || amount == nil {
				continue // no grant used, or one that does not change
			}
			var auth string
			err = tx.NewRaw(`SELECT auth::text FROM sa_authz_grants WHERE chain_id = ? AND granter = ? AND grantee = ? AND msg_type_url = ?`,
				chainID, granter, grantee, typeURL).Scan(ctx, &auth)
			if errors.Is(err, sql.ErrNoRows) {
				continue // granted before the indexed range, or through MsgExec
			}
			if err != nil {
				return err
			}
			next, deleted, err := Spend(json.RawMessage(auth), amount)
			if errors.Is(err, errOverspent) {
				continue
			}
			if err != nil {
				return err
			}
			if deleted {
				_, err = tx.NewRaw("DELETE FROM sa_authz_grants WHERE chain_id = ? AND granter = ? AND grantee = ? AND msg_type_url = ?",
					chainID, granter, grantee, typeURL).Exec(ctx)
			} else {
				_, err = tx.NewRaw(`UPDATE sa_authz_grants SET auth = ?, height = ? WHERE chain_id = ? AND granter = ? AND grantee = ? AND msg_type_url = ?`,
					string(next), o.Height, chainID, granter, grantee, typeURL).Exec(ctx)
			}
			if err != nil {
				return err
			}
		}
		return nil
	case "/cosmos.feegrant.v1beta1.MsgGrantAllowance":
		exp, err := AllowanceExpiration(m["allowance"])
		if err != nil {
			return err
		}
		_, err = tx.NewRaw(`INSERT INTO sa_feegrants (chain_id, granter, grantee, allowance, expiration, height)
			VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (chain_id, granter, grantee) DO UPDATE SET
			allowance = EXCLUDED.allowance, expiration = EXCLUDED.expiration, height = EXCLUDED.height`,
			chainID, m.str("granter"), m.str("grantee"), string(m["allowance"]), exp, o.Height).Exec(ctx)
		return err
	case "/cosmos.feegrant.v1beta1.MsgRevokeAllowance":
		_, err := tx.NewRaw("DELETE FROM sa_feegrants WHERE chain_id = ? AND granter = ? AND grantee = ?",
			chainID, m.str("granter"), m.str("grantee")).Exec(ctx)
		return err
	case "fee":
		fee, err := parseCoins(o.Fee)
		if err != nil {
			return fmt.Errorf("fee: %w", err)
		}
		var allowance string
		err = tx.NewRaw("SELECT allowance::text FROM sa_feegrants WHERE chain_id = ? AND granter = ? AND grantee = ?",
			chainID, o.Granter, o.Grantee).Scan(ctx, &allowance)
		if errors.Is(err, sql.ErrNoRows) {
			return nil // granted before the indexed range
		}
		if err != nil {
			return err
		}
		next, deleted, err := PayFee(json.RawMessage(allowance), fee, o.Time)
		if errors.Is(err, errOverspent) {
			return nil
		}
		if err != nil {
			return err
		}
		if deleted {
			_, err = tx.NewRaw("DELETE FROM sa_feegrants WHERE chain_id = ? AND granter = ? AND grantee = ?",
				chainID, o.Granter, o.Grantee).Exec(ctx)
		} else {
			_, err = tx.NewRaw("UPDATE sa_feegrants SET allowance = ?, height = ? WHERE chain_id = ? AND granter = ? AND grantee = ?",
				string(next), o.Height, chainID, o.Granter, o.Grantee).Exec(ctx)
		}
		return err
	}
	return nil
}
