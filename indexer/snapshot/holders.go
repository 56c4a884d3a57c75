package snapshot

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"slices"
	"strings"
	"syscall"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/chainlens/chainlens/chains"
	"github.com/chainlens/chainlens/chains/wire"
	"github.com/chainlens/chainlens/indexer"
	"github.com/chainlens/chainlens/indexer/cometbft"
	"github.com/chainlens/chainlens/store/snapshots"

	banktypes "github.com/cosmos/cosmos-sdk/x/bank/types"
	stakingtypes "github.com/cosmos/cosmos-sdk/x/staking/types"
	"github.com/uptrace/bun"
)

const pathDenomOwners = "/cosmos.bank.v1beta1.Query/DenomOwners"

// TakeHolders lists every holder of each denom at height through the bank
// module's DenomOwners query, plus a taken marker per denom. A node without
// the query marks the denoms skipped.
func TakeHolders(ctx context.Context, q Querier, height int64, denoms []string) ([]snapshots.Row, error) {
	t := &taker{q: q, height: height}
	var rows, markers []snapshots.Row
	var seen []string
	for _, d := range denoms {
		if d == "" || slices.Contains(seen, d) {
			continue
		}
		seen = append(seen, d)
		var got []snapshots.Row
		err := paginate(pathDenomOwners, func(key []byte) ([]byte, error) {
			var resp banktypes.QueryDenomOwnersResponse
			if err := t.call(ctx, pathDenomOwners, &banktypes.QueryDenomOwnersRequest{Denom: d, Pagination: pageRequest(key)}, &resp); err != nil {
				return nil, err
			}
			for _, o := range resp.DenomOwners {
				if o == nil || !o.Balance.Amount.IsPositive() {
					continue
				}
				got = append(got, snapshots.Row{Kind: snapshots.KindHolder, Key: o.Address, Denom: d, Amount: intString(o.Balance.Amount)})
			}
			return nextKey(resp.Pagination), nil
		})
		switch {
		case IsUnknownPath(err):
			markers = append(markers, snapshots.Row{Kind: snapshots.KindSkipped, Key: snapshots.HolderMarker(d), Data: mustJSON(map[string]string{"reason": err.Error()})})
		case err != nil:
			return nil, fmt.Errorf("holders of %s at %d: %w", d, height, err)
		default:
			rows = append(rows, got...)
			markers = append(markers, snapshots.Row{Kind: snapshots.KindTaken, Key: snapshots.HolderMarker(d), Data: mustJSON(map[string]int{"rows": len(got)})})
		}
	}
	return append(rows, markers...), nil
}

// RuleHolderDenoms are the denoms the rule audiences of chainID hold
// conditions on (engagement rules: {"chain": ..., "holds": {"denom": ...}}):
// the holder lists a snapshot of the chain must take.
func RuleHolderDenoms(ctx context.Context, db bun.IDB, chainID string) ([]string, error) {
	var denoms []string
	err := db.NewRaw(`SELECT DISTINCT rule->'holds'->>'denom' FROM audiences
		WHERE kind = 'rule' AND rule->>'chain' = ? AND rule->'holds'->>'denom' IS NOT NULL ORDER BY 1`, chainID).Scan(ctx, &denoms)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("holder denoms of %s: %w", chainID, err)
	}
	return denoms, nil
}

// BankState reads a chain's bank state at past heights for the indexer's
// import of the state before its first indexed height (indexer.BankState).
type BankState struct {
	Q Querier
	// PageSize is the number of holders a page asks for (0: the default).
	PageSize uint64
}

// SupplyDenoms lists the denoms with a supply at height. A node that
// keeps no state there (pruned) or lacks the query answers
// indexer.ErrStateUnavailable.
func (b BankState) SupplyDenoms(ctx context.Context, height int64) ([]string, error) {
	t := &taker{q: b.Q, height: height}
	rows, err := t.supply(ctx)
	if err != nil {
		return nil, unavailable(err)
	}
	out := make([]string, 0, len(rows))
	for _, r := range rows {
		out = append(out, r.Denom)
	}
	return out, nil
}

