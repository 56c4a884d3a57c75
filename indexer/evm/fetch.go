package evm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"math/rand/v2"
	"net/http"
	"strings"
	"time"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/ethclient"
	"github.com/ethereum/go-ethereum/rpc"

	chainevm "github.com/chainlens/chainlens/chains/evm"
	"github.com/chainlens/chainlens/indexer"
)

var (
	// errNode marks failures of the node or the transport that outlived
	// the retries (unreachable, 5xx, timeouts, a block it does not have
	// yet, a chain that changed during a fetch): the indexer waits and
	// fetches again, it does not skip blocks.
	errNode = errors.New("node unavailable")
	// errPermanent marks failures the node answers deterministically for
	// a block (a JSON-RPC error, a range that cannot be split further, a
	// malformed reply): such a block goes to dead_letters.
	errPermanent = errors.New("permanent")
)

// header is the part of an eth_getBlockByNumber reply the indexer keeps.
// The hash is read from the reply, never recomputed from the fields, so
// chains whose header encoding differs from Ethereum's work too.
type header struct {
	Number     hexutil.Uint64 `json:"number"`
	Hash       common.Hash    `json:"hash"`
	ParentHash common.Hash    `json:"parentHash"`
	Timestamp  hexutil.Uint64 `json:"timestamp"`
}

func (h *header) time() time.Time { return time.Unix(int64(h.Timestamp), 0).UTC() }

// rangeData is one fetched block range: the headers (nil where a block
// failed before its header was read), the decoded movements and the blocks
// that failed permanently.
type rangeData struct {
	from, to int64
	headers  []*header // index: height - from
	moves    []chainevm.Movement
	flows    []chainevm.BridgeFlow
	failed   map[int64]error
}

func (d *rangeData) lastHash() (common.Hash, bool) {
	if h := d.headers[len(d.headers)-1]; h != nil {
		return h.Hash, true
	}
	return common.Hash{}, false
}

func (d *rangeData) blocks() int {
	n := 0
	for _, h := range d.headers {
		if h != nil {
			n++
		}
	}
	return n
}

// fetchRange fetches [from, to]. A permanent failure bisects the range
// until the failing blocks are single; those are returned in failed (with
// their header when it was read). Node failures are returned as errors.
func (x *Indexer) fetchRange(ctx context.Context, from, to int64) (*rangeData, error) {
	d, err := x.fetchOnce(ctx, from, to)
	if err == nil {
		return d, nil
	}
	if !errors.Is(err, errPermanent) {
		return nil, err
	}
	if from == to {
		out := &rangeData{from: from, to: to, headers: []*header{nil}, failed: map[int64]error{from: err}}
		if d != nil && d.headers[0] != nil {
			out.headers[0] = d.headers[0]
		}
		return out, nil
	}
	mid := from + (to-from)/2
	a, err := x.fetchRange(ctx, from, mid)
	if err != nil {
		return nil, err
	}
	b, err := x.fetchRange(ctx, mid+1, to)
	if err != nil {
		return nil, err
	}
	if last, ok := a.lastHash(); ok && b.headers[0] != nil && b.headers[0].ParentHash != last {
		return nil, fmt.Errorf("%w: the chain changed while blocks %d..%d were read", errNode, from, to)
	}
	out := &rangeData{from: from, to: to, headers: append(a.headers, b.headers...), moves: append(a.moves, b.moves...), flows: append(a.flows, b.flows...), failed: a.failed}
	if out.failed == nil {
		out.failed = map[int64]error{}
	}
	for h, e := range b.failed {
		out.failed[h] = e
	}
	return out, nil
}

// fetchOnce reads the headers of [from, to], then the logs, then the
// header of to again: if it is unchanged, the logs belong to the headers'
// chain (a reorg of any block in the range would change the hash of to).
// It returns the headers read so far along with an error.
func (x *Indexer) fetchOnce(ctx context.Context, from, to int64) (*rangeData, error) {
	hs, err := x.headers(ctx, from, to, false)
	if err != nil {
		return nil, err
	}
	d := &rangeData{from: from, to: to, headers: hs}
	for i := 1; i < len(hs); i++ {
		if hs[i].ParentHash != hs[i-1].Hash {
			return d, fmt.Errorf("%w: the chain changed while blocks %d..%d were read (block %d)", errNode, from, to, from+int64(i))
		}
	}
	logs, err := x.logs(ctx, from, to)
	if err != nil {
		return d, err
	}
	again, err := x.headers(ctx, to, to, false)
	if err != nil {
		return d, err
	}
	if again[0].Hash != hs[len(hs)-1].Hash {
		return d, fmt.Errorf("%w: block %d changed from %s to %s while its range was read", errNode, to, hs[len(hs)-1].Hash.Hex(), again[0].Hash.Hex())
	}
	owners := map[[2]common.Hash]string{}
	var bridgeLogs []types.Log
	for i := range logs {
		l := &logs[i]
		h := int64(l.BlockNumber)
		if h < from || h > to || l.BlockHash != hs[h-from].Hash {
			return d, fmt.Errorf("%w: log %d of tx %s is in block %d (%s), not in the range's chain", errNode, l.Index, l.TxHash.Hex(), h, l.BlockHash.Hex())
		}
		if x.cctp != nil && (l.Address == x.cctp.TokenMessenger || l.Address == x.cctp.MessageTransmitter) {
			bridgeLogs = append(bridgeLogs, *l)
		}
		if !x.isTok[l.Address] {
			continue
		}
		m, ok := chainevm.Decode(l)
		if !ok {
			x.log.Debug("log skipped: not a token movement", "height", h, "tx", l.TxHash.Hex(), "log_index", l.Index)
			continue
		}
		if m.Owner != chainevm.OwnerNone {
			owner, err := x.owner(ctx, l.Address, l.BlockHash, owners)
			if err != nil {
				return d, fmt.Errorf("owner of %s at block %d: %w", m.Token, h, err)
			}
			m.SetOwner(owner)
		}
		d.moves = append(d.moves, m)
	}
	if x.cctp != nil {
		d.flows = x.cctp.DecodeCCTP(bridgeLogs)
	}
	return d, nil
}

