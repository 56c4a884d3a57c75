package dex

import (
	"context"
	"time"

	"cosmossdk.io/math"
)

// PortfolioValues is an address's portfolio value at each of ends (all at
// or after from), read as an answer valued from from on reads it.
func (s *Service) PortfolioValues(ctx context.Context, addr string, from time.Time, ends []time.Time) ([]math.LegacyDec, error) {
	p, err := s.loadPortfolio(ctx, addr, from)
	if err != nil {
		return nil, err
	}
	out := make([]math.LegacyDec, len(ends))
	for i, end := range ends {
		if out[i], err = p.valueAt(end); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// EndOfTime is the bound of the latest state.
var EndOfTime = endOfTime