// Holders returns one page of denom's holders at height.
func (b BankState) Holders(ctx context.Context, height int64, denom string, key []byte) ([]indexer.Holding, []byte, error) {
	t := &taker{q: b.Q, height: height}
	var resp banktypes.QueryDenomOwnersResponse
	page := pageRequest(key)
	if b.PageSize > 0 {
		page.Limit = b.PageSize
	}
	if err := t.call(ctx, pathDenomOwners, &banktypes.QueryDenomOwnersRequest{Denom: denom, Pagination: page}, &resp); err != nil {
		return nil, nil, unavailable(err)
	}
	out := make([]indexer.Holding, 0, len(resp.DenomOwners))
	for _, o := range resp.DenomOwners {
		if o == nil || !o.Balance.Amount.IsPositive() {
			continue
		}
		out = append(out, indexer.Holding{Address: o.Address, Amount: intString(o.Balance.Amount)})
	}
	return out, nextKey(resp.Pagination), nil
}

var _ indexer.OpeningState = BankState{}

// OpeningPage returns one page of an adapter's opening query at height
// (indexer.OpeningState): a page of a paginated gRPC query, the whole
// answer of another (for an Each query, to req's Data), every key and
// value under a store read's prefix, or the value of one store key. A
// node that keeps no state there, lacks the query or cannot read the
// store at that height answers indexer.ErrStateUnavailable.
func (b BankState) OpeningPage(ctx context.Context, height int64, q chains.OpeningQuery, req chains.OpeningRequest, key []byte) ([][]byte, []byte, error) {
	if len(q.Prefix) > 0 {
		items, err := storeRead(ctx, b.Q, q.Path, q.Prefix, height)
		return items, nil, err
	}
	if strings.HasPrefix(q.Path, "/store/") && strings.HasSuffix(q.Path, "/key") {
		// A store reads one key at the height asked (unlike a subspace).
		v, err := b.Q.ABCIQuery(ctx, q.Path, req.Data, height)
		if err != nil {
			return nil, nil, unavailable(fmt.Errorf("%s: %w", q.Path, err))
		}
		if len(v) == 0 {
			return nil, nil, nil
		}
		return [][]byte{v}, nil, nil
	}
	limit := b.PageSize
	if limit == 0 {
		limit = pageSize
	}
	if q.Whole {
		limit, key = 0, nil
	}
	items, next, err := queryPage(ctx, b.Q, q.Path, height, req.Data, key, limit)
	var refused *cometbft.QueryRefused
	if q.Each != nil && errors.As(err, &refused) {
		// A read the module rejects (one pool it cannot list) would be
		// asked again forever: the query is what the node cannot serve.
		return nil, nil, fmt.Errorf("%w: %s: %w", indexer.ErrStateUnavailable, req.Key, err)
	}
	if err != nil {
		return nil, nil, unavailable(err)
	}
	return items, next, nil
}

// probeAhead is how far past a read's height storeRead probes: no node
// keeps a version that far ahead.
const probeAhead = 1 << 40