// headers reads the headers of [from, to] in JSON-RPC batches. A block the
// node does not have is an error unless allowMissing (then its entry is nil).
func (x *Indexer) headers(ctx context.Context, from, to int64, allowMissing bool) ([]*header, error) {
	out := make([]*header, to-from+1)
	step := int64(max(x.HeaderBatch, 1))
	for a := from; a <= to; a += step {
		b := min(to, a+step-1)
		part := out[a-from : b-from+1]
		elems := make([]rpc.BatchElem, len(part))
		err := x.call(ctx, fmt.Sprintf("eth_getBlockByNumber %d..%d", a, b), func(ctx context.Context, ec *ethclient.Client) error {
			for i := range elems {
				part[i] = nil
				elems[i] = rpc.BatchElem{Method: "eth_getBlockByNumber", Args: []any{hexutil.EncodeUint64(uint64(a) + uint64(i)), false}, Result: &part[i]}
			}
			if err := ec.Client().BatchCallContext(ctx, elems); err != nil {
				return err
			}
			for i := range elems {
				h := a + int64(i)
				if elems[i].Error != nil {
					return fmt.Errorf("block %d: %w", h, elems[i].Error)
				}
				if part[i] == nil {
					if allowMissing {
						continue
					}
					return fmt.Errorf("block %d: not found", h)
				}
				if int64(part[i].Number) != h {
					return fmt.Errorf("%w: asked for block %d, got %d", errPermanent, h, part[i].Number)
				}
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// logs reads the token logs of [from, to] with eth_getLogs in sub-ranges of
// the current span, halving it when the node refuses a range as too large
// and growing it back after successes.
func (x *Indexer) logs(ctx context.Context, from, to int64) ([]types.Log, error) {
	var out []types.Log
	for a := from; a <= to; {
		b := min(to, a+x.span.Load()-1)
		var ls []types.Log
		q := ethereum.FilterQuery{FromBlock: big.NewInt(a), ToBlock: big.NewInt(b), Addresses: x.tokens, Topics: x.topics}
		err := x.call(ctx, fmt.Sprintf("eth_getLogs %d..%d", a, b), func(ctx context.Context, ec *ethclient.Client) (err error) {
			ls, err = ec.FilterLogs(ctx, q)
			return err
		})
		if err != nil {
			if !isRangeError(err) {
				return nil, err
			}
			if a == b {
				return nil, fmt.Errorf("%w: eth_getLogs of the single block %d: %w", errPermanent, a, err)
			}
			x.shrink(b - a + 1)
			continue
		}
		out = append(out, ls...)
		x.grow(b - a + 1)
		a = b + 1
	}
	return out, nil
}

// shrink halves the span below a refused range of n blocks.
func (x *Indexer) shrink(n int64) {
	half := max(n/2, 1)
	for {
		cur := x.span.Load()
		if cur <= half || x.span.CompareAndSwap(cur, half) {
			break
		}
	}
	x.log.Debug("eth_getLogs range too large; narrowing", "refused", n, "span", x.span.Load())
}

// grow widens the span by a quarter after a range of n blocks succeeded
// at the full span.
func (x *Indexer) grow(n int64) {
	cur := x.span.Load()
	if n < cur || cur >= x.maxSpan {
		return
	}
	x.span.CompareAndSwap(cur, min(x.maxSpan, cur+max(cur/4, 1)))
}

// owner returns the token's owner() at the block, cached per range.
func (x *Indexer) owner(ctx context.Context, token common.Address, block common.Hash, cache map[[2]common.Hash]string) (string, error) {
	if o, ok := x.owners[token]; ok {
		return o, nil
	}
	key := [2]common.Hash{common.BytesToHash(token.Bytes()), block}
	if o, ok := cache[key]; ok {
		return o, nil
	}
	var ret []byte
	err := x.call(ctx, "eth_call owner()", func(ctx context.Context, ec *ethclient.Client) (err error) {
		ret, err = ec.CallContractAtHash(ctx, ethereum.CallMsg{To: &token, Data: chainevm.OwnerCallData()}, block)
		return err
	})
	if err != nil {
		return "", err
	}
	o, err := chainevm.DecodeOwner(ret)
	if err != nil {
		return "", fmt.Errorf("%w: %w", errPermanent, err)
	}
	cache[key] = o
	return o, nil
}

// call runs one RPC call with a timeout, retrying failures with backoff;
// each failure moves the indexer (every call of it, from then on) to the
// next endpoint, and a call makes at least as many attempts as there are
// endpoints. Every error it returns is the context's, or
// wraps errPermanent or errNode; range errors (isRangeError) are returned
// at once.
func (x *Indexer) call(ctx context.Context, what string, fn func(ctx context.Context, ec *ethclient.Client) error) error {
	delay := x.Retry.Base
	for attempt := 1; ; attempt++ {
		i := x.node.Load()
		cctx, cancel := context.WithTimeout(ctx, x.CallTimeout)
		err := fn(cctx, x.nodes[i])
		cancel()
		if err == nil {
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if isRangeError(err) {
			// Not retried: the caller narrows the range (eth_getLogs) or
			// isolates the block (anything else).
			return fmt.Errorf("%w: %s: %w", errPermanent, what, err)
		}
		if len(x.nodes) > 1 && x.node.CompareAndSwap(i, (i+1)%int32(len(x.nodes))) {
			x.log.Warn("rpc endpoint failed; switching", "call", what, "failed", x.endpoint(int(i)), "next", x.endpoint(int(i)+1), "err", err)
		}
		if attempt >= max(x.Retry.Attempts, len(x.nodes), 1) {
			if errors.Is(err, errPermanent) || errors.Is(err, errNode) {
				return fmt.Errorf("%s: %w", what, err)
			}
			if permanent(err) {
				return fmt.Errorf("%w: %s: %w", errPermanent, what, err)
			}
			return fmt.Errorf("%w: %s: %w", errNode, what, err)
		}
		x.log.Debug("rpc call failed; retrying", "call", what, "attempt", attempt, "err", err)
		if indexer.Sleep(ctx, delay/2+rand.N(delay/2+1)) != nil {
			return ctx.Err()
		}
		delay = min(delay*2, x.Retry.Max)
	}
}

// endpoint names the i-th endpoint (modulo their number) for the logs.
func (x *Indexer) endpoint(i int) string {
	i %= len(x.nodes)
	if i < len(x.cfg.RPC) {
		return x.cfg.RPC[i]
	}
	return fmt.Sprintf("endpoint %d", i)
}

// permanent reports whether the node answered err deterministically: a
// JSON-RPC error object, a 4xx other than 408/429, or a reply that does not
// decode. Everything else (connection errors, 5xx, timeouts) is the node's
// or the network's state.
func permanent(err error) bool {
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		return false
	}
	var he rpc.HTTPError
	if errors.As(err, &he) {
		return he.StatusCode >= 400 && he.StatusCode < 500 && he.StatusCode != http.StatusRequestTimeout && he.StatusCode != http.StatusTooManyRequests
	}
	var re rpc.Error
	if errors.As(err, &re) {
		return !rateLimited(re.Error())
	}
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	return errors.As(err, &se) || errors.As(err, &te)
}

func rateLimited(msg string) bool {
	msg = strings.ToLower(msg)
	return strings.Contains(msg, "rate limit") || strings.Contains(msg, "request rate") || strings.Contains(msg, "too many requests") || strings.Contains(msg, "capacity")
}

// rangeHints are the substrings of providers' eth_getLogs refusals of a
// range that is too wide or returns too much: geth RangeLimit ("exceed
// maximum block range") and response limit ("response too large"), Infura
// ("query returned more than 10000 results"), Alchemy ("Log response size
// exceeded"), QuickNode ("is limited to a 10,000 range"), Ankr and others
// ("block range is too wide", "range too large", "max results").
var rangeHints = []string{
	"more than", "response size", "too large", "too big", "too wide", "range is too", "range limit", "ranges over",
	"max range", "maximum range", "max results", "limited to", "exceed maximum", "exceeds max", "result limit",
	"results limit", "too many results", "too many logs",
}

// isRangeError reports whether err is a node's refusal of a block range as
// too wide or a reply as too large: narrow the range and try again.
func isRangeError(err error) bool {
	if err == nil {
		return false
	}
	var he rpc.HTTPError
	if errors.As(err, &he) && he.StatusCode == http.StatusRequestEntityTooLarge {
		return true
	}
	var re rpc.Error
	if !errors.As(err, &re) {
		return false
	}
	msg := strings.ToLower(re.Error())
	if rateLimited(msg) {
		return false
	}
	for _, h := range rangeHints {
		if strings.Contains(msg, h) {
			return true
		}
	}
	return false
}
