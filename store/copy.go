package store

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/driver/pgdriver"
)

// CopyRows bulk-loads rows into table through COPY FROM STDIN (text
// format) on conn, which may be inside a transaction. Supported values:
// nil, string, []byte (bytea), json.RawMessage (jsonb), bool, the integer
// types, time.Time, []string (text[]) and fmt.Stringer.
func CopyRows(ctx context.Context, conn bun.Conn, table string, columns []string, rows [][]any) (int64, error) {
	query := copyQuery(table, columns)
	var (
		buf   bytes.Buffer
		total int64
	)
	flush := func() error {
		if buf.Len() == 0 {
			return nil
		}
		res, err := pgdriver.CopyFrom(ctx, conn, &buf, query)
		if err != nil {
			return fmt.Errorf("copy %s: %w", table, err)
		}
		n, _ := res.RowsAffected()
		total += n
		buf.Reset()
		return nil
	}
	for _, row := range rows {
		if err := EncodeCopyRow(&buf, columns, row); err != nil {
			return total, fmt.Errorf("copy %s: %w", table, err)
		}
		// A huge height is sent as several COPYs (same transaction), so its
		// COPY text is never held whole in memory.
		if buf.Len() >= CopyChunkBytes {
			if err := flush(); err != nil {
				return total, err
			}
		}
	}
	return total, flush()
}

// CopyChunkBytes is the most COPY text buffered before it is sent.
const CopyChunkBytes = 8 << 20

func copyQuery(table string, columns []string) string {
	return "COPY " + table + " (" + strings.Join(columns, ", ") + ") FROM STDIN"
}

// EncodeCopyRow appends one row to buf in the COPY text format: the values
// (see CopyRows for the supported types) separated by tabs, then a newline.
// A row with a value count other than len(columns) is an error.
func EncodeCopyRow(buf *bytes.Buffer, columns []string, row []any) error {
	if len(row) != len(columns) {
		return fmt.Errorf("row has %d values for %d columns", len(row), len(columns))
	}
	for i, v := range row {
		if i > 0 {
			buf.WriteByte('\t')
		}
		if err := appendCopyValue(buf, v); err != nil {
			return fmt.Errorf("column %s: %w", columns[i], err)
		}
	}
	buf.WriteByte('\n')
	return nil
}

// CopyText loads COPY text, rows as EncodeCopyRow writes them, from r into
// table on conn (which may be inside a transaction). The text is sent as
// several COPY statements of at most CopyChunkBytes each (a single longer
// row gets a statement of its own), cut at row boundaries, so at most one
// chunk is held in memory whatever the size of r. It returns the number of
// rows copied.
func CopyText(ctx context.Context, conn bun.Conn, table string, columns []string, r io.Reader) (int64, error) {
	query := copyQuery(table, columns)
	var total int64
	send := func(chunk []byte) error {
		if len(chunk) == 0 {
			return nil
		}
		res, err := pgdriver.CopyFrom(ctx, conn, bytes.NewReader(chunk), query)
		if err != nil {
			return fmt.Errorf("copy %s: %w", table, err)
		}
		n, _ := res.RowsAffected()
		total += n
		return nil
	}
	buf := make([]byte, CopyChunkBytes)
	filled := 0
	for {
		n, err := io.ReadFull(r, buf[filled:])
		filled += n
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			return total, send(buf[:filled])
		}
		if err != nil {
			return total, fmt.Errorf("copy %s: read: %w", table, err)
		}
		cut := bytes.LastIndexByte(buf[:filled], '\n') + 1
		if cut == 0 { // one row longer than the buffer: make room for it
			buf = append(buf, make([]byte, len(buf))...)
			continue
		}
		if err := send(buf[:cut]); err != nil {
			return total, err
		}
		filled = copy(buf, buf[cut:filled])
		if err := ctx.Err(); err != nil {
			return total, err
		}
	}
}

// CopyChunks loads COPY text held as chunks (each whole rows, as
// EncodeCopyRow writes them) into table on conn (which may be inside a
// transaction): chunks are sent as they are, grouped into COPY statements
// of about CopyChunkBytes, without being copied. It returns the number of
// rows copied.
func CopyChunks(ctx context.Context, conn bun.Conn, table string, columns []string, chunks [][]byte) (int64, error) {
	query := copyQuery(table, columns)
	var total int64
	var group []io.Reader
	size := 0
	send := func() error {
		if len(group) == 0 {
			return nil
		}
		res, err := pgdriver.CopyFrom(ctx, conn, io.MultiReader(group...), query)
		if err != nil {
			return fmt.Errorf("copy %s: %w", table, err)
		}
		n, _ := res.RowsAffected()
		total += n
		group, size = group[:0], 0
		return nil
	}
	for _, c := range chunks {
		if len(c) == 0 {
			continue
		}
		if size > 0 && size+len(c) > CopyChunkBytes {
			if err := send(); err != nil {
				return total, err
			}
		}
		group = append(group, bytes.NewReader(c))
		size += len(c)
	}
	return total, send()
}

// copyEscaper escapes text for the COPY text format.
var copyEscaper = strings.NewReplacer(`\`, `\\`, "\t", `\t`, "\n", `\n`, "\r", `\r`)

func appendCopyValue(buf *bytes.Buffer, v any) error {
	switch x := v.(type) {
	case nil:
		buf.WriteString(`\N`)
	case string:
		if strings.ContainsRune(x, 0) {
			x = strings.ReplaceAll(x, "\x00", "")
		}
		buf.WriteString(copyEscaper.Replace(x))
	case json.RawMessage:
		if x == nil {
			buf.WriteString(`\N`)
			return nil
		}
		buf.WriteString(copyEscaper.Replace(JSONB(x)))
	case []byte:
		if x == nil {
			buf.WriteString(`\N`)
			return nil
		}
		buf.WriteString(`\\x`)
		buf.WriteString(hex.EncodeToString(x))
	case bool:
		if x {
			buf.WriteByte('t')
		} else {
			buf.WriteByte('f')
		}
	case int:
		buf.WriteString(strconv.FormatInt(int64(x), 10))
	case int32:
		buf.WriteString(strconv.FormatInt(int64(x), 10))
	case int64:
		buf.WriteString(strconv.FormatInt(x, 10))
	case uint32:
		buf.WriteString(strconv.FormatUint(uint64(x), 10))
	case uint64:
		buf.WriteString(strconv.FormatUint(x, 10))
	case time.Time:
		buf.WriteString(x.UTC().Format("2006-01-02 15:04:05.999999999Z07:00"))
	case []string:
		buf.WriteString(copyEscaper.Replace(pgTextArray(x)))
	case fmt.Stringer:
		buf.WriteString(copyEscaper.Replace(x.String()))
	default:
		return fmt.Errorf("unsupported value type %T", v)
	}
	return nil
}

// pgTextArray renders a text[] literal.
func pgTextArray(xs []string) string {
	var b strings.Builder
	b.WriteByte('{')
	for i, s := range xs {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteByte('"')
		b.WriteString(strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(strings.ReplaceAll(s, "\x00", "")))
		b.WriteByte('"')
	}
	b.WriteByte('}')
	return b.String()
}

// JSONB returns JSON text as jsonb accepts it: without \u0000, which
// Postgres refuses in jsonb (one such string would fail a whole batch).
func JSONB(j []byte) string {
	return strings.ReplaceAll(string(j), `\u0000`, "")
}
