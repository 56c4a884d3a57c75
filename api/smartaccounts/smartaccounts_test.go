package smartaccounts_test

import (
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"

	"github.com/chainlens/chainlens/config"
	"github.com/chainlens/chainlens/internal/apitest"
	"github.com/chainlens/chainlens/internal/localnet"
	"github.com/chainlens/chainlens/internal/testdb"
)

// lastBlock is the time of the recording's last block (141).
var lastBlock = time.Date(2026, 11, 21, 22, 7, 35, 0, time.UTC)

type auth struct {
	Type  string `json:"type"`
	Value string `json:"authenticator"`
	Index int64  `json:"authenticator_index"`
}

type record struct {
	Account        string `json:"smart_account"`
	CodeID         *int64 `json:"code_id"`
	AccountNumber  string `json:"account_number"`
	Authenticators []auth `json:"authenticators"`
}

// truthAuth renders a stored authenticator of the node's query
// ({"Secp256K1": {"pubkey": "…"}}) as the API does.
func truthAuth(t *testing.T, id int64, raw map[string]map[string]string) auth {
	t.Helper()
	for variant, v := range raw {
		switch variant {
		case "Secp256K1", "Ed25519":
			return auth{variant, v["pubkey"], id}
		case "EthWallet":
			return auth{variant, strings.ToLower(v["address"]), id}
		case "Jwt":
			return auth{"JWT", v["aud"] + "." + v["sub"], id}
		}
		t.Fatalf("variant %s not in the recording's README", variant)
	}
	return auth{}
}

