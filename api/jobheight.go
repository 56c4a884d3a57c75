package api

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/uptrace/bun"

	"github.com/chainlens/chainlens/api/problem"
)

// JobHeight is the freshness of an answer read from the tables of report
// jobs, the one way every group reads it: the last indexed block of
// chainID at or below the watermark of the least advanced of the jobs and
// its time, which the scheduler records with each run
// (aggregator_jobs.height, block_time), and the time of the chain's first
// indexed block (of a cosmos chain; zero for an EVM one). Rows a run
// recorded nothing for (written before the scheduler kept it) are looked
// up in the block tables. It answers 503 (problem.ErrNotIndexed) while one
// of the jobs has not aggregated a block.
func JobHeight(ctx context.Context, db bun.IDB, chainID string, jobs ...string) (ChainHeight, error) {
	if len(jobs) == 0 {
		return ChainHeight{}, errors.New("freshness: no job named")
	}
	var least ChainHeight
	// One statement for every job: this runs for every answer.
	var rows []jobReach
	if err := db.NewRaw(`SELECT j.name, j.height, j.block_time AS time,
			(SELECT time FROM blocks WHERE chain_id = ?0 AND height > 0 ORDER BY height LIMIT 1) AS first
		FROM aggregator_jobs j WHERE j.name IN (?1) AND j.height IS NOT NULL`, chainID, bun.List(jobs)).Scan(ctx, &rows); err != nil {
		return ChainHeight{}, fmt.Errorf("freshness of %v: %w", jobs, err)
	}
	for _, job := range jobs {
		i := slices.IndexFunc(rows, func(r jobReach) bool { return r.Name == job })
		var h ChainHeight
		if i >= 0 {
			h = ChainHeight{ChainID: chainID, Height: rows[i].Height, Time: rows[i].Time.UTC()}
			if rows[i].First != nil {
				h.First = rows[i].First.UTC()
			}
		} else {
			var err error
			if h, err = unrecordedJobHeight(ctx, db, chainID, job); err != nil {
				return ChainHeight{}, err
			}
		}
		if least.ChainID == "" || h.Height < least.Height {
			least = h
		}
	}
	return least, nil
}

// jobReach is what the scheduler recorded of a job's last run.
type jobReach struct {
	Name   string     `bun:"name"`
	Height int64      `bun:"height"`
	Time   time.Time  `bun:"time"`
	First  *time.Time `bun:"first"`
}

// unrecordedJobHeight is JobHeight of a job whose runs recorded no height:
// the rows were written before the scheduler kept it, or the job has
// aggregated nothing.
func unrecordedJobHeight(ctx context.Context, db bun.IDB, chainID, job string) (ChainHeight, error) {
	var st struct {
		Height int64      `bun:"height"`
		Time   time.Time  `bun:"time"`
		First  *time.Time `bun:"first"`
	}
	err := db.NewRaw(`SELECT b.height, b.time,
			(SELECT time FROM blocks WHERE chain_id = ?0 AND height > 0 ORDER BY height LIMIT 1) AS first
		FROM aggregator_jobs j
		JOIN LATERAL (SELECT height, time FROM block_headers WHERE chain_id = ?0 AND height <= j.watermark ORDER BY height DESC LIMIT 1) b ON true
		WHERE j.name = ?1`, chainID, job).Scan(ctx, &st)
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
