package dydx

import (
	"fmt"
	"math/big"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/chainlens/chainlens/chains"
	"github.com/chainlens/chainlens/chains/wire"
)

// PathSubaccountAll lists every subaccount with its asset and perpetual
// positions (x/subaccounts, paginated).
const PathSubaccountAll = "/dydxprotocol.subaccounts.Query/SubaccountAll"

// openingPositionsTable holds the perpetual positions at the height before
// a late start.
var openingPositionsTable = chains.Table{Name: "dydx_opening_positions", Columns: []string{
	"chain_id", "height", "address", "subaccount_number", "perpetual_id", "quantums",
}}

var _ chains.OpeningStateAdapter = (*Adapter)(nil)

// OpeningQueries reads the subaccounts: the fills after a late start move
// positions opened before it.
func (a *Adapter) OpeningQueries() []chains.OpeningQuery {
	return []chains.OpeningQuery{{Path: PathSubaccountAll}}
}

// OpeningTables lists dydx_opening_positions.
func (a *Adapter) OpeningTables() []chains.Table { return []chains.Table{openingPositionsTable} }

// OpeningRows appends one dydx_opening_positions row per open perpetual
// position of each Subaccount item.
func (a *Adapter) OpeningRows(chainID string, height int64, query, _ string, items [][]byte, out *chains.Rows) error {
	if query != PathSubaccountAll {
		return fmt.Errorf("dydx: no opening query %s", query)
	}
	for _, b := range items {
		s, err := decodeSubaccount(b)
		if err != nil {
			return fmt.Errorf("subaccount: %w", err)
		}
		for _, p := range s.positions {
			if p.quantums.Sign() == 0 {
				continue
			}
			out.Add(openingPositionsTable.Name, chainID, height, s.owner, s.number, p.perpetual, p.quantums.String())
		}
	}
	return nil
}

// subaccount is a Subaccount{id=1 SubaccountId{owner=1, number=2},
// perpetual_positions=3}; asset positions (2) are not read.
type subaccount struct {
	owner     string
	number    int64
	positions []perpetualPosition
}

// perpetualPosition is a PerpetualPosition{perpetual_id=1, quantums=2}:
// quantums is a dtypes.SerializableInt, a big.Int's gob bytes.
type perpetualPosition struct {
	perpetual int64
	quantums  *big.Int
}

func decodeSubaccount(b []byte) (subaccount, error) {
	var s subaccount
	fs, err := wire.Fields(b)
	if err != nil {
		return s, err
	}
	for _, f := range fs {
		switch {
		case f.Num == 1 && f.Type == protowire.BytesType:
			ids, err := wire.Fields(f.Bytes)
			if err != nil {
				return s, fmt.Errorf("id: %w", err)
			}
			for _, id := range ids {
				switch {
				case id.Num == 1 && id.Type == protowire.BytesType:
					s.owner = string(id.Bytes)
				case id.Num == 2 && id.Type == protowire.VarintType:
					if s.number, err = uint32Field("number", id.Value); err != nil {
						return s, err
					}
				}
			}
		case f.Num == 3 && f.Type == protowire.BytesType:
			p, err := decodePerpetualPosition(f.Bytes)
			if err != nil {
				return s, fmt.Errorf("perpetual position: %w", err)
			}
			s.positions = append(s.positions, p)
		}
	}
	if s.owner == "" {
		return s, fmt.Errorf("no owner")
	}
	return s, nil
}

func decodePerpetualPosition(b []byte) (perpetualPosition, error) {
	p := perpetualPosition{quantums: new(big.Int)}
	fs, err := wire.Fields(b)
	if err != nil {
		return p, err
	}
	for _, f := range fs {
		switch {
		case f.Num == 1 && f.Type == protowire.VarintType:
			if p.perpetual, err = uint32Field("perpetual_id", f.Value); err != nil {
				return p, err
			}
		case f.Num == 2 && f.Type == protowire.BytesType:
			// A zero SerializableInt is written as no bytes at all.
			if len(f.Bytes) > 0 {
				if err := p.quantums.GobDecode(f.Bytes); err != nil {
					return p, fmt.Errorf("quantums: %w", err)
				}
			}
		}
	}
	return p, nil
}
