package chains

import (
	"fmt"
	"strings"
	"unicode"
)

// Table declares a domain table an adapter writes. Its first two columns are
// chain_id and height: rewriting a height range deletes by them first.
type Table struct {
	Name    string
	Columns []string
}

// Rows collects the domain rows of a batch of heights, by table.
type Rows struct {
	byTable map[string][][]any
}

// NewRows returns an empty collection.
func NewRows() *Rows { return &Rows{byTable: map[string][][]any{}} }

// Add appends one row (values in the table's column order).
func (r *Rows) Add(table string, values ...any) {
	r.byTable[table] = append(r.byTable[table], values)
}

// Of returns the rows collected for a table.
func (r *Rows) Of(table string) [][]any { return r.byTable[table] }

// Len is the number of rows collected over all tables.
func (r *Rows) Len() int {
	n := 0
	for _, rows := range r.byTable {
		n += len(rows)
	}
	return n
}

// Adapter is one chain kind: how its heights decode and which domain rows
// they produce. Implementations are pure: no network, no database. An
// error fails the whole height.
type Adapter interface {
	// Kind is the config kind this adapter serves.
	Kind() string
	// Decode turns fetched JSON into a decoded height.
	Decode(raw RawBlock, enc AttrEncoding) (*Block, error)
	// Tables lists the domain tables Rows writes.
	Tables() []Table
	// Rows appends the domain rows of a decoded height.
	Rows(b *Block, out *Rows) error
}

// ParseCoins splits an SDK coins string ("10uatom,5ibc/27..") into coins.
// Amounts may be decimals (DecCoins). An empty string is no coins.
func ParseCoins(s string) ([]Coin, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, nil
	}
	var out []Coin
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		i := strings.IndexFunc(part, func(r rune) bool { return !unicode.IsDigit(r) && r != '.' })
		if i <= 0 || i == len(part) || strings.Count(part[:i], ".") > 1 || strings.HasSuffix(part[:i], ".") {
			return nil, fmt.Errorf("bad coin %q in %q", part, s)
		}
		out = append(out, Coin{Amount: part[:i], Denom: part[i:]})
	}
	return out, nil
}
