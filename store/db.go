// Package store opens the Postgres database through bun, applies the
// migrations and holds the helpers shared by the indexer, the aggregators
// and the API.
package store

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"
	"github.com/uptrace/bun/driver/pgdriver"
)

// utcSessions makes every session UTC, keeping the URL's other connection
// parameters: date_trunc, date_bin and interval arithmetic on timestamptz
// follow the session's time zone, which is otherwise the server's or the
// database's, and every time bucket is a UTC one.
func utcSessions(c *pgdriver.Config) {
	params := map[string]any{"TimeZone": "UTC"}
	for k, v := range c.ConnParams {
		if k != "TimeZone" {
			params[k] = v
		}
	}
	c.ConnParams = params
}

// OpenLazy is Open without the first connection: the pool connects when
// first used (a replica that is down when a server starts).
func OpenLazy(url string, maxConns int) (*bun.DB, error) {
	return open(url, maxConns)
}

// Open connects to the database at url with a pool of maxConns connections
// and checks that it answers. url may list several hosts with libpq's
// target_session_attrs (see hostsConnector), so that new connections find
// the primary after a failover.
func Open(ctx context.Context, url string, maxConns int) (*bun.DB, error) {
	db, err := open(url, maxConns)
	if err != nil {
		return nil, err
	}
	pingCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := db.PingContext(pingCtx); err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("connect to database: %w", err)
	}
	return db, nil
}

func open(url string, maxConns int) (*bun.DB, error) {
	connector, err := newConnector(url,
		pgdriver.WithApplicationName("chainlens"),
		utcSessions,
		pgdriver.WithTimeout(30*time.Second),
		// Bulk block writes and 100 MB block_results rows must not be cut off.
		pgdriver.WithReadTimeout(5*time.Minute),
		pgdriver.WithWriteTimeout(5*time.Minute),
	)
	if err != nil {
		return nil, err
	}
	sqldb := sql.OpenDB(connector)
	if maxConns < 1 {
		maxConns = 10
	}
	sqldb.SetMaxOpenConns(maxConns)
	sqldb.SetMaxIdleConns(maxConns)
	sqldb.SetConnMaxIdleTime(5 * time.Minute)
	return bun.NewDB(sqldb, pgdialect.New()), nil
}
