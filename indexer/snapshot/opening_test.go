package snapshot_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/chainlens/chainlens/chains"
	"github.com/chainlens/chainlens/indexer"
	"github.com/chainlens/chainlens/indexer/cometbft"
	"github.com/chainlens/chainlens/indexer/snapshot"
)

// storeNode answers abci_query as a node would: answer(path, data, height)
// per call, each call recorded.
type storeNode struct {
	answer func(path string, data []byte, height int64) ([]byte, error)
	calls  []string
}

func (n *storeNode) ABCIQuery(_ context.Context, path string, data []byte, height int64) ([]byte, error) {
	n.calls = append(n.calls, fmt.Sprintf("%s %x @%d", path, data, height))
	return n.answer(path, data, height)
}

// pairs encodes a store read's answer: Pairs{pairs=1 Pair{key=1, value=2}}.
func pairs(kvs ...string) []byte {
	var out []byte
	for i := 0; i+1 < len(kvs); i += 2 {
		var p []byte
		p = protowire.AppendTag(p, 1, protowire.BytesType)
		p = protowire.AppendBytes(p, []byte(kvs[i]))
		p = protowire.AppendTag(p, 2, protowire.BytesType)
		p = protowire.AppendBytes(p, []byte(kvs[i+1]))
		out = protowire.AppendTag(out, 1, protowire.BytesType)
		out = protowire.AppendBytes(out, p)
	}
	return out
}

