package indexer

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/chainlens/chainlens/config"
	"github.com/chainlens/chainlens/internal/testdb"
)

// scripted is a Family whose node answers as a script says: the loop's
// own rules (retry, give up, stop at the target, move back at the tip)
// are what is tested; both real families run it against real nodes in
// the other tests of this package and of indexer/evm.
type scripted struct {
	latest      int64
	tipErrs     []error // answered by Tip in turn, then the tip
	catchUpErrs []error // answered by CatchUp in turn (indexing nothing), then it indexes
	atTip       []int64 // next heights AtTip moves back to, in turn
	idle        func()  // called by AtTip once it moves no more
	calls       []string
}

func (s *scripted) Start(context.Context) (int64, error) { return 1, nil }

func (s *scripted) Tip(context.Context) (Tip, error) {
	s.calls = append(s.calls, "tip")
	if len(s.tipErrs) > 0 {
		err := s.tipErrs[0]
		s.tipErrs = s.tipErrs[1:]
		return Tip{}, err
	}
	return Tip{Latest: s.latest, Target: s.latest}, nil
}

func (s *scripted) CatchUp(_ context.Context, next, target int64, _ Tip) (int64, error) {
	if len(s.catchUpErrs) > 0 {
		err := s.catchUpErrs[0]
		s.catchUpErrs = s.catchUpErrs[1:]
		s.calls = append(s.calls, fmt.Sprintf("catch up %d fails", next))
		return next, err
	}
	s.calls = append(s.calls, fmt.Sprintf("catch up %d-%d", next, target))
	return target + 1, nil
}

func (s *scripted) RetryDeadLetters(context.Context, Tip, bool) error { return nil }

func (s *scripted) AtTip(_ context.Context, next int64) (int64, error) {
	if len(s.atTip) > 0 {
		n := s.atTip[0]
		s.atTip = s.atTip[1:]
		s.calls = append(s.calls, fmt.Sprintf("back to %d", n))
		return n, nil
	}
	if s.idle != nil {
		s.idle()
	}
	return next, nil
}

// TestFollow: the run loop every family shares retries what the node
// fails (with backoff, until GiveUpAfter), ends on any other error, stops
// at its target height, and indexes again from where AtTip moves it.
func TestFollow(t *testing.T) {
	t.Parallel()
	unavailable := fmt.Errorf("%w: connection refused", ErrNodeUnavailable)
	tooMany := fmt.Errorf("commit: %w", syscall.ECONNREFUSED)
	for _, c := range []struct {
		name    string
		fam     *scripted
		until   int64
		wantErr string
		want    string // the calls
	}{
		{"catches up to the target", &scripted{latest: 10}, 5, "", "tip, catch up 1-5"},
		{"retries a node that does not answer", &scripted{latest: 3, tipErrs: []error{unavailable, unavailable}}, 3, "",
			"tip, tip, tip, catch up 1-3"},
		{"gives up on a node that never answers", &scripted{latest: 3, tipErrs: []error{unavailable, unavailable, unavailable, unavailable, unavailable}}, 3,
			"indexer c1: no node answered for 20ms: node unavailable: connection refused", ""},
		{"another failure ends the run", &scripted{latest: 3, tipErrs: []error{errors.New("the node serves chain x")}}, 3,
			"the node serves chain x", "tip"},
		{"retries blocks that could not be read", &scripted{latest: 3, catchUpErrs: []error{unavailable}}, 3, "",
			"tip, catch up 1 fails, tip, catch up 1-3"},
		{"gives up on blocks that are never read", &scripted{latest: 3, catchUpErrs: []error{unavailable, unavailable, unavailable, unavailable, unavailable}}, 3,
			"indexer c1: blocks from 1 could not be read for 20ms: node unavailable: connection refused", ""},
		{"a database failure while indexing ends the run", &scripted{latest: 3, catchUpErrs: []error{errors.New("disk full")}}, 3,
			"disk full", "tip, catch up 1 fails"},
		// A database that answers a ping but keeps failing the run (too
		// many connections) is one outage: a run to a target gives up.
		{"gives up on a database that keeps failing", &scripted{latest: 3, catchUpErrs: []error{tooMany, tooMany, tooMany, tooMany, tooMany, tooMany, tooMany, tooMany}}, 3,
			"indexer c1: the database was unavailable for 20ms: commit: connection refused", ""},
		{"resumes after a database outage", &scripted{latest: 3, catchUpErrs: []error{tooMany}}, 3, "",
			"tip, catch up 1 fails, tip, catch up 1-3"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			db, _ := testdb.New(t)
			m, err := NewMetrics(nil)
			if err != nil {
				t.Fatal(err)
			}
			ch := config.Chain{ID: "c1", Kind: "osmosis", PollInterval: config.Duration(5 * time.Millisecond)}
			f := Follow{DB: db, Chain: ch, Blocks: "blocks", Series: m.Chain("c1"), Log: slog.New(slog.DiscardHandler),
				RetryEvery: time.Hour, GiveUpAfter: 20 * time.Millisecond}
			err = f.Run(context.Background(), c.fam, c.until)
			if got := fmt.Sprint(err); (c.wantErr == "" && err != nil) || (c.wantErr != "" && got != c.wantErr) {
				t.Fatalf("err = %v, want %q", err, c.wantErr)
			}
			if got := strings.Join(c.fam.calls, ", "); c.want != "" && got != c.want {
				t.Fatalf("calls: %s\nwant:  %s", got, c.want)
			}
		})
	}
}

// TestFollowAtTip: following the chain (no target), a reorg found at the
// tip moves the next height back and the range is indexed again.
func TestFollowAtTip(t *testing.T) {
	t.Parallel()
	db, _ := testdb.New(t)
	m, err := NewMetrics(nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	fam := &scripted{latest: 4, atTip: []int64{3}, idle: cancel}
	f := Follow{DB: db, Chain: config.Chain{ID: "c1", Kind: "osmosis", PollInterval: config.Duration(time.Millisecond)},
		Blocks: "blocks", Series: m.Chain("c1"), Log: slog.New(slog.DiscardHandler), RetryEvery: time.Hour}
	if err := f.Run(ctx, fam, 0); err != nil {
		t.Fatalf("a stopped follower answers %v, want nil", err)
	}
	if got, want := strings.Join(fam.calls, ", "), "tip, catch up 1-4, back to 3, tip, catch up 3-4"; got != want {
		t.Fatalf("calls: %s\nwant:  %s", got, want)
	}
}
