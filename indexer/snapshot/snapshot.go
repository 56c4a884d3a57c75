// Package snapshot takes periodic snapshots of a cosmos-sdk chain's state
// through CometBFT's abci_query at a fixed height (total supply, module
// account balances, staking pool, mint inflation and annual provisions,
// community pool, validators) and stores them in state_snapshots with the
// height and its block time, for the aggregators.
//
// A snapshot at height h is the application state after block h was
// committed (abci_query at version h); its time is the time of block h.
//
// Besides the data rows, every snapshot holds one marker row per kind it
// tried: kind "taken" (key = the kind, data {"rows": n}) when the node
// answered, or kind "skipped" (key = the kind, data {"reason": ...}) when
// the chain lacks the module. A taken kind with no data rows is empty (an
// empty community pool), not missing; Latest relies on the markers.
package snapshot

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/chainlens/chainlens/store/snapshots"

	sdkmath "cosmossdk.io/math"
	"github.com/cosmos/cosmos-sdk/types/bech32"
	"github.com/cosmos/cosmos-sdk/types/query"
	authtypes "github.com/cosmos/cosmos-sdk/x/auth/types"
	banktypes "github.com/cosmos/cosmos-sdk/x/bank/types"
	distrtypes "github.com/cosmos/cosmos-sdk/x/distribution/types"
	minttypes "github.com/cosmos/cosmos-sdk/x/mint/types"
	protocolpooltypes "github.com/cosmos/cosmos-sdk/x/protocolpool/types"
	stakingtypes "github.com/cosmos/cosmos-sdk/x/staking/types"
)

// DefaultModules are the module accounts whose balances are snapshotted
// when none are configured.
var DefaultModules = []string{
	authtypes.FeeCollectorName,
	distrtypes.ModuleName,
	stakingtypes.BondedPoolName,
	stakingtypes.NotBondedPoolName,
}

// gRPC query paths served through abci_query.
const (
	pathTotalSupply       = "/cosmos.bank.v1beta1.Query/TotalSupply"
	pathAllBalances       = "/cosmos.bank.v1beta1.Query/AllBalances"
	pathStakingParams     = "/cosmos.staking.v1beta1.Query/Params"
	pathPool              = "/cosmos.staking.v1beta1.Query/Pool"
	pathValidators        = "/cosmos.staking.v1beta1.Query/Validators"
	pathDelegations       = "/cosmos.staking.v1beta1.Query/DelegatorDelegations"
	pathMintParams        = "/cosmos.mint.v1beta1.Query/Params"
	pathInflation         = "/cosmos.mint.v1beta1.Query/Inflation"
	pathAnnualProvisions  = "/cosmos.mint.v1beta1.Query/AnnualProvisions"
	pathCommunityPool     = "/cosmos.distribution.v1beta1.Query/CommunityPool"
	pathProtocolPoolFunds = "/cosmos.protocolpool.v1.Query/CommunityPool"
)

// pageSize is the page limit of paginated queries; the loop follows
// next_key whatever the node's own cap is.
const pageSize = 1000

// maxPages bounds a paginated query (a node that never ends its pages).
const maxPages = 100_000

// Querier runs an ABCI query at a fixed height and returns the response
// value; *cometbft.Client implements it.
type Querier interface {
	ABCIQuery(ctx context.Context, path string, data []byte, height int64) ([]byte, error)
}

// ErrUnknownPath marks a query path the node does not serve: the chain lacks
// the module. A Querier may wrap it; cosmos-sdk's answer (code 6,
// ErrUnknownRequest, log "unknown query path: ...") is recognised from the
// error text too, since *cometbft.Client reports the node's code and log in
// its message only.
var ErrUnknownPath = errors.New("unknown query path")

// IsUnknownPath reports whether err is a node's refusal of an unknown query path.
func IsUnknownPath(err error) bool {
	return err != nil && (errors.Is(err, ErrUnknownPath) || strings.Contains(err.Error(), "unknown query path"))
}

// Skipped returns the kinds a snapshot skipped because the chain lacks
// their module, in the order they were tried.
func Skipped(rows []snapshots.Row) []string {
	var out []string
	for _, r := range rows {
		if r.Kind == snapshots.KindSkipped {
			out = append(out, r.Key)
		}
	}
	return out
}

// message is a gogoproto request or response.
type message interface {
	Marshal() ([]byte, error)
	Unmarshal([]byte) error
}

