// Package smartaccounts serves the smart account group (XION) from the
// report tables of the smart_accounts job (aggregator/smartaccounts),
// which reads the xion adapter's rows (chains/xion) and the chain's authz
// and feegrant messages.
package smartaccounts

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	report "github.com/chainlens/chainlens/report/smartaccounts"

	"github.com/cosmos/cosmos-sdk/types/bech32"
	"github.com/ethereum/go-ethereum/common"
	"github.com/uptrace/bun"

	"github.com/chainlens/chainlens/api"
	"github.com/chainlens/chainlens/api/problem"
	"github.com/chainlens/chainlens/api/route"
	"github.com/chainlens/chainlens/config"
)

// Operation ids served here.
const (
	notFoundAccount   = "smart account %s is not known"
	notFoundAuthority = "no smart account uses authenticator %q"
)

// Service answers the smart account endpoints.
type Service struct {
	db      *bun.DB
	chainID string
	prefix  string
	ok      bool
}

// New returns the service of the first configured chain of kind xion;
// without one every endpoint answers 503.
func New(cfg *config.Config, db *bun.DB) *Service {
	ch, ok := report.Chain(cfg)
	return &Service{db: db, chainID: ch.ID, prefix: ch.Bech32Prefix, ok: ok}
}

// Handlers binds the operations to the service.
func (s *Service) Handlers() map[route.ID]api.Handler {
	return map[route.ID]api.Handler{
		route.SmartAccountAuthenticators: s.authenticators,
		route.SmartAccountAccountsByAuth: s.accountsByAuthenticator,
		route.SmartAccountDetailsByAuth:  s.detailsByAuthenticator,
		route.SmartAccountPermissions:    s.permissions,
	}
}

// state is what the job has aggregated: its last block.
type state struct {
	time  time.Time
	fresh api.Freshness
}

func (s *Service) begin(ctx context.Context) (state, error) {
	if !s.ok {
		return state{}, api.NoChainOfKind("xion")
	}
	h, err := api.JobHeight(ctx, api.Reader(ctx, s.db), s.chainID, report.Job)
	if err != nil {
		return state{}, err
	}
	return state{time: h.Time, fresh: api.Freshness{Chains: []api.ChainHeight{h}}}, nil
}

// checkAddress answers 400 for a path value that is not an address of the chain.
func (s *Service) checkAddress(name, v string) error {
	hrp, _, err := bech32.DecodeAndConvert(v)
	if err != nil {
		return problem.BadParam(name, "is not a bech32 address")
	}
	if hrp != s.prefix {
		return problem.BadParam(name, "is not an address of chain "+s.chainID+" (prefix "+s.prefix+")")
	}
	return nil
}

type authenticator struct {
	Type  string `json:"type"`
	Value string `json:"authenticator"`
	Index int64  `json:"authenticator_index"`
}

type record struct {
	Account        string          `json:"smart_account"`
	CodeID         *int64          `json:"code_id"`
	AccountNumber  *string         `json:"account_number"`
	Authenticators []authenticator `json:"authenticators"`
}

// records loads the records of the given accounts, in their order.
func (s *Service) records(ctx context.Context, accounts []string) ([]record, error) {
	var rows []struct {
		Account string         `bun:"account"`
		CodeID  int64          `bun:"code_id"`
		Number  sql.NullString `bun:"account_number"`
		Index   sql.NullInt64  `bun:"authenticator_index"`
		Type    sql.NullString `bun:"auth_type"`
		Value   sql.NullString `bun:"authenticator"`
	}
	if err := api.Reader(ctx, s.db).NewRaw(`SELECT a.account, a.code_id, a.account_number, x.authenticator_index, x.auth_type, x.authenticator
		FROM sa_accounts a LEFT JOIN sa_authenticators x ON x.chain_id = a.chain_id AND x.account = a.account
		WHERE a.chain_id = ? AND a.account IN (?) ORDER BY a.account, x.authenticator_index`, s.chainID, bun.List(accounts)).Scan(ctx, &rows); err != nil {
		return nil, fmt.Errorf("smart accounts: %w", err)
	}
	byAccount := map[string]*record{}
	for _, r := range rows {
		rec := byAccount[r.Account]
		if rec == nil {
			code := r.CodeID
			rec = &record{Account: r.Account, CodeID: &code, Authenticators: []authenticator{}}
			if r.Number.Valid {
				n := r.Number.String
				rec.AccountNumber = &n
			}
			byAccount[r.Account] = rec
		}
		if r.Index.Valid {
			rec.Authenticators = append(rec.Authenticators, authenticator{r.Type.String, r.Value.String, r.Index.Int64})
		}
	}
	out := make([]record, 0, len(accounts))
	for _, a := range accounts {
		if rec := byAccount[a]; rec != nil {
			out = append(out, *rec)
		}
	}
	return out, nil
}

