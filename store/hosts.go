package store

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strings"
	"sync/atomic"

	"github.com/uptrace/bun/driver/pgdriver"
)

// ErrNoTargetServer is returned when no host of a database URL is of the
// kind its target_session_attrs asks for: during a failover, until a
// replica has been promoted. It counts as Unavailable.
var ErrNoTargetServer = errors.New("no server of the kind asked for")

// Session kinds of libpq's target_session_attrs that a URL may ask for.
const (
	attrsAny           = "any"
	attrsReadWrite     = "read-write"
	attrsReadOnly      = "read-only"
	attrsPrimary       = "primary"
	attrsStandby       = "standby"
	attrsPreferStandby = "prefer-standby"
)

// hostsConnector connects to the first of several hosts that is of the
// kind target_session_attrs asks for, as libpq does with
// "postgres://u@h1:5432,h2:5432/db?target_session_attrs=read-write": a
// process given every server of a replicated cluster finds the primary
// after a failover by itself, on its next connection. It starts each
// search at the host that answered last.
type hostsConnector struct {
	hosts []string
	conns []*pgdriver.Connector
	attrs string
	last  atomic.Int32
}

// newConnector returns a connector for dsn, which may name several hosts
// and a target_session_attrs; opts apply to every host.
func newConnector(dsn string, opts ...pgdriver.Option) (driver.Connector, error) {
	hosts, single, attrs, err := splitHosts(dsn)
	if err != nil {
		return nil, err
	}
	c := &hostsConnector{hosts: hosts, attrs: attrs}
	for _, h := range hosts {
		// Each host's own URL, so that TLS verifies each server by its
		// own name.
		u, err := url.Parse(single)
		if err != nil {
			return nil, fmt.Errorf("database URL: %w", err)
		}
		u.Host = h
		all := append([]pgdriver.Option{pgdriver.WithDSN(u.String())}, opts...)
		c.conns = append(c.conns, pgdriver.NewConnector(all...))
	}
	if len(hosts) == 1 && attrs == attrsAny {
		return c.conns[0], nil // nothing to choose
	}
	return c, nil
}

// splitHosts parses a postgres URL whose host part may list several
// host:port pairs. It returns them, the URL with the first host and
// without target_session_attrs (which pgdriver does not know), and the
// kind of server asked for (any when not given).
func splitHosts(dsn string) (hosts []string, single, attrs string, err error) {
	scheme, rest, ok := strings.Cut(dsn, "://")
	if !ok || (scheme != "postgres" && scheme != "postgresql") {
		return nil, "", "", errors.New("database URL: want postgres://user@host:port/database")
	}
	authority, path, hasPath := strings.Cut(rest, "/")
	if !hasPath {
		// postgres://u@h1,h2?sslmode=... : the query follows the hosts.
		if i := strings.IndexByte(authority, '?'); i >= 0 {
			authority, path = authority[:i], authority[i:]
		}
	}
	userinfo, hostlist, hasUser := "", authority, false
	if i := strings.LastIndexByte(authority, '@'); i >= 0 {
		userinfo, hostlist, hasUser = authority[:i], authority[i+1:], true
	}
	for h := range strings.SplitSeq(hostlist, ",") {
		if h == "" {
			return nil, "", "", errors.New("database URL: an empty host in the host list")
		}
		if !strings.Contains(h, ":") || strings.HasSuffix(h, "]") {
			h += ":5432"
		}
		hosts = append(hosts, h)
	}
	prefix := scheme + "://"
	if hasUser {
		prefix += userinfo + "@"
	}
	u, err := url.Parse(prefix + hosts[0] + "/" + strings.TrimPrefix(path, "/"))
	if err != nil {
		return nil, "", "", fmt.Errorf("database URL: %w", err)
	}
	q := u.Query()
	attrs = q.Get("target_session_attrs")
	switch attrs {
	case "":
		attrs = attrsAny
	case attrsAny, attrsReadWrite, attrsReadOnly, attrsPrimary, attrsStandby, attrsPreferStandby:
	default:
		return nil, "", "", fmt.Errorf("database URL: target_session_attrs %q: want one of any, read-write, read-only, primary, standby, prefer-standby", attrs)
	}
	q.Del("target_session_attrs")
	u.RawQuery = q.Encode()
	return hosts, u.String(), attrs, nil
}

// Connect implements driver.Connector.
func (c *hostsConnector) Connect(ctx context.Context) (driver.Conn, error) {
	passes := []string{c.attrs}
	if c.attrs == attrsPreferStandby {
		passes = []string{attrsStandby, attrsAny}
	}
	var errs []error
	start := int(c.last.Load())
	for _, want := range passes {
		for i := range c.hosts {
			k := (start + i) % len(c.hosts)
			conn, err := c.conns[k].Connect(ctx)
			if err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", c.hosts[k], err))
				continue
			}
			ok, err := fits(ctx, conn, want)
			if err == nil && ok {
				c.last.Store(int32(k))
				return conn, nil
			}
			_ = conn.Close()
			if err == nil {
				err = fmt.Errorf("not %s", want)
			}
			errs = append(errs, fmt.Errorf("%s: %w", c.hosts[k], err))
		}
	}
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	return nil, fmt.Errorf("%w (%s of %s): %w", ErrNoTargetServer, c.attrs, strings.Join(c.hosts, ","), errors.Join(errs...))
}

// Driver implements driver.Connector: the driver of the host that
// answered last (a pgdriver.Listener, which connects through it, then
// reaches the server the pool found; Changes pings through the pool
// before it listens).
func (c *hostsConnector) Driver() driver.Driver { return c.conns[c.last.Load()].Driver() }

// fits reports whether the server conn is connected to is of the kind
// want (libpq's meanings: read-write and read-only by the session's
// transaction_read_only, primary and standby by recovery).
func fits(ctx context.Context, conn driver.Conn, want string) (bool, error) {
	if want == attrsAny {
		return true, nil
	}
	q, ok := conn.(driver.QueryerContext)
	if !ok {
		return false, errors.New("the driver cannot query")
	}
	rows, err := q.QueryContext(ctx, "SELECT pg_is_in_recovery()::text, current_setting('transaction_read_only')", nil)
	if err != nil {
		return false, err
	}
	defer rows.Close()
	vals := make([]driver.Value, 2)
	if err := rows.Next(vals); err != nil && !errors.Is(err, io.EOF) {
		return false, err
	}
	text := func(v driver.Value) string {
		switch v := v.(type) {
		case string:
			return v
		case []byte:
			return string(v)
		}
		return fmt.Sprint(v)
	}
	recovery, readOnly := text(vals[0]) == "true", text(vals[1]) == "on"
	switch want {
	case attrsReadWrite:
		return !readOnly, nil
	case attrsReadOnly:
		return readOnly, nil
	case attrsPrimary:
		return !recovery, nil
	default: // standby
		return recovery, nil
	}
}