// TestSmartAccountsOnRecordedLocalnet checks the four endpoints over HTTP
// against the node's own state at the last height (truth/*.json).
func TestSmartAccountsOnRecordedLocalnet(t *testing.T) {
	t.Parallel()
	db, _ := testdb.New(t)
	ch := localnet.XION.Index(t, db)
	cfg := &config.Config{Chains: []config.Chain{ch}}
	apitest.RunJobs(t, db, cfg)
	cfg.API = apitest.DefaultAPI(t, true)
	s := apitest.Serve(t, db, cfg, lastBlock.Add(time.Minute))
	srv := s

	var truth struct {
		Accounts map[string]struct {
			AccountNumber  string                                  `json:"account_number"`
			CodeID         string                                  `json:"code_id"`
			Authenticators map[string]map[string]map[string]string `json:"authenticators"`
		} `json:"smart_accounts"`
	}
	localnet.XION.Truth(t, "smart_accounts.json", &truth)
	if len(truth.Accounts) != 5 {
		t.Fatalf("truth has %d accounts", len(truth.Accounts))
	}
	byValue := map[string][]string{}
	for addr, w := range truth.Accounts {
		var want []auth
		for id, raw := range w.Authenticators {
			var n int64
			fmt.Sscan(id, &n)
			a := truthAuth(t, n, raw)
			want = append(want, a)
			byValue[a.Value] = append(byValue[a.Value], addr)
		}
		sort.Slice(want, func(i, j int) bool { return want[i].Index < want[j].Index })
		var got record
		srv.GetJSON(t, "/v3/smartAccount/"+addr+"/authenticators", &got)
		if got.Account != addr || got.CodeID == nil || fmt.Sprint(*got.CodeID) != w.CodeID || got.AccountNumber != w.AccountNumber ||
			!slices.Equal(got.Authenticators, want) {
			t.Errorf("%s:\n got %+v\nwant %+v %s %s", addr, got, want, w.CodeID, w.AccountNumber)
		}
		var one record
		srv.GetJSON(t, fmt.Sprintf("/v3/smartAccount/%s/authenticators?auth_id=%d", addr, want[0].Index), &one)
		if len(one.Authenticators) != 1 || one.Authenticators[0] != want[0] {
			t.Errorf("%s auth_id %d: %+v", addr, want[0].Index, one.Authenticators)
		}
	}
	ethWallets := 0
	for value, accounts := range byValue {
		sort.Strings(accounts)
		var got struct {
			Authenticator string `json:"authenticator"`
			Accounts      []struct {
				Account string `json:"smart_account"`
			} `json:"smart_accounts"`
		}
		path := "/v3/authenticators/" + url.PathEscape(value) + "/smartAccounts"
		srv.GetJSON(t, path, &got)
		var names []string
		for _, a := range got.Accounts {
			names = append(names, a.Account)
		}
		if got.Authenticator != value || !slices.Equal(names, accounts) {
			t.Errorf("%s: %+v, want %v", value, got, accounts)
		}
		var details []record
		srv.GetJSON(t, path+"/details", &details)
		if len(details) != len(accounts) || len(details[0].Authenticators) == 0 {
			t.Errorf("%s details: %+v", value, details)
		}
		if common.IsHexAddress(value) {
			// A wallet address in its checksummed (mixed-case) form names
			// the same authenticator.
			ethWallets++
			mixed := common.HexToAddress(value).Hex()
			srv.GetJSON(t, "/v3/authenticators/"+mixed+"/smartAccounts", &got)
			names = names[:0]
			for _, a := range got.Accounts {
				names = append(names, a.Account)
			}
			if mixed == value || got.Authenticator != mixed || !slices.Equal(names, accounts) {
				t.Errorf("%s as %s: %+v, want %v", value, mixed, got, accounts)
			}
		}
	}
	if ethWallets == 0 {
		t.Error("no EthWallet authenticator in the recording")
	}
	if len(byValue) < 6 {
		t.Fatalf("only %d authenticators", len(byValue))
	}

	t.Run("permissions", func(t *testing.T) { checkPermissions(t, srv) })

	for _, c := range []struct {
		path   string
		status int
	}{
		{"/v3/smartAccount/xion1qvdkp8899vdrvzr8rynenwv3phuw84vcmvwnr7/authenticators", 404}, // an ordinary account
		{"/v3/smartAccount/cosmos1qvdkp8899vdrvzr8rynenwv3phuw84vc4dllg6/authenticators", 400},
		{"/v3/smartAccount/notanaddress/authenticators", 400},
		{"/v3/smartAccount/xion1v8x38xfzt8qrc2lnzn78lqrnmgydcalvwzqh3768plq3kn6hey5qlew8ul/authenticators?auth_id=x", 400},
		{"/v3/authenticators/AAAA/smartAccounts", 404},
		{"/v3/authenticators/AAAA/smartAccounts/details", 404},
		{"/v3/address/xion1qvdkp8899vdrvzr8rynenwv3phuw84vcmvwnr7/permissions", 400}, // role is required
		{"/v3/address/xion1qvdkp8899vdrvzr8rynenwv3phuw84vcmvwnr7/permissions?role=owner", 400},
		{"/v3/address/xion1qvdkp8899vdrvzr8rynenwv3phuw84vcmvwnr7/permissions?role=granter", 200},
	} {
		resp, body := srv.Get(t, c.path)
		if resp.StatusCode != c.status {
			t.Errorf("%s: %d %s, want %d", c.path, resp.StatusCode, body, c.status)
		}
	}
}

// norm renders a grant's authorization or allowance, from the node's
// query (amino JSON {type, value}) or from the API (proto3 JSON), as one
// comparable string of what it allows and what is left of it.
func norm(typeURL string, v map[string]any) string {
	coins := func(x any) string {
		list, _ := x.([]any)
		var parts []string
		for _, c := range list {
			m := c.(map[string]any)
			parts = append(parts, fmt.Sprint(m["amount"], m["denom"]))
		}
		return strings.Join(parts, ",")
	}
	inner := func(x any) (string, map[string]any) { // an Any in either form
		m, _ := x.(map[string]any)
		if t, ok := m["type"].(string); ok {
			val, _ := m["value"].(map[string]any)
			return t, val
		}
		t, _ := m["@type"].(string)
		return t, m
	}
	switch typeURL {
	case "/cosmos.authz.v1beta1.GenericAuthorization":
		return fmt.Sprint("generic ", v["msg"])
	case "/cosmos.bank.v1beta1.SendAuthorization":
		return "send " + coins(v["spend_limit"])
	case "/cosmos.staking.v1beta1.StakeAuthorization":
		allow := v["allow_list"]
		if vals, ok := v["Validators"].(map[string]any); ok { // amino: a oneof wrapper
			allow = vals["value"].(map[string]any)["allow_list"]
		}
		return fmt.Sprint("stake ", v["authorization_type"], " ", allow.(map[string]any)["address"])
	case "/cosmos.feegrant.v1beta1.BasicAllowance":
		return fmt.Sprint("basic ", coins(v["spend_limit"]), " until ", v["expiration"])
	case "/cosmos.feegrant.v1beta1.PeriodicAllowance":
		basic, _ := v["basic"].(map[string]any)
		return fmt.Sprint("periodic ", coins(basic["spend_limit"]), " ", coins(v["period_spend_limit"]), " left ",
			coins(v["period_can_spend"]), " reset ", v["period_reset"])
	case "/cosmos.feegrant.v1beta1.AllowedMsgAllowance":
		t, val := inner(v["allowance"])
		return fmt.Sprint("allowed ", v["allowed_messages"], " ", norm(t, val))
	}
	return "unknown " + typeURL
}

