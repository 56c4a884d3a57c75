package indexer

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/chainlens/chainlens/chains"
	"github.com/chainlens/chainlens/indexer/cometbft"
)

// streamAttempts is how many times a height read as a stream is read in
// all when its stream breaks (the client's own retries cover only the
// request, up to the start of the result).
const streamAttempts = 3

// fetchStream indexes a height whose /block_results answer is larger than
// StreamAbove (an Osmosis epoch block's exceeds 100 MB) in bounded memory:
// the result is decoded from the stream one tx result or block-level event
// at a time (chains.StreamAdapter), and each part's raw and domain rows go
// straight to the height's spill files, which the writer copies in a batch
// of its own. One height at a time is read this way, and in order
// (inOrder) one more may wait spilled for its commit (streamLane); the
// other workers go on with ordinary heights, and the writer still commits
// in height order. A worker that finds the lane busy closes its stream and
// asks again once the lane admits it.
//
// A stream that breaks is read again from the start, up to streamAttempts
// reads; a late attribute-encoding verdict restarts the read with it; a
// response that cannot be decoded in one pass is read whole instead.
// Whatever still fails becomes the height's error (a dead letter), and its
// spill files are removed.
func (x *Cosmos) fetchStream(ctx context.Context, h int64, enc chains.AttrEncoding, blockRaw []byte, stream io.ReadCloser, inOrder bool, set *commitSet) *fetched {
	if _, ok := x.adapter.(chains.StreamAdapter); !ok {
		stream.Close()
		return &fetched{height: h, err: fmt.Errorf("fetch height %d: block_results larger than %d bytes and adapter %s cannot read it as a stream",
			h, cometbft.MaxResponseBytes, x.adapter.Kind())}
	}
	if !x.lane.tryAcquire(h) {
		stream.Close()
		stream = nil
		if err := x.lane.acquire(ctx, h); err != nil {
			return &fetched{height: h, err: fmt.Errorf("fetch height %d: %w", h, err)}
		}
	}
	f := x.readStream(ctx, h, enc, blockRaw, stream, set)
	waits := inOrder && f.spill != nil
	if waits {
		f.onRelease = func() { x.lane.unwait(h) }
	}
	x.lane.done(h, waits)
	return f
}

// readStream is fetchStream's reading, once the lane admitted the height.
func (x *Cosmos) readStream(ctx context.Context, h int64, enc chains.AttrEncoding, blockRaw []byte, stream io.ReadCloser, set *commitSet) *fetched {
	for attempt := 1; ; attempt++ {
		if stream == nil {
			ans, err := x.src.BlockResults(ctx, h, x.inMemoryMax())
			if err != nil {
				return fetchFailed(h, err)
			}
			if ans.Stream == nil {
				return x.decodeWhole(h, enc, blockRaw, ans.Result, set)
			}
			stream = ans.Stream
		}
		f, err := x.streamHeight(ctx, h, enc, blockRaw, stream, set)
		stream.Close()
		stream = nil
		if err == nil {
			return f
		}
		var restart *chains.RestartError
		var pe *partError
		switch {
		case ctx.Err() != nil:
			return &fetched{height: h, err: fmt.Errorf("fetch height %d: %w", h, ctx.Err())}
		case errors.As(err, &restart):
			x.log.Info("reading the height again with the attribute encoding its stream resolved", "height", h, "encoding", restart.Attrs)
			enc = restart.Attrs
			attempt-- // an explicit encoding never restarts again
		case errors.Is(err, chains.ErrNotStreamable):
			x.log.Warn("height cannot be read as a stream; reading it whole", "height", h, "err", err)
			ans, err := x.src.BlockResults(ctx, h, cometbft.MaxResponseBytes)
			if err != nil {
				return fetchFailed(h, err)
			}
			if ans.Stream != nil {
				ans.Stream.Close()
				return &fetched{height: h, err: fmt.Errorf("fetch height %d: block_results larger than %d bytes", h, cometbft.MaxResponseBytes)}
			}
			return x.decodeWhole(h, enc, blockRaw, ans.Result, set)
		case streamBroken(err) && attempt < streamAttempts:
			x.log.Warn("block_results stream broke; reading the height again", "height", h, "attempt", attempt, "err", err)
			if Sleep(ctx, time.Duration(attempt)*time.Second) != nil {
				return &fetched{height: h, err: fmt.Errorf("fetch height %d: %w", h, ctx.Err())}
			}
		case streamBroken(err):
			return &fetched{height: h, err: fmt.Errorf("fetch height %d: %d reads failed: %w", h, streamAttempts, err)}
		case errors.As(err, &pe) && pe.raw:
			return &fetched{height: h, err: fmt.Errorf("rows of height %d: %w", h, pe.err)}
		case errors.As(err, &pe):
			x.series.DecodeErrors.Inc()
			return &fetched{height: h, err: fmt.Errorf("adapt height %d: %w", h, pe.err)}
		default:
			x.series.DecodeErrors.Inc()
			return &fetched{height: h, err: fmt.Errorf("decode height %d: %w", h, err)}
		}
	}
}

