package api

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/uptrace/bun"

	"github.com/chainlens/chainlens/api/problem"
)

// JobHeight is how far a report job has aggregated chainID: the last
// indexed block at or below the job's watermark, and its time (and the
// time of the chain's first indexed block). It answers
// 503 (problem.ErrNotIndexed) while the job has not aggregated a block.
func JobHeight(ctx context.Context, db bun.IDB, chainID, job string) (ChainHeight, error) {
	var st struct {
		Height int64     `bun:"height"`
		Time   time.Time `bun:"time"`
		First  time.Time `bun:"first"`
	}
	err := db.NewRaw(`SELECT b.height, b.time,
			(SELECT time FROM blocks WHERE chain_id = ?0 AND height > 0 ORDER BY height LIMIT 1) AS first
		FROM aggregator_jobs j
		JOIN LATERAL (SELECT height, time FROM blocks WHERE chain_id = ?0 AND height <= j.watermark ORDER BY height DESC LIMIT 1) b ON true
		WHERE j.name = ?1`, chainID, job).Scan(ctx, &st)
	if errors.Is(err, sql.ErrNoRows) {
		return ChainHeight{}, fmt.Errorf("chain %s: the %s job has not run yet: %w", chainID, job, problem.ErrNotIndexed)
	}
	if err != nil {
		return ChainHeight{}, fmt.Errorf("freshness of %s: %w", job, err)
	}
	return ChainHeight{ChainID: chainID, Height: st.Height, Time: st.Time.UTC(), First: st.First.UTC()}, nil
}