func checkPermissions(t *testing.T, srv apitest.Server) {
	type amino struct {
		Type  string         `json:"type"`
		Value map[string]any `json:"value"`
	}
	var authz struct {
		ByGranter map[string]struct {
			Grants []struct {
				Granter, Grantee string
				Authorization    amino  `json:"authorization"`
				Expiration       string `json:"expiration"`
			} `json:"grants"`
		} `json:"by_granter"`
		ByGrantee map[string]json.RawMessage `json:"by_grantee"`
	}
	var fees struct {
		ByGranter map[string]struct {
			Allowances []struct {
				Granter, Grantee string
				Allowance        amino `json:"allowance"`
			} `json:"allowances"`
		} `json:"by_granter"`
	}
	localnet.XION.Truth(t, "authz_grants.json", &authz)
	localnet.XION.Truth(t, "feegrants.json", &fees)
	seen := 0
	for addr := range authz.ByGrantee { // every account of the recording
		want := map[string][]string{}
		for _, g := range authz.ByGranter {
			for _, x := range g.Grants {
				line := fmt.Sprintf("authz %s→%s %s exp %s", x.Granter, x.Grantee, norm(x.Authorization.Type, x.Authorization.Value), x.Expiration)
				if x.Granter == addr {
					want["granter"] = append(want["granter"], line)
				}
				if x.Grantee == addr {
					want["grantee"] = append(want["grantee"], line)
				}
			}
		}
		for _, g := range fees.ByGranter {
			for _, x := range g.Allowances {
				line := fmt.Sprintf("fee %s→%s %s", x.Granter, x.Grantee, norm(x.Allowance.Type, x.Allowance.Value))
				if x.Granter == addr {
					want["granter"] = append(want["granter"], line)
				}
				if x.Grantee == addr {
					want["grantee"] = append(want["grantee"], line)
				}
			}
		}
		for _, role := range []string{"granter", "grantee"} {
			var got struct {
				Authz []struct {
					Granter, Grantee string
					Authorization    struct {
						TypeURL string         `json:"type_url"`
						Value   map[string]any `json:"value"`
					} `json:"authorization"`
					Expiration *string `json:"expiration"`
				} `json:"authz"`
				Feegrants []struct {
					Granter, Grantee string
					Allowance        struct {
						TypeURL string         `json:"type_url"`
						Value   map[string]any `json:"value"`
					} `json:"allowance"`
				} `json:"feegrants"`
			}
			srv.GetJSON(t, "/v3/address/"+addr+"/permissions?role="+role, &got)
			var lines []string
			for _, x := range got.Authz {
				exp := ""
				if x.Expiration != nil {
					exp = *x.Expiration
				}
				lines = append(lines, fmt.Sprintf("authz %s→%s %s exp %s", x.Granter, x.Grantee, norm(x.Authorization.TypeURL, x.Authorization.Value), exp))
			}
			for _, x := range got.Feegrants {
				lines = append(lines, fmt.Sprintf("fee %s→%s %s", x.Granter, x.Grantee, norm(x.Allowance.TypeURL, x.Allowance.Value)))
			}
			sort.Strings(lines)
			w := want[role]
			sort.Strings(w)
			if !slices.Equal(lines, w) {
				t.Errorf("%s as %s:\n got %q\nwant %q", addr, role, lines, w)
			}
			seen += len(lines)
		}
	}
	if seen < 10 {
		t.Errorf("only %d grants compared", seen)
	}
}
