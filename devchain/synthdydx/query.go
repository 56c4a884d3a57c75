package synthdydx

import (
	"bytes"
	"fmt"
	"math/big"
	"slices"
	"strings"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/chainlens/chainlens/devchain/replaynode"
)

// pathSubaccountAll is x/subaccounts' list of every subaccount.
const pathSubaccountAll = "/dydxprotocol.subaccounts.Query/SubaccountAll"

// defaultPageLimit is the cosmos-sdk's page size when a request sets none.
const defaultPageLimit = 100

var _ replaynode.Querier = (*Chain)(nil)

// ABCIQuery answers x/subaccounts' SubaccountAll at height (the state after
// that block), page by page in the order of the owners' addresses, with
// dYdX's own message types; every other query is unknown to this chain.
func (c *Chain) ABCIQuery(path string, data []byte, height int64) ([]byte, error) {
	if path != pathSubaccountAll {
		return nil, replaynode.ErrUnknownQuery(path)
	}
	key, limit, err := pageRequest(data)
	if err != nil {
		return nil, &replaynode.QueryError{Code: 2, Codespace: "sdk", Log: "tx parse error: " + err.Error()}
	}
	if height < 1 || height > c.LastHeight() {
		return nil, &replaynode.QueryError{Code: 26, Codespace: "sdk", Log: fmt.Sprintf("height %d is not in the generated chain", height)}
	}
	subs, err := c.subaccountsAt(height)
	if err != nil {
		return nil, err
	}
	// Page from the first owner at or after key.
	i, _ := slices.BinarySearchFunc(subs, string(key), func(s subaccountState, k string) int { return strings.Compare(s.owner, k) })
	page := subs[i:min(i+limit, len(subs))]
	var next []byte
	if i+limit < len(subs) {
		next = []byte(subs[i+limit].owner)
	}
	return c.encodeSubaccounts(page, next)
}

// subaccountState is one owner's subaccount 0 and its open positions.
type subaccountState struct {
	owner string
	quote int64
	pos   map[int]int64
}

// subaccountsAt returns every subaccount with a position or a balance
// after height, by owner.
func (c *Chain) subaccountsAt(height int64) ([]subaccountState, error) {
	var out []subaccountState
	err := c.At(height, func(g *generator) error {
		out = subaccountsOf(g.st)
		return nil
	})
	return out, err
}

// subaccountsOf lists st's subaccounts with a position or a balance, by
// owner.
func subaccountsOf(st *state) []subaccountState {
	var out []subaccountState
	for _, accounts := range [][]*account{st.traders, st.makers} {
		for _, a := range accounts {
			open := map[int]int64{}
			for id, q := range a.pos {
				if q != 0 {
					open[id] = q
				}
			}
			if len(open) == 0 && a.quote == 0 {
				continue
			}
			out = append(out, subaccountState{owner: a.addr, quote: a.quote, pos: open})
		}
	}
	slices.SortFunc(out, func(a, b subaccountState) int { return strings.Compare(a.owner, b.owner) })
	return out
}

// pageRequest reads QueryAllSubaccountRequest{pagination=1
// PageRequest{key=1, limit=3}}.
func pageRequest(data []byte) (key []byte, limit int, err error) {
	limit = defaultPageLimit
	for len(data) > 0 {
		num, typ, n := protowire.ConsumeTag(data)
		if n < 0 {
			return nil, 0, protowire.ParseError(n)
		}
		data = data[n:]
		if num == 1 && typ == protowire.BytesType {
			pr, m := protowire.ConsumeBytes(data)
			if m < 0 {
				return nil, 0, protowire.ParseError(m)
			}
			data = data[m:]
			for len(pr) > 0 {
				pnum, ptyp, k := protowire.ConsumeTag(pr)
				if k < 0 {
					return nil, 0, protowire.ParseError(k)
				}
				pr = pr[k:]
				switch {
				case pnum == 1 && ptyp == protowire.BytesType:
					v, k := protowire.ConsumeBytes(pr)
					if k < 0 {
						return nil, 0, protowire.ParseError(k)
					}
					key, pr = bytes.Clone(v), pr[k:]
				case pnum == 3 && ptyp == protowire.VarintType:
					v, k := protowire.ConsumeVarint(pr)
					if k < 0 {
						return nil, 0, protowire.ParseError(k)
					}
					if v > 0 {
						limit = int(min(v, 1<<20))
					}
					pr = pr[k:]
				default:
					k := protowire.ConsumeFieldValue(pnum, ptyp, pr)
					if k < 0 {
						return nil, 0, protowire.ParseError(k)
					}
					pr = pr[k:]
				}
			}
			continue
		}
		m := protowire.ConsumeFieldValue(num, typ, data)
		if m < 0 {
			return nil, 0, protowire.ParseError(m)
		}
		data = data[m:]
	}
	return key, limit, nil
}

// encodeSubaccounts writes a QuerySubaccountAllResponse with dYdX's message
// types: each Subaccount's id, its USDC asset position (asset 0) and its
// perpetual positions by perpetual id, quantums as SerializableInt (a
// big.Int's gob bytes); next is the next page's key.
func (c *Chain) encodeSubaccounts(subs []subaccountState, next []byte) ([]byte, error) {
	mt, err := c.reg.FindMessageByName("dydxprotocol.subaccounts.QuerySubaccountAllResponse")
	if err != nil {
		return nil, fmt.Errorf("synthdydx: %w", err)
	}
	resp := dynamicpb.NewMessage(mt.Descriptor())
	fields := resp.Descriptor().Fields()
	list := resp.Mutable(fields.ByName("subaccount")).List()
	gob := func(v int64) protoreflect.Value {
		b, _ := big.NewInt(v).GobEncode() // cannot fail for a big.Int
		return protoreflect.ValueOfBytes(b)
	}
	for _, s := range subs {
		m := list.NewElement().Message()
		f := m.Descriptor().Fields()
		id := m.Mutable(f.ByName("id")).Message()
		id.Set(id.Descriptor().Fields().ByName("owner"), protoreflect.ValueOfString(s.owner))
		if s.quote != 0 {
			assets := m.Mutable(f.ByName("asset_positions")).List()
			usdc := assets.NewElement().Message()
			usdc.Set(usdc.Descriptor().Fields().ByName("quantums"), gob(s.quote))
			assets.Append(protoreflect.ValueOfMessage(usdc))
		}
		ids := make([]int, 0, len(s.pos))
		for id := range s.pos {
			ids = append(ids, id)
		}
		slices.Sort(ids)
		perps := m.Mutable(f.ByName("perpetual_positions")).List()
		for _, id := range ids {
			p := perps.NewElement().Message()
			pf := p.Descriptor().Fields()
			p.Set(pf.ByName("perpetual_id"), protoreflect.ValueOfUint32(uint32(id)))
			p.Set(pf.ByName("quantums"), gob(s.pos[id]))
			perps.Append(protoreflect.ValueOfMessage(p))
		}
		list.Append(protoreflect.ValueOfMessage(m))
	}
	if len(next) > 0 {
		pr := resp.Mutable(fields.ByName("pagination")).Message()
		pr.Set(pr.Descriptor().Fields().ByName("next_key"), protoreflect.ValueOfBytes(next))
	}
	b, err := proto.MarshalOptions{Deterministic: true}.Marshal(resp)
	if err != nil {
		return nil, fmt.Errorf("synthdydx: encode SubaccountAll: %w", err)
	}
	return b, nil
}
