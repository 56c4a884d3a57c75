package store

import (
	"context"
	"database/sql/driver"
	"errors"
	"io"
	"net"
	"net/url"
	"strings"
	"syscall"

	"github.com/uptrace/bun/driver/pgdriver"
)

// ErrLockLost means a session lock is no longer held: the server that
// granted it restarted or failed over (a new primary holds no lock of the
// old one's sessions), or its session ended.
var ErrLockLost = errors.New("the session lock is no longer held (the database restarted or failed over)")

// Unavailable reports whether err means the database could not be reached
// or went away (a restart, a failover, a dropped connection), as opposed
// to a statement it refused: a process that meets it reconnects and
// resumes rather than exits. Connection errors (class 08), shutdowns and
// "cannot connect now" (57P01–57P03) and "too many connections" (53300)
// are; so are refused, reset or closed connections, and a session lock
// found lost (ErrLockLost).
func Unavailable(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false // a context's end is no outage (context.DeadlineExceeded is a net.Error)
	}
	if errors.Is(err, ErrNoTargetServer) || errors.Is(err, ErrLockLost) {
		return true // a failover in progress (no primary yet), or one that took a session's locks
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		return false // an HTTP request's (a chain node's), not the database's
	}
	var pe pgdriver.Error
	if errors.As(err, &pe) {
		code := pe.Field('C')
		return strings.HasPrefix(code, "08") || code == "57P01" || code == "57P02" || code == "57P03" || code == "53300"
	}
	var ne net.Error
	return errors.Is(err, driver.ErrBadConn) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) ||
		errors.Is(err, net.ErrClosed) || errors.As(err, &ne)
}

// RecoveryConflict reports whether a read on a streaming replica was
// cancelled because it conflicted with what the replica replays (a lock
// or a removed row version of the primary's): read again, it succeeds.
func RecoveryConflict(err error) bool {
	var pe pgdriver.Error
	if !errors.As(err, &pe) {
		return false
	}
	code := pe.Field('C')
	return (code == "40001" || code == "40P01") && strings.Contains(pe.Field('M'), "conflict with recovery")
}

// TimedOut reports whether a statement ran out of time: the server stopped
// it at its statement_timeout (SQLSTATE 57014, query_canceled), or the
// context's deadline passed while waiting for it.
func TimedOut(err error) bool {
	if errors.Is(err, context.DeadlineExceeded) {
		return true
	}
	var pe pgdriver.Error
	return errors.As(err, &pe) && pe.Field('C') == "57014"
}