// streamBroken reports whether err is the failure of a stream (the
// connection, or a body cut short) rather than of its content.
func streamBroken(err error) bool {
	return errors.Is(err, cometbft.ErrStreamBroken) || errors.Is(err, io.ErrUnexpectedEOF)
}

// partError is a failure to build the rows of a part: raw rows, or the
// adapter's.
type partError struct {
	raw bool
	err error
}

func (e *partError) Error() string { return e.err.Error() }
func (e *partError) Unwrap() error { return e.err }

// streamHeight decodes one height from its stream into spill files: for
// every part, its raw rows (rawPartRows) and domain rows (Adapter.Rows
// with chains.Part) are encoded to the files at once; then the blocks row
// and the rows aggregated over the height. The spill is removed on error.
func (x *Cosmos) streamHeight(ctx context.Context, h int64, enc chains.AttrEncoding, blockRaw []byte, stream io.Reader, set *commitSet) (*fetched, error) {
	start := time.Now()
	sa := x.adapter.(chains.StreamAdapter)
	sp := newSpill(x.w.tables)
	ok := false
	defer func() {
		if !ok {
			sp.remove()
		}
	}()
	f := &fetched{height: h}
	rows := chains.NewRows()
	state := &chains.Part{}
	txs := 0
	in := &countingReader{r: stream}
	foreign := 0 // the parts' foreign events, for the height's stats
	hdr, err := sa.DecodeStream(chains.RawBlock{ChainID: x.cfg.ID, Height: h, Block: blockRaw}, in, enc, func(p *chains.Block) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		txs += len(p.Txs)
		f.events += len(p.Events)
		for i := range p.Txs {
			f.events += len(p.Txs[i].Events)
		}
		if err := rawPartRows(p, rows, x.cfg.Raw); err != nil {
			return &partError{raw: true, err: err}
		}
		p.Part = state
		if err := x.adapter.Rows(p, rows); err != nil {
			return &partError{err: err}
		}
		foreign += p.Stats.ForeignEvents
		if err := sp.add(rows); err != nil {
			return &partError{raw: true, err: err}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	hdr.Stats.ForeignEvents += foreign
	x.attributeCommit(hdr, set)
	rawBlockRow(hdr, txs, rows)
	hdr.Part = &chains.Part{Last: true, State: state.State}
	if err := x.adapter.Rows(hdr, rows); err != nil {
		return nil, &partError{err: err}
	}
	hdr.Part = nil
	if err := sp.add(rows); err != nil {
		return nil, &partError{raw: true, err: err}
	}
	if err := sp.finish(); err != nil {
		return nil, &partError{raw: true, err: err}
	}
	f.block, f.spill = hdr, sp
	ok = true
	x.log.Info("height read as a stream", "height", h, "block_results_mb", in.n>>20, "txs", txs, "events", f.events,
		"rows", sp.rows(), "spill_mb", sp.bytes>>20, "took", time.Since(start).Round(time.Millisecond))
	return f, nil
}

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}
