package snapshot

import (
	"bytes"
	"context"
	"fmt"
	"strings"

	"github.com/uptrace/bun"
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/chainlens/chainlens/chains"
	"github.com/chainlens/chainlens/chains/wire"
)

// TakeState runs the state queries of a chain kind at height and returns
// the protobuf bytes of their items by path, in the node's order
// (chains.StateQuery: a paginated query is followed page by page with
// PageRequest{key=1, limit=3}; another query's answer is one item, its
// field 1).
func TakeState(ctx context.Context, q Querier, height int64, queries []chains.StateQuery) (map[string][][]byte, error) {
	out := make(map[string][][]byte, len(queries))
	for _, sq := range queries {
		if !sq.Paginated {
			items, _, err := queryPage(ctx, q, sq.Path, height, nil, nil, 0)
			if err != nil {
				return nil, err
			}
			out[sq.Path] = items
			continue
		}
		var items [][]byte
		var key []byte
		for page := 0; ; page++ {
			if page == maxPages {
				return nil, fmt.Errorf("%s: more than %d pages", sq.Path, maxPages)
			}
			got, next, err := queryPage(ctx, q, sq.Path, height, nil, key, pageSize)
			if err != nil {
				return nil, err
			}
			items = append(items, got...)
			if len(next) == 0 {
				break
			}
			if bytes.Equal(next, key) {
				return nil, fmt.Errorf("%s: the node answered the same page key %x twice", sq.Path, next)
			}
			key = next
		}
		out[sq.Path] = items
	}
	return out, nil
}

// queryPage runs the query path at height, its request base and: with
// limit > 0, the page at key
// (PageRequest{key=1, limit=3} in field 1 of the request; nil key: the
// first page), returning the items (field 1 of the answer) and the next
// page's key (PageResponse.next_key in field 2; nil on the last page);
// with limit 0, an unpaginated query, whose answer's field 1 is its item.
func queryPage(ctx context.Context, q Querier, path string, height int64, base, key []byte, limit uint64) ([][]byte, []byte, error) {
	req := bytes.Clone(base)
	if limit > 0 {
		var pr []byte
		if len(key) > 0 {
			pr = protowire.AppendTag(pr, 1, protowire.BytesType)
			pr = protowire.AppendBytes(pr, key)
		}
		pr = protowire.AppendTag(pr, 3, protowire.VarintType)
		pr = protowire.AppendVarint(pr, limit)
		req = protowire.AppendTag(req, 1, protowire.BytesType)
		req = protowire.AppendBytes(req, pr)
	}
	resp, err := q.ABCIQuery(ctx, path, req, height)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	fs, err := wire.Fields(resp)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: decode the answer: %w", path, err)
	}
	var items [][]byte
	var next []byte
	for _, f := range fs {
		switch {
		case f.Num == 1 && f.Type == protowire.BytesType:
			items = append(items, f.Bytes)
		case f.Num == 2 && f.Type == protowire.BytesType && limit > 0:
			pfs, err := wire.Fields(f.Bytes)
			if err != nil {
				return nil, nil, fmt.Errorf("%s: decode the page: %w", path, err)
			}
			for _, pf := range pfs {
				if pf.Num == 1 && pf.Type == protowire.BytesType {
					next = pf.Bytes
				}
			}
		}
	}
	return items, next, nil
}

// insertChunk is the number of rows per INSERT statement.
const insertChunk = 1000

// StoreState writes the rows of a chain kind's state tables taken at a
// snapshot (chains.StateAdapter): a row is inserted only when its item
// (the table's key) has no row at or below its height, or its newest such
// row holds other values; rewriting the same snapshot inserts nothing. It
// returns the number of rows inserted. The tables' partitions must exist.
func StoreState(ctx context.Context, db bun.IDB, tables []chains.StateTable, rows *chains.Rows) (int64, error) {
	var total int64
	for _, t := range tables {
		all := rows.Of(t.Name)
		for start := 0; start < len(all); start += insertChunk {
			chunk := all[start:min(start+insertChunk, len(all))]
			q, args, err := stateInsert(t, chunk)
			if err != nil {
				return total, err
			}
			res, err := db.ExecContext(ctx, q, args...)
			if err != nil {
				return total, fmt.Errorf("store %s: %w", t.Name, err)
			}
			n, _ := res.RowsAffected()
			total += n
		}
	}
	return total, nil
}

// stateInsert builds the INSERT of StoreState for one chunk of rows. The
// rows' literals take the table's column types: each row is a SELECT in a
// UNION ALL led by an empty select of the table (a VALUES list resolves a
// column of NULLs, or of JSON for a jsonb column, to text on its own).
func stateInsert(t chains.StateTable, rows [][]any) (string, []any, error) {
	if len(t.Key) == 0 {
		return "", nil, fmt.Errorf("store %s: a state table needs a key", t.Name)
	}
	isKey := map[string]bool{"chain_id": true, "height": true}
	var match []string
	for _, k := range t.Key {
		isKey[k] = true
		match = append(match, fmt.Sprintf("l.%s = v.%s", k, k))
	}
	var values []string
	for _, c := range t.Columns {
		if !isKey[c] {
			values = append(values, c)
		}
	}
	if len(values) == 0 {
		return "", nil, fmt.Errorf("store %s: a state table needs a column besides chain_id, height and its key", t.Name)
	}
	var q strings.Builder
	cols := strings.Join(t.Columns, ", ")
	fmt.Fprintf(&q, "INSERT INTO %s (%s) SELECT %s FROM (SELECT %s FROM %s WHERE false", t.Name, cols, cols, cols, t.Name)
	args := make([]any, 0, len(rows)*len(t.Columns))
	row := strings.TrimSuffix(strings.Repeat("?, ", len(t.Columns)), ", ")
	for _, r := range rows {
		if len(r) != len(t.Columns) {
			return "", nil, fmt.Errorf("store %s: a row has %d values for %d columns", t.Name, len(r), len(t.Columns))
		}
		q.WriteString(" UNION ALL SELECT " + row)
		args = append(args, r...)
	}
	lv := "l." + strings.Join(values, ", l.")
	vv := "v." + strings.Join(values, ", v.")
	fmt.Fprintf(&q, ") AS v WHERE NOT EXISTS (SELECT 1 FROM (SELECT %s FROM %s l WHERE l.chain_id = v.chain_id AND %s AND l.height <= v.height ORDER BY l.height DESC LIMIT 1) l WHERE (%s) IS NOT DISTINCT FROM (%s)) ON CONFLICT DO NOTHING",
		lv, t.Name, strings.Join(match, " AND "), lv, vv)
	return q.String(), args, nil
}