// authenticators is one account's record; auth_id keeps one authenticator.
func (s *Service) authenticators(ctx context.Context, req *api.Request) (*api.Response, error) {
	account := req.Params.String("smart_account")
	if err := s.checkAddress("smart_account", account); err != nil {
		return nil, err
	}
	var id int64 = -1
	if v := req.Params.String("auth_id"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 {
			return nil, problem.BadParam("auth_id", "must be an authenticator index (0 or more)")
		}
		id = n
	}
	st, err := s.begin(ctx)
	if err != nil {
		return nil, err
	}
	recs, err := s.records(ctx, []string{account})
	if err != nil {
		return nil, err
	}
	if len(recs) == 0 {
		return nil, problem.Status(http.StatusNotFound, notFoundAccount, account)
	}
	rec := recs[0]
	if id >= 0 {
		kept := []authenticator{}
		for _, a := range rec.Authenticators {
			if a.Index == id {
				kept = append(kept, a)
			}
		}
		rec.Authenticators = kept
	}
	return &api.Response{Body: rec, Freshness: st.fresh}, nil
}

// accountsUsing lists the accounts with the authenticator, by account. A
// wallet address (EthWallet) is stored lower-cased: its checksummed form
// names it too.
func (s *Service) accountsUsing(ctx context.Context, value string) ([]string, error) {
	if common.IsHexAddress(value) {
		value = strings.ToLower(value)
	}
	var accounts []string
	if err := api.Reader(ctx, s.db).NewRaw(`SELECT DISTINCT account FROM sa_authenticators WHERE chain_id = ? AND authenticator = ? ORDER BY account`,
		s.chainID, value).Scan(ctx, &accounts); err != nil {
		return nil, fmt.Errorf("accounts by authenticator: %w", err)
	}
	return accounts, nil
}

func (s *Service) byAuthenticator(ctx context.Context, req *api.Request) (string, []record, state, error) {
	value := req.Params.String("authenticator")
	st, err := s.begin(ctx)
	if err != nil {
		return "", nil, st, err
	}
	accounts, err := s.accountsUsing(ctx, value)
	if err != nil {
		return "", nil, st, err
	}
	if len(accounts) == 0 {
		return "", nil, st, problem.Status(http.StatusNotFound, notFoundAuthority, value)
	}
	recs, err := s.records(ctx, accounts)
	return value, recs, st, err
}

func (s *Service) accountsByAuthenticator(ctx context.Context, req *api.Request) (*api.Response, error) {
	value, recs, st, err := s.byAuthenticator(ctx, req)
	if err != nil {
		return nil, err
	}
	type account struct {
		Account       string  `json:"smart_account"`
		CodeID        *int64  `json:"code_id"`
		AccountNumber *string `json:"account_number"`
	}
	out := struct {
		Authenticator string    `json:"authenticator"`
		Accounts      []account `json:"smart_accounts"`
	}{Authenticator: value, Accounts: []account{}}
	for _, r := range recs {
		out.Accounts = append(out.Accounts, account{r.Account, r.CodeID, r.AccountNumber})
	}
	return &api.Response{Body: out, Freshness: st.fresh}, nil
}

