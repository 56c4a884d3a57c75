package snapshot_test

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/chainlens/chainlens/store/snapshots"

	sdkmath "cosmossdk.io/math"
	sdk "github.com/cosmos/cosmos-sdk/types"
	"github.com/cosmos/cosmos-sdk/types/query"
	banktypes "github.com/cosmos/cosmos-sdk/x/bank/types"
	minttypes "github.com/cosmos/cosmos-sdk/x/mint/types"
	protocolpooltypes "github.com/cosmos/cosmos-sdk/x/protocolpool/types"
	stakingtypes "github.com/cosmos/cosmos-sdk/x/staking/types"

	"github.com/chainlens/chainlens/indexer/snapshot"
)

type protoMsg interface {
	Marshal() ([]byte, error)
	Unmarshal([]byte) error
}

// fakeNode answers abci_query like a cosmos-sdk node: registered paths
// run their handler, others get baseapp's unknown-path answer as
// *cometbft.Client reports it.
type fakeNode struct {
	handlers map[string]func(req []byte) (protoMsg, error)
	addrs    []string // of AllBalances requests
}

func (f *fakeNode) ABCIQuery(_ context.Context, path string, data []byte, height int64) ([]byte, error) {
	h, ok := f.handlers[path]
	if !ok {
		return nil, fmt.Errorf("cometbft abci_query %s at %d: code 6: unknown query path: unknown request", path, height)
	}
	m, err := h(data)
	if err != nil {
		return nil, fmt.Errorf("cometbft abci_query %s at %d: %w", path, height, err)
	}
	return m.Marshal()
}

func decode[T any, P interface {
	*T
	protoMsg
}](t *testing.T, data []byte) P {
	t.Helper()
	var v T
	p := P(&v)
	if err := p.Unmarshal(data); err != nil {
		t.Fatal(err)
	}
	return p
}

// osmosisLike is a node with two pages of supply and validators, mint, and
// a community pool kept in x/protocolpool.
func osmosisLike(t *testing.T) *fakeNode {
	feeCollector := "osmo17xpfvakm2amg962yls6f84z3kell8c5lczssa0" // chain-events.md §12
	big, _ := sdkmath.NewIntFromString("123456789012345678901234567890")
	f := &fakeNode{}
	f.handlers = map[string]func([]byte) (protoMsg, error){
		"/cosmos.bank.v1beta1.Query/TotalSupply": func(b []byte) (protoMsg, error) {
			req := decode[banktypes.QueryTotalSupplyRequest](t, b)
			switch string(req.Pagination.GetKey()) {
			case "":
				return &banktypes.QueryTotalSupplyResponse{Supply: sdk.NewCoins(sdk.NewInt64Coin("uion", 2), sdk.NewInt64Coin("uosmo", 1)),
					Pagination: &query.PageResponse{NextKey: []byte("p2")}}, nil
			case "p2":
				return &banktypes.QueryTotalSupplyResponse{Supply: sdk.NewCoins(sdk.NewCoin("zzz", big))}, nil
			}
			return nil, fmt.Errorf("unexpected key %q", req.Pagination.GetKey())
		},
		"/cosmos.bank.v1beta1.Query/AllBalances": func(b []byte) (protoMsg, error) {
			req := decode[banktypes.QueryAllBalancesRequest](t, b)
			f.addrs = append(f.addrs, req.Address)
			if req.Address == feeCollector {
				return &banktypes.QueryAllBalancesResponse{Balances: sdk.NewCoins(sdk.NewInt64Coin("uosmo", 5))}, nil
			}
			return &banktypes.QueryAllBalancesResponse{}, nil
		},
		"/cosmos.staking.v1beta1.Query/Params": func([]byte) (protoMsg, error) {
			return &stakingtypes.QueryParamsResponse{Params: stakingtypes.Params{BondDenom: "uosmo"}}, nil
		},
		"/cosmos.staking.v1beta1.Query/Pool": func([]byte) (protoMsg, error) {
			return &stakingtypes.QueryPoolResponse{Pool: stakingtypes.Pool{BondedTokens: sdkmath.NewInt(1000), NotBondedTokens: sdkmath.NewInt(7)}}, nil
		},
		"/cosmos.staking.v1beta1.Query/Validators": func(b []byte) (protoMsg, error) {
			req := decode[stakingtypes.QueryValidatorsRequest](t, b)
			v := stakingtypes.Validator{OperatorAddress: "osmovaloper1a", Status: stakingtypes.Bonded, Tokens: sdkmath.NewInt(600),
				DelegatorShares: sdkmath.LegacyMustNewDecFromStr("600.5"), Description: stakingtypes.Description{Moniker: "a\x00b"},
				Commission: stakingtypes.Commission{CommissionRates: stakingtypes.CommissionRates{Rate: sdkmath.LegacyMustNewDecFromStr("0.05")}}}
			if len(req.Pagination.GetKey()) == 0 {
				return &stakingtypes.QueryValidatorsResponse{Validators: []stakingtypes.Validator{v}, Pagination: &query.PageResponse{NextKey: []byte("v2")}}, nil
			}
			v.OperatorAddress, v.Status, v.Jailed, v.Tokens = "osmovaloper1b", stakingtypes.Unbonding, true, sdkmath.NewInt(7)
			v.DelegatorShares, v.Description.Moniker = sdkmath.LegacyMustNewDecFromStr("7"), "b"
			return &stakingtypes.QueryValidatorsResponse{Validators: []stakingtypes.Validator{v}}, nil
		},
		"/cosmos.mint.v1beta1.Query/Params": func([]byte) (protoMsg, error) {
			return &minttypes.QueryParamsResponse{Params: minttypes.Params{MintDenom: "uosmo"}}, nil
		},
		"/cosmos.mint.v1beta1.Query/Inflation": func([]byte) (protoMsg, error) {
			return &minttypes.QueryInflationResponse{Inflation: sdkmath.LegacyMustNewDecFromStr("0.13")}, nil
		},
		"/cosmos.mint.v1beta1.Query/AnnualProvisions": func([]byte) (protoMsg, error) {
			return &minttypes.QueryAnnualProvisionsResponse{AnnualProvisions: sdkmath.LegacyMustNewDecFromStr("12345.678")}, nil
		},
		"/cosmos.distribution.v1beta1.Query/CommunityPool": func([]byte) (protoMsg, error) {
			return nil, fmt.Errorf("code 18: external community pool is enabled - use the CommunityPool query exposed by the external community pool: invalid request")
		},
		"/cosmos.protocolpool.v1.Query/CommunityPool": func([]byte) (protoMsg, error) {
			return &protocolpooltypes.QueryCommunityPoolResponse{Pool: sdk.NewCoins(sdk.NewInt64Coin("uosmo", 42))}, nil
		},
	}
	return f
}