// Take queries the chain's state at height and returns the snapshot rows:
// every kind of snapshots.Kinds, plus a taken or skipped marker per kind. The
// balances of modules (module account names; duplicates are ignored) are
// read at the addresses authtypes.NewModuleAddress(name) encoded with
// bech32Prefix. A kind whose query path the node does not know is skipped
// (snapshots.KindSkipped row) without failing the snapshot; any other failure fails
// it. The delegations of delegators are taken when there are any.
func Take(ctx context.Context, q Querier, chainID string, height int64, bech32Prefix string, modules, delegators []string) ([]snapshots.Row, error) {
	if height <= 0 {
		return nil, fmt.Errorf("snapshot %s: height %d: a snapshot needs a fixed height", chainID, height)
	}
	var mods []string
	for _, m := range modules {
		if !slices.Contains(mods, m) {
			mods = append(mods, m)
		}
	}
	if len(mods) > 0 && bech32Prefix == "" {
		return nil, fmt.Errorf("snapshot %s: module balances need the chain's bech32 prefix", chainID)
	}
	t := &taker{q: q, height: height}
	takers := map[string]func(context.Context) ([]snapshots.Row, error){
		snapshots.KindSupply:        t.supply,
		snapshots.KindModuleBalance: func(ctx context.Context) ([]snapshots.Row, error) { return t.moduleBalances(ctx, bech32Prefix, mods) },
		snapshots.KindStakingPool:   t.stakingPool,
		snapshots.KindValidator:     t.validators,
		snapshots.KindDelegation:    func(ctx context.Context) ([]snapshots.Row, error) { return t.delegations(ctx, delegators) },
		snapshots.KindMint:          t.mint,
		snapshots.KindCommunityPool: t.communityPool,
	}
	var rows, markers []snapshots.Row
	for _, kind := range snapshots.Kinds {
		if (kind == snapshots.KindModuleBalance && len(mods) == 0) || (kind == snapshots.KindDelegation && len(delegators) == 0) {
			continue
		}
		got, err := takers[kind](ctx)
		switch {
		case IsUnknownPath(err):
			markers = append(markers, snapshots.Row{Kind: snapshots.KindSkipped, Key: kind, Data: mustJSON(map[string]string{"reason": err.Error()})})
		case err != nil:
			return nil, fmt.Errorf("snapshot %s at %d: %s: %w", chainID, height, kind, err)
		default:
			rows = append(rows, got...)
			markers = append(markers, snapshots.Row{Kind: snapshots.KindTaken, Key: kind, Data: mustJSON(map[string]int{"rows": len(got)})})
		}
	}
	return append(rows, markers...), nil
}

// taker runs the queries of one snapshot.
type taker struct {
	q      Querier
	height int64

	bondDenom string // cached staking params
}

// call runs one query: req is encoded, resp decoded from the answer.
func (t *taker) call(ctx context.Context, path string, req, resp message) error {
	data, err := req.Marshal()
	if err != nil {
		return fmt.Errorf("encode %s request: %w", path, err)
	}
	raw, err := t.q.ABCIQuery(ctx, path, data, t.height)
	if err != nil {
		return err
	}
	if err := resp.Unmarshal(raw); err != nil {
		return fmt.Errorf("decode %s response: %w", path, err)
	}
	return nil
}

// paginate calls page with the next key (nil first) until it returns an
// empty next key.
func paginate(path string, page func(key []byte) (next []byte, err error)) error {
	seen := map[string]bool{}
	var key []byte
	for range maxPages {
		next, err := page(key)
		if err != nil {
			return err
		}
		if len(next) == 0 {
			return nil
		}
		if seen[string(next)] {
			return fmt.Errorf("%s: the node repeated next_key %x", path, next)
		}
		seen[string(next)] = true
		key = next
	}
	return fmt.Errorf("%s: more than %d pages", path, maxPages)
}

func pageRequest(key []byte) *query.PageRequest {
	return &query.PageRequest{Key: key, Limit: pageSize}
}

func nextKey(p *query.PageResponse) []byte {
	if p == nil {
		return nil
	}
	return p.NextKey
}

func (t *taker) supply(ctx context.Context) ([]snapshots.Row, error) {
	var rows []snapshots.Row
	err := paginate(pathTotalSupply, func(key []byte) ([]byte, error) {
		var resp banktypes.QueryTotalSupplyResponse
		if err := t.call(ctx, pathTotalSupply, &banktypes.QueryTotalSupplyRequest{Pagination: pageRequest(key)}, &resp); err != nil {
			return nil, err
		}
		for _, c := range resp.Supply {
			rows = append(rows, snapshots.Row{Kind: snapshots.KindSupply, Denom: c.Denom, Amount: intString(c.Amount)})
		}
		return nextKey(resp.Pagination), nil
	})
	return rows, err
}

