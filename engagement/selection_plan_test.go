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
