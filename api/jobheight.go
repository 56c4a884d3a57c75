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

// JobHeight is the freshness of an answer read from a report job's tables,
// the one way every group reads it: the last indexed block of chainID at
// or below the job's watermark and its time, which the scheduler records
// with each run (aggregator_jobs.height, block_time), and the time of the
// chain's first indexed block (of a cosmos chain; zero for an EVM one). Rows a run recorded nothing for (written
// before the scheduler kept it) are looked up in the block tables. It
// answers 503 (problem.ErrNotIndexed) while the job has not aggregated a
// block.
func JobHeight(ctx context.Context, db bun.IDB, chainID, job string) (ChainHeight, error) {
	var st struct {
		Height int64      `bun:"height"`
		Time   time.Time  `bun:"time"`
		First  *time.Time `bun:"first"`
	}
	// One primary-key probe and one index probe: this runs for every answer.
	err := db.NewRaw(`SELECT j.height, j.block_time AS time,
			(SELECT time FROM blocks WHERE chain_id = ?0 AND height > 0 ORDER BY height LIMIT 1) AS first
		FROM aggregator_jobs j WHERE j.name = ?1 AND j.height IS NOT NULL`, chainID, job).Scan(ctx, &st)
	if errors.Is(err, sql.ErrNoRows) {
		// Not recorded (yet): the rows were written before the scheduler
		// kept it, or the job has aggregated nothing.
		err = db.NewRaw(`SELECT b.height, b.time,
				(SELECT time FROM blocks WHERE chain_id = ?0 AND height > 0 ORDER BY height LIMIT 1) AS first
			FROM aggregator_jobs j
			JOIN LATERAL (SELECT height, time FROM (
					(SELECT height, time FROM blocks WHERE chain_id = ?0 AND height <= j.watermark ORDER BY height DESC LIMIT 1)
					UNION ALL (SELECT height, time FROM evm_blocks WHERE chain_id = ?0 AND height <= j.watermark ORDER BY height DESC LIMIT 1)) l
				ORDER BY height DESC LIMIT 1) b ON true
			WHERE j.name = ?1`, chainID, job).Scan(ctx, &st)
	}
	if errors.Is(err, sql.ErrNoRows) {
		return ChainHeight{}, fmt.Errorf("chain %s: the %s job has not run yet: %w", chainID, job, problem.ErrNotIndexed)
	}
	if err != nil {
		return ChainHeight{}, fmt.Errorf("freshness of %s: %w", job, err)
	}
	h := ChainHeight{ChainID: chainID, Height: st.Height, Time: st.Time.UTC()}
	if st.First != nil {
		h.First = st.First.UTC()
	}
	return h, nil
}