// storeRead reads every key and value under prefix of the store of path
// ("/store/<store key>/subspace") at height: the items are the bytes of
// each Pair{key=1, value=2} of the answer (Pairs{pairs=1}). cosmos-sdk's
// stores read a subspace at their latest version whatever the height
// asked (store/iavl Query, up to v0.53 and Osmosis's fork;
// cosmos/cosmos-sdk#25914), which would pass the state of now for the
// state at height: the same read at a height no node has comes first, and
// a node that answers it is not trusted with a past height.
func storeRead(ctx context.Context, q Querier, path string, prefix []byte, height int64) ([][]byte, error) {
	probe := append(bytes.Clone(prefix), 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff)
	_, err := q.ABCIQuery(ctx, path, probe, height+probeAhead)
	if err == nil {
		return nil, fmt.Errorf("%w: %s: the node reads the store at its latest state whatever the height asked (it answered for height %d)",
			indexer.ErrStateUnavailable, path, height+probeAhead)
	}
	// Only the node's refusal tells; no answer at all tells nothing.
	var ne net.Error
	if ctx.Err() != nil || errors.As(err, &ne) || errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) {
		return nil, fmt.Errorf("%s: probe the store's versions: %w", path, err)
	}
	resp, err := q.ABCIQuery(ctx, path, prefix, height)
	if err != nil {
		return nil, unavailable(fmt.Errorf("%s: %w", path, err))
	}
	fs, err := wire.Fields(resp)
	if err != nil {
		return nil, fmt.Errorf("%s: decode the answer: %w", path, err)
	}
	var items [][]byte
	for _, f := range fs {
		if f.Num != 1 || f.Type != protowire.BytesType {
			continue
		}
		// Every key is under the prefix, or the node read something else.
		pfs, err := wire.Fields(f.Bytes)
		if err != nil {
			return nil, fmt.Errorf("%s: decode a pair: %w", path, err)
		}
		for _, pf := range pfs {
			if pf.Num == 1 && pf.Type == protowire.BytesType && !bytes.HasPrefix(pf.Bytes, prefix) {
				return nil, fmt.Errorf("%s: key %x is not under the prefix %x", path, pf.Bytes, prefix)
			}
		}
		items = append(items, f.Bytes)
	}
	return items, nil
}

// unavailable marks the node's lasting refusals (pruned state, a query it
// does not serve, no abci_query method at all) as
// indexer.ErrStateUnavailable; other errors (a busy node's internal error,
// one that did not answer) are kept, and retried.
func unavailable(err error) error {
	var re *cometbft.RPCError
	if IsStatePruned(err) || IsUnknownPath(err) || (errors.As(err, &re) && re.Code == -32601) {
		return fmt.Errorf("%w: %w", indexer.ErrStateUnavailable, err)
	}
	return err
}

const pathValidatorDelegations = "/cosmos.staking.v1beta1.Query/ValidatorDelegations"

// Validators lists every validator's operator address at height.
func (b BankState) Validators(ctx context.Context, height int64) ([]string, error) {
	t := &taker{q: b.Q, height: height}
	var out []string
	err := paginate(pathValidators, func(key []byte) ([]byte, error) {
		var resp stakingtypes.QueryValidatorsResponse
		if err := t.call(ctx, pathValidators, &stakingtypes.QueryValidatorsRequest{Pagination: pageRequest(key)}, &resp); err != nil {
			return nil, err
		}
		for _, v := range resp.Validators {
			out = append(out, v.OperatorAddress)
		}
		return nextKey(resp.Pagination), nil
	})
	if err != nil {
		return nil, unavailable(err)
	}
	return out, nil
}

// Delegations returns one page of validator's delegations at height, each
// in tokens (the shares at the validator's exchange rate, as the staking
// module reports them).
func (b BankState) Delegations(ctx context.Context, height int64, validator string, key []byte) ([]indexer.Delegation, []byte, error) {
	t := &taker{q: b.Q, height: height}
	page := pageRequest(key)
	if b.PageSize > 0 {
		page.Limit = b.PageSize
	}
	var resp stakingtypes.QueryValidatorDelegationsResponse
	if err := t.call(ctx, pathValidatorDelegations, &stakingtypes.QueryValidatorDelegationsRequest{ValidatorAddr: validator, Pagination: page}, &resp); err != nil {
		return nil, nil, unavailable(err)
	}
	out := make([]indexer.Delegation, 0, len(resp.DelegationResponses))
	for _, d := range resp.DelegationResponses {
		if !d.Balance.Amount.IsPositive() {
			continue
		}
		out = append(out, indexer.Delegation{Delegator: d.Delegation.DelegatorAddress, Denom: d.Balance.Denom, Amount: intString(d.Balance.Amount)})
	}
	return out, nextKey(resp.Pagination), nil
}
