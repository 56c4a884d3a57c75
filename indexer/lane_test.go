package indexer

import (
	"context"
	"testing"
	"time"
)

func TestStreamLane(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	l := newStreamLane()
	if !l.tryAcquire(10) || l.tryAcquire(11) {
		t.Fatal("one height streams at a time")
	}
	l.done(10, true) // 10 spilled, waits for its commit
	if l.tryAcquire(12) {
		t.Fatal("a height above a waiting spill must wait")
	}
	if !l.tryAcquire(8) {
		t.Fatal("a height below every waiting spill may always stream")
	}
	got := make(chan int64, 1)
	go func() {
		if err := l.acquire(ctx, 12); err == nil {
			got <- 12
		}
	}()
	l.done(8, true)
	select {
	case <-got:
		t.Fatal("12 admitted while 8 and 10 wait")
	case <-time.After(20 * time.Millisecond):
	}
	l.unwait(8)
	l.unwait(10)
	select {
	case <-got:
	case <-time.After(time.Second):
		t.Fatal("12 not admitted once the spills were released")
	}
	l.done(12, false) // not in order: does not wait
	if !l.tryAcquire(13) {
		t.Fatal("lane not free")
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if err := l.acquire(cctx, 14); err == nil {
		t.Fatal("acquire must end with its context")
	}
}
