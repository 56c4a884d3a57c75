package engagement

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chainlens/chainlens/internal/testdb"
)

// TestSelectionGenericPlanProbes: the generic plan the selection runs with
// (plan_cache_mode = force_generic_plan, see selConn) reaches campaigns
// through index probes from the user's memberships. It once hash-joined
// every campaign_audiences row (the planner takes the address list for 100
// rows), which tripled the decision time at 10,000 campaigns.
func TestSelectionGenericPlanProbes(t *testing.T) {
	ctx := context.Background()
	db, _ := testdb.New(t)
	for _, q := range []string{
		`INSERT INTO audiences (id, name, kind) SELECT g, 'a' || g, 'addresses' FROM generate_series(1, 1000) g`,
		`INSERT INTO audiences (id, name, kind) VALUES (1001, 'everyone', 'global')`,
		`INSERT INTO audience_members (audience_id, address) SELECT a, lpad(to_hex(a * 100 + k), 40, '0') FROM generate_series(1, 1000) a, generate_series(0, 99) k`,
		`INSERT INTO campaigns (id, owner, name, start_date, end_date, priority)
		 SELECT g, 'o', 'c' || g, now() - interval '1 day', now() + interval '30 days', g % 7 FROM generate_series(1, 10100) g`,
		`INSERT INTO campaign_audiences (campaign_id, audience_id) SELECT g, CASE WHEN g > 10000 THEN 1001 ELSE 1 + (g - 1) % 1000 END FROM generate_series(1, 10100) g`,
		`INSERT INTO creatives (campaign_id, position_id, title, url) SELECT g, 'wallet_home', 't', 'https://x.example/' FROM generate_series(1, 10100) g`,
		`ANALYZE`,
	} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	conn, err := db.DB.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	for _, q := range []string{"SET plan_cache_mode = force_generic_plan", "PREPARE sel AS " + selectQuery} {
		if _, err := conn.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	addr := fmt.Sprintf("%040x", 5*100+3)
	now := time.Now().UTC()
	rows, err := conn.QueryContext(ctx, fmt.Sprintf(`EXPLAIN (COSTS OFF) EXECUTE sel('["%s"]', '["0x%s"]', false, 'global', '%s', 'wallet_home', '%s', '%s', NULL)`,
		addr, addr, addr, now.Format(time.RFC3339Nano), now.Truncate(24*time.Hour).Format(time.RFC3339)))
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var plan strings.Builder
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			t.Fatal(err)
		}
		plan.WriteString(line + "\n")
	}
	for _, bad := range []string{"Seq Scan on campaign_audiences", "Seq Scan on campaigns", "Seq Scan on audience_members", "Seq Scan on creatives"} {
		if strings.Contains(plan.String(), bad) {
			t.Errorf("generic selection plan has %q:\n%s", bad, plan.String())
		}
	}
}

// TestSelectionSurvivesLostConnections: the selection's own connections
// are killed while idle (as by a Postgres restart); the next decisions,
// more at once than there are connections, all succeed on new ones and
// none waits forever for a slot.
func TestSelectionSurvivesLostConnections(t *testing.T) {
	ctx := context.Background()
	db, _ := testdb.New(t)
	for _, q := range []string{
		`INSERT INTO audiences (id, name, kind) VALUES (1, 'everyone', 'global')`,
		`INSERT INTO campaigns (id, owner, name, start_date, end_date) VALUES (1, 'o', 'c', now() - interval '1 day', now() + interval '1 day')`,
		`INSERT INTO campaign_audiences (campaign_id, audience_id) VALUES (1, 1)`,
		`INSERT INTO creatives (campaign_id, position_id, title, url) VALUES (1, 'wallet_home', 't', 'https://x.example/')`,
	} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	sel := NewSelector(db)
	decide := func() error {
		out, err := sel.Select(ctx, Query{PositionID: "wallet_home", Addresses: []string{Global}}, time.Now())
		if err == nil && len(out) != 1 {
			err = fmt.Errorf("got %d campaigns, want 1", len(out))
		}
		return err
	}
	// Open all the selection's connections.
	errs := make(chan error, 3*selectorConns)
	for range selectorConns {
		go func() { errs <- decide() }()
	}
	for range selectorConns {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	var killed int
	if err := db.NewRaw(`SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
		WHERE datname = current_database() AND pid <> pg_backend_pid()`).Scan(ctx, &killed); err != nil {
		t.Fatal(err)
	}
	if killed < selectorConns {
		t.Fatalf("killed %d connections; the selection alone holds %d", killed, selectorConns)
	}
	ctx2, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	for range 3 * selectorConns {
		go func() { errs <- decide() }()
	}
	for range 3 * selectorConns {
		select {
		case err := <-errs:
			if err != nil {
				t.Errorf("decision after losing %d connections: %v", killed, err)
			}
		case <-ctx2.Done():
			t.Fatal("decisions still waiting for a selection slot")
		}
	}
}