// ModuleAddress is the bech32 address of a module account.
func ModuleAddress(bech32Prefix, module string) (string, error) {
	addr, err := bech32.ConvertAndEncode(bech32Prefix, authtypes.NewModuleAddress(module))
	if err != nil {
		return "", fmt.Errorf("address of module %s: %w", module, err)
	}
	return addr, nil
}

func (t *taker) moduleBalances(ctx context.Context, prefix string, modules []string) ([]snapshots.Row, error) {
	var rows []snapshots.Row
	for _, m := range modules {
		addr, err := ModuleAddress(prefix, m)
		if err != nil {
			return nil, err
		}
		data := mustJSON(map[string]string{"address": addr})
		err = paginate(pathAllBalances, func(key []byte) ([]byte, error) {
			var resp banktypes.QueryAllBalancesResponse
			if err := t.call(ctx, pathAllBalances, &banktypes.QueryAllBalancesRequest{Address: addr, Pagination: pageRequest(key)}, &resp); err != nil {
				return nil, err
			}
			for _, c := range resp.Balances {
				rows = append(rows, snapshots.Row{Kind: snapshots.KindModuleBalance, Key: m, Denom: c.Denom, Amount: intString(c.Amount), Data: data})
			}
			return nextKey(resp.Pagination), nil
		})
		if err != nil {
			return nil, fmt.Errorf("module %s (%s): %w", m, addr, err)
		}
	}
	return rows, nil
}

// stakingDenom reads the bond denom from the staking params once.
func (t *taker) stakingDenom(ctx context.Context) (string, error) {
	if t.bondDenom != "" {
		return t.bondDenom, nil
	}
	var resp stakingtypes.QueryParamsResponse
	if err := t.call(ctx, pathStakingParams, &stakingtypes.QueryParamsRequest{}, &resp); err != nil {
		return "", err
	}
	t.bondDenom = resp.Params.BondDenom
	return t.bondDenom, nil
}

func (t *taker) stakingPool(ctx context.Context) ([]snapshots.Row, error) {
	denom, err := t.stakingDenom(ctx)
	if err != nil {
		return nil, err
	}
	var resp stakingtypes.QueryPoolResponse
	if err := t.call(ctx, pathPool, &stakingtypes.QueryPoolRequest{}, &resp); err != nil {
		return nil, err
	}
	return []snapshots.Row{
		{Kind: snapshots.KindStakingPool, Key: "bonded", Denom: denom, Amount: intString(resp.Pool.BondedTokens)},
		{Kind: snapshots.KindStakingPool, Key: "not_bonded", Denom: denom, Amount: intString(resp.Pool.NotBondedTokens)},
	}, nil
}

// validatorData is the data of a snapshots.KindValidator row; decimals are strings.
type validatorData struct {
	Moniker         string `json:"moniker"`
	Status          string `json:"status"` // BOND_STATUS_BONDED | BOND_STATUS_UNBONDING | BOND_STATUS_UNBONDED
	Jailed          bool   `json:"jailed"`
	CommissionRate  string `json:"commission_rate"`
	DelegatorShares string `json:"delegator_shares"`
}

func (t *taker) validators(ctx context.Context) ([]snapshots.Row, error) {
	denom, err := t.stakingDenom(ctx)
	if err != nil {
		return nil, err
	}
	var rows []snapshots.Row
	err = paginate(pathValidators, func(key []byte) ([]byte, error) {
		var resp stakingtypes.QueryValidatorsResponse
		if err := t.call(ctx, pathValidators, &stakingtypes.QueryValidatorsRequest{Pagination: pageRequest(key)}, &resp); err != nil {
			return nil, err
		}
		for _, v := range resp.Validators {
			rows = append(rows, snapshots.Row{Kind: snapshots.KindValidator, Key: v.OperatorAddress, Denom: denom, Amount: intString(v.Tokens),
				Data: mustJSON(validatorData{
					// jsonb rejects \u0000, and monikers are free text.
					Moniker:         strings.ReplaceAll(v.Description.Moniker, "\x00", ""),
					Status:          v.Status.String(),
					Jailed:          v.Jailed,
					CommissionRate:  decString(v.Commission.Rate),
					DelegatorShares: decString(v.DelegatorShares),
				})})
		}
		return nextKey(resp.Pagination), nil
	})
	return rows, err
}

