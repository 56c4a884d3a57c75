package golden_test

import (
	"context"
	"testing"

	"github.com/uptrace/bun"

	"github.com/chainlens/chainlens/aggregator"
	"github.com/chainlens/chainlens/config"
	"github.com/chainlens/chainlens/internal/apitest"
	"github.com/chainlens/chainlens/internal/app"
	"github.com/chainlens/chainlens/internal/testdb"
)

// noneType matches no message or event: an include list of it alone keeps
// none.
const noneType = "chainlens.none"

// Every recording indexed with raw filters that keep only the events and
// messages the jobs declare they read (aggregator.RawInputs) answers every
// operation exactly as with everything kept: the declarations are complete,
// so what Starved reports for a filter is all it starves.
func TestRawFiltersKeepingWhatJobsReadChangeNoAnswer(t *testing.T) {
	if testing.Short() {
		t.Skip("indexes every recording")
	}
	cfg := localConfig(t)
	keep := map[string]*config.RawFilter{}
	for _, j := range app.Jobs(cfg) {
		rr, ok := j.(aggregator.RawReader)
		if !ok {
			continue
		}
		in := rr.RawInputs()
		f := keep[in.ChainID]
		if f == nil {
			f = &config.RawFilter{Messages: config.TypeFilter{Include: []string{noneType}}, Events: config.TypeFilter{Include: []string{noneType}}}
			keep[in.ChainID] = f
		}
		f.Events.Include = append(f.Events.Include, in.Events...)
		f.Messages.Include = append(f.Messages.Include, in.Messages...)
	}
	for i, ch := range cfg.Chains {
		if ch.Kind == "evm" {
			continue
		}
		f := keep[ch.ID]
		if f == nil {
			f = &config.RawFilter{Messages: config.TypeFilter{Include: []string{noneType}}, Events: config.TypeFilter{Include: []string{noneType}}}
		}
		cfg.Chains[i].Raw = f
	}
	db := testdb.NewFrom(t, "golden-raw-filtered", func(db *bun.DB) { indexInto(t, db, cfg) })

	// The filters dropped most raw rows.
	var kept, all int64
	full, _ := indexed(t)
	ctx := context.Background()
	if err := db.NewRaw("SELECT count(*) FROM events").Scan(ctx, &kept); err != nil {
		t.Fatal(err)
	}
	if err := full.NewRaw("SELECT count(*) FROM events").Scan(ctx, &all); err != nil {
		t.Fatal(err)
	}
	if kept == 0 || kept*10 > all {
		t.Fatalf("%d of %d events kept: the filters should keep only the few the jobs read", kept, all)
	}
	// An address row goes with its message.
	var orphans int64
	if err := db.NewRaw(`SELECT count(*) FROM message_addresses a WHERE NOT EXISTS (SELECT 1 FROM messages m
		WHERE m.chain_id = a.chain_id AND m.height = a.height AND m.tx_index = a.tx_index AND m.msg_index = a.msg_index)`).Scan(ctx, &orphans); err != nil || orphans != 0 {
		t.Fatalf("%d address rows without their message (%v)", orphans, err)
	}
	now := clockAfter(t, db)
	srv := apitest.Serve(t, db, cfg, now)
	compare(t, srv, readLines(t, answersFile), answers(t, srv, cfg))
}