// TestTakeFollowsPagesAndFallbacks checks the rows of a fake node exactly:
// both pages of supply and validators, module addresses of §12, mint, the
// protocolpool community pool and the markers.
func TestTakeFollowsPagesAndFallbacks(t *testing.T) {
	t.Parallel()
	node := osmosisLike(t)
	rows, err := snapshot.Take(context.Background(), node, "osmosis-1", 100, "osmo", []string{"fee_collector", "distribution", "fee_collector"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []snapshots.Row{
		{Kind: "supply", Denom: "uion", Amount: "2"},
		{Kind: "supply", Denom: "uosmo", Amount: "1"},
		{Kind: "supply", Denom: "zzz", Amount: "123456789012345678901234567890"},
		{Kind: "module_balance", Key: "fee_collector", Denom: "uosmo", Amount: "5", Data: []byte(`{"address":"osmo17xpfvakm2amg962yls6f84z3kell8c5lczssa0"}`)},
		{Kind: "staking_pool", Key: "bonded", Denom: "uosmo", Amount: "1000"},
		{Kind: "staking_pool", Key: "not_bonded", Denom: "uosmo", Amount: "7"},
		{Kind: "validator", Key: "osmovaloper1a", Denom: "uosmo", Amount: "600",
			Data: []byte(`{"moniker":"ab","status":"BOND_STATUS_BONDED","jailed":false,"commission_rate":"0.050000000000000000","delegator_shares":"600.500000000000000000"}`)},
		{Kind: "validator", Key: "osmovaloper1b", Denom: "uosmo", Amount: "7",
			Data: []byte(`{"moniker":"b","status":"BOND_STATUS_UNBONDING","jailed":true,"commission_rate":"0.050000000000000000","delegator_shares":"7.000000000000000000"}`)},
		{Kind: "mint", Key: "inflation", Amount: "0.130000000000000000"},
		{Kind: "mint", Key: "annual_provisions", Denom: "uosmo", Amount: "12345.678000000000000000"},
		{Kind: "community_pool", Denom: "uosmo", Amount: "42.000000000000000000", Data: []byte(`{"source":"protocolpool"}`)},
		{Kind: "taken", Key: "supply", Data: []byte(`{"rows":3}`)},
		{Kind: "taken", Key: "module_balance", Data: []byte(`{"rows":1}`)},
		{Kind: "taken", Key: "staking_pool", Data: []byte(`{"rows":2}`)},
		{Kind: "taken", Key: "validator", Data: []byte(`{"rows":2}`)},
		{Kind: "taken", Key: "mint", Data: []byte(`{"rows":2}`)},
		{Kind: "taken", Key: "community_pool", Data: []byte(`{"rows":1}`)},
	}
	assertRows(t, rows, want)
	if s := snapshot.Skipped(rows); s != nil {
		t.Errorf("skipped %v, want none", s)
	}
	// Module accounts are queried once each, at their §12 addresses (distribution has no balance here: no row).
	if want := []string{"osmo17xpfvakm2amg962yls6f84z3kell8c5lczssa0", "osmo1jv65s3grqf6v6jl3dp4t6c9t9rk99cd80yhvld"}; !reflect.DeepEqual(node.addrs, want) {
		t.Errorf("balances queried at %v, want %v", node.addrs, want)
	}

	// Without mint and any community pool module both kinds are skipped.
	for _, p := range []string{"/cosmos.mint.v1beta1.Query/Params", "/cosmos.distribution.v1beta1.Query/CommunityPool", "/cosmos.protocolpool.v1.Query/CommunityPool"} {
		delete(node.handlers, p)
	}
	rows, err = snapshot.Take(context.Background(), node, "osmosis-1", 100, "osmo", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if s := snapshot.Skipped(rows); !reflect.DeepEqual(s, []string{"mint", "community_pool"}) {
		t.Errorf("skipped %v, want [mint community_pool]", s)
	}
	for _, r := range rows {
		if r.Kind == "mint" || r.Kind == "community_pool" || r.Kind == "module_balance" || (r.Kind == "taken" && r.Key == "module_balance") {
			t.Errorf("unexpected row %+v", r)
		}
		if r.Kind == "skipped" && !strings.Contains(string(r.Data), "unknown query path") {
			t.Errorf("skip reason %s", r.Data)
		}
	}

	// Any other refusal fails the snapshot.
	node.handlers["/cosmos.staking.v1beta1.Query/Validators"] = func([]byte) (protoMsg, error) {
		return nil, fmt.Errorf("code 26: failed to load state at height 100; version does not exist (latest height: 90): invalid height")
	}
	if _, err := snapshot.Take(context.Background(), node, "osmosis-1", 100, "osmo", nil, nil); err == nil || !strings.Contains(err.Error(), "version does not exist") {
		t.Errorf("Take with a failing query: %v", err)
	}
	if _, err := snapshot.Take(context.Background(), node, "osmosis-1", 0, "osmo", nil, nil); err == nil {
		t.Error("Take at height 0 succeeded")
	}
	if _, err := snapshot.Take(context.Background(), node, "osmosis-1", 1, "", []string{"fee_collector"}, nil); err == nil {
		t.Error("Take of module balances without a prefix succeeded")
	}
}

func assertRows(t *testing.T, got, want []snapshots.Row) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%d rows, want %d", len(got), len(want))
	}
	for i := range max(len(got), len(want)) {
		var g, w snapshots.Row
		if i < len(got) {
			g = got[i]
		}
		if i < len(want) {
			w = want[i]
		}
		if g.Kind != w.Kind || g.Key != w.Key || g.Denom != w.Denom || g.Amount != w.Amount || string(g.Data) != string(w.Data) {
			t.Errorf("row %d:\n got %+v data %s\nwant %+v data %s", i, g, g.Data, w, w.Data)
		}
	}
}

func TestDue(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		last, indexed, every int64
		maxPending           int
		want                 []int64
		passed               int64
	}{
		{0, 4, 5, 1, nil, 0},
		{0, 5, 5, 1, []int64{5}, 0},
		{5, 9, 5, 1, nil, 0},
		{5, 10, 5, 1, []int64{10}, 0},
		{5, 17, 5, 1, []int64{15}, 1}, // fell behind: 10 passed over
		{0, 17, 5, 1, []int64{15}, 2}, // first start
		{15, 33, 5, 10, []int64{20, 25, 30}, 0},
		{15, 33, 5, 2, []int64{30}, 2},
		{7, 20, 5, 10, []int64{10, 15, 20}, 0}, // last is not a multiple (every changed)
		{30, 20, 5, 10, nil, 0},
		{0, 20, 0, 10, nil, 0},
	} {
		got, passed := snapshot.Due(c.last, c.indexed, c.every, c.maxPending)
		if !reflect.DeepEqual(got, c.want) || passed != c.passed {
			t.Errorf("Due(%d, %d, %d, %d) = %v, %d; want %v, %d", c.last, c.indexed, c.every, c.maxPending, got, passed, c.want, c.passed)
		}
	}
}

// TestDueInOrder: a backfill takes every due multiple in order, a bounded
// batch at a time, never passing one over.
func TestDueInOrder(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		last, indexed, every int64
		limit                int
		want                 []int64
	}{
		{0, 4, 5, 10, nil},
		{0, 17, 5, 10, []int64{5, 10, 15}},
		{0, 17, 5, 2, []int64{5, 10}},
		{10, 17, 5, 2, []int64{15}},
		{7, 20, 5, 10, []int64{10, 15, 20}},
		{30, 20, 5, 10, nil},
		{0, 20, 0, 10, nil},
	} {
		if got := snapshot.DueInOrder(c.last, c.indexed, c.every, c.limit); !reflect.DeepEqual(got, c.want) {
			t.Errorf("DueInOrder(%d, %d, %d, %d) = %v, want %v", c.last, c.indexed, c.every, c.limit, got, c.want)
		}
	}
}