// delegations are the delegations of each delegator (duplicates ignored).
func (t *taker) delegations(ctx context.Context, delegators []string) ([]snapshots.Row, error) {
	denom, err := t.stakingDenom(ctx)
	if err != nil {
		return nil, err
	}
	var rows []snapshots.Row
	seen := map[string]bool{}
	for _, d := range delegators {
		if seen[d] {
			continue
		}
		seen[d] = true
		err := paginate(pathDelegations, func(key []byte) ([]byte, error) {
			var resp stakingtypes.QueryDelegatorDelegationsResponse
			if err := t.call(ctx, pathDelegations, &stakingtypes.QueryDelegatorDelegationsRequest{DelegatorAddr: d, Pagination: pageRequest(key)}, &resp); err != nil {
				return nil, err
			}
			for _, r := range resp.DelegationResponses {
				rows = append(rows, snapshots.Row{Kind: snapshots.KindDelegation, Key: r.Delegation.DelegatorAddress + "/" + r.Delegation.ValidatorAddress,
					Denom: denom, Amount: intString(r.Balance.Amount),
					Data: mustJSON(map[string]string{"shares": decString(r.Delegation.Shares)})})
			}
			return nextKey(resp.Pagination), nil
		})
		if err != nil {
			return nil, fmt.Errorf("delegations of %s: %w", d, err)
		}
	}
	return rows, nil
}

func (t *taker) mint(ctx context.Context) ([]snapshots.Row, error) {
	var params minttypes.QueryParamsResponse
	if err := t.call(ctx, pathMintParams, &minttypes.QueryParamsRequest{}, &params); err != nil {
		return nil, err
	}
	var infl minttypes.QueryInflationResponse
	if err := t.call(ctx, pathInflation, &minttypes.QueryInflationRequest{}, &infl); err != nil {
		return nil, err
	}
	var prov minttypes.QueryAnnualProvisionsResponse
	if err := t.call(ctx, pathAnnualProvisions, &minttypes.QueryAnnualProvisionsRequest{}, &prov); err != nil {
		return nil, err
	}
	return []snapshots.Row{
		{Kind: snapshots.KindMint, Key: "inflation", Amount: decString(infl.Inflation)},
		{Kind: snapshots.KindMint, Key: "annual_provisions", Denom: params.Params.MintDenom, Amount: decString(prov.AnnualProvisions)},
	}, nil
}

// communityPool reads x/distribution's pool, or x/protocolpool's when the
// chain keeps its community pool there (cosmos-sdk ≥ 0.53 with an external
// pool: distribution then refuses the query).
func (t *taker) communityPool(ctx context.Context) ([]snapshots.Row, error) {
	var resp distrtypes.QueryCommunityPoolResponse
	err := t.call(ctx, pathCommunityPool, &distrtypes.QueryCommunityPoolRequest{}, &resp)
	if err == nil {
		rows := make([]snapshots.Row, 0, len(resp.Pool))
		for _, c := range resp.Pool {
			rows = append(rows, snapshots.Row{Kind: snapshots.KindCommunityPool, Denom: c.Denom, Amount: decString(c.Amount)})
		}
		return rows, nil
	}
	if !IsUnknownPath(err) && !strings.Contains(err.Error(), "external community pool is enabled") {
		return nil, err
	}
	var pp protocolpooltypes.QueryCommunityPoolResponse
	if err2 := t.call(ctx, pathProtocolPoolFunds, &protocolpooltypes.QueryCommunityPoolRequest{}, &pp); err2 != nil {
		if IsUnknownPath(err2) {
			return nil, err // the chain has neither: report distribution's answer
		}
		return nil, err2
	}
	data := mustJSON(map[string]string{"source": "protocolpool"})
	rows := make([]snapshots.Row, 0, len(pp.Pool))
	for _, c := range pp.Pool {
		rows = append(rows, snapshots.Row{Kind: snapshots.KindCommunityPool, Denom: c.Denom, Amount: sdkmath.LegacyNewDecFromInt(c.Amount).String(), Data: data})
	}
	return rows, nil
}

// intString formats an integer amount; an absent value is zero.
func intString(i sdkmath.Int) string {
	if i.IsNil() {
		return "0"
	}
	return i.String()
}

// decString formats a decimal (18 places); an absent value is zero.
func decString(d sdkmath.LegacyDec) string {
	if d.IsNil() {
		return sdkmath.LegacyZeroDec().String()
	}
	return d.String()
}

// mustJSON encodes values that always encode (maps of strings, plain structs).
func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("snapshot: encode %T: %v", v, err))
	}
	return b
}
