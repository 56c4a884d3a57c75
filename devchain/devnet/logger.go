package devnet

import (
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"

	"github.com/cosmos/cosmos-sdk/testutil/network"
)

// Messages network.(*Network).Cleanup logs first and last; the adapter uses
// them to see a Cleanup begin and end (see tnLogger.handle).
const (
	msgCleanupStart = "cleaning up test network..."
	msgCleanupEnd   = "released test network lock"
)

// tnLogger adapts log/slog to network.Logger, the only "testing.T" that
// network.New asks for (Log and Logf; no Fatal, no FailNow), so the network
// runs outside `go test`. It also:
//
//   - records the failures Cleanup can only log ("failed to stop …",
//     "unexpected error …") so Close can return them;
//   - lets exactly one Cleanup run. network.New installs a SIGINT/SIGTERM
//     handler that calls Cleanup and os.Exit; a second Cleanup would unlock
//     the package's already-unlocked mutex, a fatal runtime error that no
//     recover catches. Every Cleanup logs msgCleanupStart first, before any
//     other work, so the adapter parks a second caller there forever.
type tnLogger struct {
	log *slog.Logger

	mu       sync.Mutex
	failures []string
	// started is set once a Cleanup is under way (or claimed by Close).
	started bool
	// claimed means Close has claimed the cleanup and its own Cleanup call
	// has not logged msgCleanupStart yet.
	claimed bool
	done    chan struct{}
	endOnce sync.Once
}

var _ network.Logger = (*tnLogger)(nil)

func newTNLogger(l *slog.Logger) *tnLogger {
	return &tnLogger{log: l, done: make(chan struct{})}
}

// Log implements network.Logger.
func (l *tnLogger) Log(args ...any) { l.handle(strings.TrimSpace(fmt.Sprintln(args...))) }

// Logf implements network.Logger.
func (l *tnLogger) Logf(format string, args ...any) {
	l.handle(strings.TrimSpace(fmt.Sprintf(format, args...)))
}

func (l *tnLogger) handle(msg string) {
	switch {
	case msg == msgCleanupStart:
		l.mu.Lock()
		switch {
		case l.claimed: // the Cleanup Close is running
			l.claimed = false
		case !l.started: // the signal handler's Cleanup, first
			l.started = true
		default: // a second Cleanup: letting it on would crash the process
			l.mu.Unlock()
			l.log.Warn("devnet: ignoring a second testutil/network cleanup (already cleaned up or in progress)")
			select {}
		}
		l.mu.Unlock()
	case msg == msgCleanupEnd:
		l.endOnce.Do(func() { close(l.done) })
	case strings.HasPrefix(msg, "failed") || strings.HasPrefix(msg, "unexpected error"):
		l.mu.Lock()
		l.failures = append(l.failures, msg)
		l.mu.Unlock()
		l.log.Error("devnet: "+msg, "component", "testutil/network")
		return
	}
	l.log.Debug("devnet: "+msg, "component", "testutil/network")
}

// claimCleanup reports whether the caller should run Cleanup itself; false
// means another Cleanup (the signal handler's) is already under way, and the
// caller should wait on l.done instead.
func (l *tnLogger) claimCleanup() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.started {
		return false
	}
	l.started, l.claimed = true, true
	return true
}

// err joins the failures recorded so far, or nil.
func (l *tnLogger) err() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	errs := make([]error, 0, len(l.failures))
	for _, f := range l.failures {
		errs = append(errs, errors.New("testutil/network: "+f))
	}
	return errors.Join(errs...)
}
