package indexer

import (
	"context"
	"sync"
)

// streamLane admits the heights read as a stream: one streams at a time
// (its decode holds the memory the lane is bounded by), and, for the
// catch-up, which commits heights in order, at most maxWaitingSpills
// spilled heights wait for their commit (the disk and the open files the
// lane holds), except that a height below every waiting one may always
// stream: the waiting ones cannot commit before it, so it never waits on
// them. Heights are handed to the workers in increasing order, so the
// lowest uncommitted height is always admitted in turn.
type streamLane struct {
	mu        sync.Mutex
	streaming bool
	waiting   map[int64]bool // spilled, not yet released
	wake      chan struct{}  // closed and replaced on every change
}

// maxWaitingSpills bounds the spilled heights waiting for their commit.
const maxWaitingSpills = 1

func newStreamLane() *streamLane {
	return &streamLane{waiting: map[int64]bool{}, wake: make(chan struct{})}
}

// acquire waits until height h may stream.
func (l *streamLane) acquire(ctx context.Context, h int64) error {
	for {
		l.mu.Lock()
		if !l.streaming && l.admits(h) {
			l.streaming = true
			l.mu.Unlock()
			return nil
		}
		wake := l.wake
		l.mu.Unlock()
		select {
		case <-wake:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// tryAcquire is acquire without waiting.
func (l *streamLane) tryAcquire(h int64) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.streaming || !l.admits(h) {
		return false
	}
	l.streaming = true
	return true
}

func (l *streamLane) admits(h int64) bool {
	if len(l.waiting) < maxWaitingSpills {
		return true
	}
	for w := range l.waiting {
		if w < h {
			return false
		}
	}
	return true
}

// done ends h's streaming; when waits is set, h's spill counts as waiting
// until unwait.
func (l *streamLane) done(h int64, waits bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.streaming = false
	if waits {
		l.waiting[h] = true
	}
	l.changed()
}

// unwait is called when h's spill is released.
func (l *streamLane) unwait(h int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.waiting[h] {
		delete(l.waiting, h)
		l.changed()
	}
}

func (l *streamLane) changed() {
	close(l.wake)
	l.wake = make(chan struct{})
}
