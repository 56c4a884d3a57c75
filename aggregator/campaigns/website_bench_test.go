package campaigns_test

import (
	"context"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"github.com/chainlens/chainlens/aggregator"
	"github.com/chainlens/chainlens/aggregator/campaigns"
	"github.com/chainlens/chainlens/config"
	"github.com/chainlens/chainlens/internal/testdb"
)

// BenchmarkWebsiteAttribution attributes batches of 10,000 anonymous SDK
// events with 10,000 active campaigns (an event goal each, 100 event
// names), 1,000,000 wallets that each saw one campaign, and an identity
// graph of 1,000,000 anonymous ids linked to them (identities=0: the same
// without the graph, so nothing resolves): each event's visitor is
// resolved through the graph to its wallet, whose views of the campaigns
// with a goal of the event's name decide the conversion. In the same run
// it inserts the same events raw into an empty copy of the table, the
// ceiling the job's throughput is compared to (x_raw_insert).
//
//	go test -run '^$' -bench BenchmarkWebsiteAttribution -benchtime 3x ./aggregator/campaigns/
func BenchmarkWebsiteAttribution(b *testing.B) {
	const campaignsN, wallets, batch = 10_000, 1_000_000, 10_000
	for _, identities := range []int{0, wallets} {
		b.Run(fmt.Sprintf("identities=%d", identities), func(b *testing.B) {
			ctx := context.Background()
			db := testdb.NewFrom(b, fmt.Sprintf("website-bench-%d", identities), func(db *bun.DB) {
				setup := []string{
					`INSERT INTO audiences (id, name, kind) VALUES (1, 'everyone', 'global')`,
					`INSERT INTO campaigns (id, owner, name, start_date, end_date, attribution_window_s)
					 SELECT g, 'o', 'c' || g, now() - interval '30 days', now() + interval '30 days', 86400 * 30 FROM generate_series(1, 10000) g`,
					`INSERT INTO campaign_audiences (campaign_id, audience_id) SELECT g, 1 FROM generate_series(1, 10000) g`,
					`INSERT INTO campaign_goals (campaign_id, kind, event_name) SELECT g, 'event', 'goal_' || (g % 100) FROM generate_series(1, 10000) g`,
					// Wallet w (20 bytes, hex of w) saw campaign 1 + w % 10000 a day ago.
					`INSERT INTO impressions (campaign_id, audience_id, position_id, address, address_norm, shown_at)
					 SELECT 1 + w % 10000, 1, 'p', lpad(to_hex(w), 40, '0'), lpad(to_hex(w), 40, '0'), now() - interval '1 day'
					 FROM generate_series(1, 1000000) w`,
					fmt.Sprintf(`INSERT INTO identity_links (anonymous_id, identity_norm, first_seen, last_seen)
					 SELECT 'anon-' || w, lpad(to_hex(w), 40, '0'), now() - interval '2 days', now() - interval '2 days' FROM generate_series(1, %d) w`, identities),
					`SELECT setval('campaigns_id_seq', 10000)`, `SELECT setval('audiences_id_seq', 1)`,
					`CREATE TABLE tracked_events_copy (LIKE tracked_events INCLUDING ALL)`,
					`VACUUM (ANALYZE)`,
				}
				for _, q := range setup {
					if _, err := db.ExecContext(ctx, q); err != nil {
						b.Fatalf("%s: %v", q, err)
					}
				}
			})
			now := time.Now()
			sched, err := aggregator.New(db, config.Aggregator{}, slog.New(slog.DiscardHandler), nil,
				campaigns.Website{Now: func() time.Time { return now }, Batch: batch})
			if err != nil {
				b.Fatal(err)
			}
			// Event i of a batch: visitor anon-w (w spread over the graph),
			// named after the goal of the campaign w saw, so it converts
			// when w resolves.
			events := func(table string, from int) string {
				return fmt.Sprintf(`INSERT INTO %s (id, source, name, identity_type, identity_id, anonymous_id, timestamp, received_at, dedupe_key)
					SELECT 'evt_' || i, 'sdk', 'goal_' || ((1 + w %% 10000) %% 100), 'anonymous', '', 'anon-' || w, now() - interval '1 hour', now(), 'k' || i
					FROM (SELECT i, 1 + (i * 7919) %% 1000000 AS w FROM generate_series(%d, %d) i) s`, table, from, from+batch-1)
			}
			var job, copyTime time.Duration
			converted := 0
			for i := 0; b.Loop(); i++ {
				if _, err := db.ExecContext(ctx, events("tracked_events", i*batch)); err != nil {
					b.Fatal(err)
				}
				start := time.Now()
				if err := sched.RunOnce(ctx); err != nil {
					b.Fatal(err)
				}
				job += time.Since(start)
				var pending, conv int
				if err := db.NewRaw(`SELECT (SELECT count(*) FROM tracked_events WHERE attributed_at IS NULL), (SELECT count(*) FROM conversions)`).
					Scan(ctx, &pending, &conv); err != nil {
					b.Fatal(err)
				}
				if pending != 0 {
					b.Fatalf("%d events left unattributed", pending)
				}
				converted = conv
				start = time.Now()
				if _, err := db.ExecContext(ctx, events("tracked_events_copy", i*batch)); err != nil {
					b.Fatal(err)
				}
				copyTime += time.Since(start)
			}
			n := float64(b.N * batch)
			b.ReportMetric(n/job.Seconds(), "events/s")
			b.ReportMetric(float64(converted)/float64(b.N*batch), "converted/event")
			b.ReportMetric(copyTime.Seconds()/job.Seconds(), "x_raw_insert")
		})
	}
}
