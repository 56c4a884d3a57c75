package indexer

import (
	"context"
	"log/slog"
	"time"

	rpchttp "github.com/cometbft/cometbft/rpc/client/http"
)

// newBlockQuery is the subscription of the wake-up hint: headers only, so
// a huge block is not sent twice.
const newBlockQuery = "tm.event='NewBlockHeader'"

// hintSilence is how long the hint waits for an event before it
// reconnects (a dead socket looks like a quiet chain).
const hintSilence = 2 * time.Minute

// blockHint subscribes to the node's new block headers over its
// websocket and signals on the returned channel (capacity 1, never
// closed) whenever one arrives. It is a hint only: the indexer still polls
// /status, so a missed or duplicated event changes nothing but latency.
// Failures are logged and retried with backoff until ctx ends.
func blockHint(ctx context.Context, rpc string, log *slog.Logger) <-chan struct{} {
	wake := make(chan struct{}, 1)
	go func() {
		backoff := time.Second
		for ctx.Err() == nil {
			err := followHeaders(ctx, rpc, wake)
			if ctx.Err() != nil {
				return
			}
			log.Debug("new block hint disconnected; reconnecting", "rpc", rpc, "err", err, "in", backoff)
			if Sleep(ctx, backoff) != nil {
				return
			}
			backoff = min(2*backoff, time.Minute)
		}
	}()
	return wake
}

// followHeaders runs one websocket subscription until ctx ends, it fails,
// or no header arrives for hintSilence.
func followHeaders(ctx context.Context, rpc string, wake chan<- struct{}) error {
	c, err := rpchttp.New(rpc, "/websocket")
	if err != nil {
		return err
	}
	if err := c.Start(); err != nil {
		return err
	}
	defer func() { _ = c.Stop() }()
	subCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
	events, err := c.Subscribe(subCtx, "chainlens", newBlockQuery, 16)
	cancel()
	if err != nil {
		return err
	}
	silence := time.NewTimer(hintSilence)
	defer silence.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-silence.C:
			return context.DeadlineExceeded
		case <-events:
			silence.Reset(hintSilence)
			select {
			case wake <- struct{}{}:
			default: // a wake-up is already pending
			}
		}
	}
}

// sleepOrWake waits d, or less when wake signals (wake may be nil).
func sleepOrWake(ctx context.Context, d time.Duration, wake <-chan struct{}) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	case <-wake:
		return nil
	}
}