// TestOpeningPageReads: what BankState asks the node for each kind of
// opening query, and how it reads the answers. A whole gRPC query sends
// an empty request and is one page; a store read first reads the same
// store at a height no node has (1<<40 past the height), and trusts the
// node with the height only when that fails with the node's refusal;
// pruned state is indexer.ErrStateUnavailable, no answer at all is not.
// An Each query's read sends its request; one the module refuses makes
// the query unavailable (asked again, it would be refused forever). A
// store key read is one read at the height, its value the one item.
func TestOpeningPageReads(t *testing.T) {
	const height = 19
	const far = height + 1<<40
	store := chains.OpeningQuery{Path: "/store/concentratedliquidity/subspace", Prefix: []byte{0x08}}
	whole := chains.OpeningQuery{Path: "/osmosis.poolmanager.v1beta1.Query/AllPools", Whole: true}
	each := chains.OpeningQuery{Path: "/osmosis.concentratedliquidity.v1beta1.Query/LiquidityNetInDirection", Whole: true, Each: &chains.OpeningEach{}}
	key := chains.OpeningQuery{Path: "/store/concentratedliquidity/key", Each: &chains.OpeningEach{}}
	one := func(item string) []byte {
		return append(protowire.AppendTag(nil, 1, protowire.BytesType), protowire.AppendBytes(nil, []byte(item))...)
	}
	honest := func(path string, data []byte, h int64) ([]byte, error) {
		switch {
		case h != height:
			return nil, errors.New("cometbft abci_query: version does not exist")
		case path == whole.Path:
			return append(protowire.AppendTag(nil, 1, protowire.BytesType), protowire.AppendBytes(nil, []byte("pool"))...), nil
		}
		return pairs("\x081", "one", "\x0812", "twelve"), nil
	}
	for _, c := range []struct {
		name        string
		q           chains.OpeningQuery
		req         chains.OpeningRequest
		answer      func(string, []byte, int64) ([]byte, error)
		calls       []string
		items       string
		unavailable bool // the error is indexer.ErrStateUnavailable
		err         string
	}{
		{"a whole query", whole, chains.OpeningRequest{}, honest, []string{"/osmosis.poolmanager.v1beta1.Query/AllPools  @19"}, "[pool]", false, ""},
		{"a store read", store, chains.OpeningRequest{}, honest,
			[]string{fmt.Sprintf("%s 08ffffffffffffffff @%d", store.Path, int64(far)), store.Path + " 08 @19"}, "[0831=one 083132=twelve]", false, ""},
		{"a node that reads the store at its latest state", store, chains.OpeningRequest{}, func(path string, data []byte, h int64) ([]byte, error) {
			return pairs(), nil // nothing under the probe's prefix, at any height
		}, []string{fmt.Sprintf("%s 08ffffffffffffffff @%d", store.Path, int64(far))}, "[]", true,
			"the node reads the store at its latest state whatever the height asked"},
		{"pruned", store, chains.OpeningRequest{}, func(path string, data []byte, h int64) ([]byte, error) {
			return nil, errors.New("cometbft abci_query: version does not exist")
		}, []string{fmt.Sprintf("%s 08ffffffffffffffff @%d", store.Path, int64(far)), store.Path + " 08 @19"}, "[]", true, "version does not exist"},
		{"no answer to the probe", store, chains.OpeningRequest{}, func(path string, data []byte, h int64) ([]byte, error) {
			return nil, &net.OpError{Op: "dial", Err: errors.New("connection refused")}
		}, []string{fmt.Sprintf("%s 08ffffffffffffffff @%d", store.Path, int64(far))}, "[]", false, "probe the store's versions"},
		{"a key under another prefix", store, chains.OpeningRequest{}, func(path string, data []byte, h int64) ([]byte, error) {
			if h != height {
				return nil, errors.New("version does not exist")
			}
			return pairs("\x091", "one"), nil
		}, []string{fmt.Sprintf("%s 08ffffffffffffffff @%d", store.Path, int64(far)), store.Path + " 08 @19"}, "[]", false, "key 0931 is not under the prefix 08"},
		{"an Each read", each, chains.OpeningRequest{Key: "5/0", Data: []byte{0x08, 0x05}}, func(path string, data []byte, h int64) ([]byte, error) {
			return one("tick"), nil
		}, []string{each.Path + " 0805 @19"}, "[tick]", false, ""},
		{"an Each read the module refuses", each, chains.OpeningRequest{Key: "5/0", Data: []byte{0x08, 0x05}}, func(path string, data []byte, h int64) ([]byte, error) {
			return nil, &cometbft.QueryRefused{Path: path, Height: h, Code: 1, Log: "pool not found"}
		}, []string{each.Path + " 0805 @19"}, "[]", true, "5/0"},
		{"a store key read", key, chains.OpeningRequest{Key: "5/-1", Data: []byte{0x01, 0x05}}, func(path string, data []byte, h int64) ([]byte, error) {
			return []byte("record"), nil
		}, []string{key.Path + " 0105 @19"}, "[record]", false, ""},
		{"a store key not set", key, chains.OpeningRequest{Key: "5/-1", Data: []byte{0x01, 0x05}}, func(path string, data []byte, h int64) ([]byte, error) {
			return nil, nil
		}, []string{key.Path + " 0105 @19"}, "[]", false, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			n := &storeNode{answer: c.answer}
			items, next, err := snapshot.BankState{Q: n}.OpeningPage(context.Background(), height, c.q, c.req, nil)
			switch {
			case c.err == "" && err != nil:
				t.Fatal(err)
			case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
				t.Fatalf("err = %v, want %q", err, c.err)
			case errors.Is(err, indexer.ErrStateUnavailable) != c.unavailable:
				t.Errorf("err = %v: unavailable %v, want %v", err, !c.unavailable, c.unavailable)
			}
			// A store read's items are pairs: key (hex) = value.
			got := []string{}
			for _, it := range items {
				if c.q.Prefix == nil {
					got = append(got, string(it))
					continue
				}
				k, n := protowire.ConsumeBytes(it[1:])
				v, _ := protowire.ConsumeBytes(it[1+n+1:])
				got = append(got, fmt.Sprintf("%x=%s", k, v))
			}
			if s := fmt.Sprint(got); s != c.items {
				t.Errorf("items %s, want %s", s, c.items)
			}
			if len(next) != 0 {
				t.Errorf("next page %x, want none", next)
			}
			if fmt.Sprint(n.calls) != fmt.Sprint(c.calls) {
				t.Errorf("asked %q, want %q", n.calls, c.calls)
			}
		})
	}
}