func (s *Service) detailsByAuthenticator(ctx context.Context, req *api.Request) (*api.Response, error) {
	_, recs, st, err := s.byAuthenticator(ctx, req)
	if err != nil {
		return nil, err
	}
	return &api.Response{Body: recs, Freshness: st.fresh}, nil
}

// typed is an Any as the API shows it: its type URL and the message in
// proto3 JSON without the @type member.
type typed struct {
	TypeURL *string        `json:"type_url"`
	Value   map[string]any `json:"value,omitempty"`
}

// typedOf splits a stored Any into its type URL and message; numbers keep
// every digit (json.Number, not float64).
func typedOf(raw string) (typed, error) {
	var m map[string]any
	dec := json.NewDecoder(strings.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&m); err != nil {
		return typed{}, err
	}
	t, _ := m["@type"].(string)
	delete(m, "@type")
	return typed{TypeURL: &t, Value: m}, nil
}

// permissions lists the active grants and allowances where the address
// has the role: not expired at the last aggregated block.
func (s *Service) permissions(ctx context.Context, req *api.Request) (*api.Response, error) {
	address := req.Params.String("address")
	if err := s.checkAddress("address", address); err != nil {
		return nil, err
	}
	role := req.Params.String("role")
	st, err := s.begin(ctx)
	if err != nil {
		return nil, err
	}
	column := map[string]string{"granter": "granter", "grantee": "grantee"}[role]
	var authz []struct {
		Granter string     `bun:"granter"`
		Grantee string     `bun:"grantee"`
		Auth    string     `bun:"auth"`
		Exp     *time.Time `bun:"expiration"`
	}
	if err := api.Reader(ctx, s.db).NewRaw(`SELECT granter, grantee, auth::text AS auth, expiration FROM sa_authz_grants
		WHERE chain_id = ? AND `+column+` = ? AND (expiration IS NULL OR expiration > ?) ORDER BY granter, grantee, msg_type_url`,
		s.chainID, address, st.time).Scan(ctx, &authz); err != nil {
		return nil, fmt.Errorf("authz grants: %w", err)
	}
	var fees []struct {
		Granter   string `bun:"granter"`
		Grantee   string `bun:"grantee"`
		Allowance string `bun:"allowance"`
	}
	if err := api.Reader(ctx, s.db).NewRaw(`SELECT granter, grantee, allowance::text AS allowance FROM sa_feegrants
		WHERE chain_id = ? AND `+column+` = ? AND (expiration IS NULL OR expiration > ?) ORDER BY granter, grantee`,
		s.chainID, address, st.time).Scan(ctx, &fees); err != nil {
		return nil, fmt.Errorf("fee grants: %w", err)
	}
	type grant struct {
		Granter       string  `json:"granter"`
		Grantee       string  `json:"grantee"`
		Authorization typed   `json:"authorization"`
		Expiration    *string `json:"expiration"`
	}
	type feegrant struct {
		Granter   string `json:"granter"`
		Grantee   string `json:"grantee"`
		Allowance typed  `json:"allowance"`
	}
	out := struct {
		Authz     []grant    `json:"authz"`
		Feegrants []feegrant `json:"feegrants"`
	}{[]grant{}, []feegrant{}}
	for _, g := range authz {
		a, err := typedOf(g.Auth)
		if err != nil {
			return nil, fmt.Errorf("authorization of %s → %s: %w", g.Granter, g.Grantee, err)
		}
		var exp *string
		if g.Exp != nil {
			e := g.Exp.UTC().Format(time.RFC3339)
			exp = &e
		}
		out.Authz = append(out.Authz, grant{g.Granter, g.Grantee, a, exp})
	}
	for _, f := range fees {
		a, err := typedOf(f.Allowance)
		if err != nil {
			return nil, fmt.Errorf("allowance of %s → %s: %w", f.Granter, f.Grantee, err)
		}
		out.Feegrants = append(out.Feegrants, feegrant{f.Granter, f.Grantee, a})
	}
	return &api.Response{Body: out, Freshness: st.fresh}, nil
}
