package chains

import (
	"google.golang.org/protobuf/types/descriptorpb"

	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
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

// Reset empties the collection, keeping its tables' capacity.
func (r *Rows) Reset() {
	for t, rows := range r.byTable {
		clear(rows)
		r.byTable[t] = rows[:0]
	}
}

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
	// Rows appends the domain rows of a decoded height, or of one part of
	// it when b.Part is set (see Part).
	Rows(b *Block, out *Rows) error
}

// StreamAdapter is an Adapter that can also index a height too large to
// hold decoded in memory (an Osmosis epoch block's /block_results exceeds
// 100 MB): it decodes the /block_results result from a stream and hands
// the height over in parts, whose rows its Rows builds one part at a time
// (see Part). The parts hold exactly the txs and events Decode gives, and
// the rows of all parts are exactly the rows of the whole Block.
//
// An adapter that embeds a StreamAdapter inherits DecodeStream: if it
// decodes differently (overrides Decode), it must override DecodeStream
// too. Its Rows must honour Part.
type StreamAdapter interface {
	Adapter
	// DecodeStream decodes a height from raw.Block (the /block result, in
	// memory; raw.Results is not used) and results, a stream of the
	// /block_results result. It calls part for every tx, in order, each
	// alone in the Txs of a Block that carries the header fields, then for
	// runs of the block-level events, in order, in Events. A part is valid
	// only during the call; an error from part stops the decode and is
	// returned. DecodeStream returns the header Block: the header fields and
	// the Stats of the whole height, no Txs or Events. It may fail with a
	// *RestartError or ErrNotStreamable after parts were handed over: the
	// caller then discards them.
	DecodeStream(raw RawBlock, results io.Reader, enc AttrEncoding, part func(*Block) error) (*Block, error)
}

// Part marks a Block that holds one part of a height decoded from a stream
// (StreamAdapter.DecodeStream): one tx, or a run of block-level events.
// Adapter.Rows is called on every part in order, with the same Part, then
// once more with Last set on the header Block (no Txs or Events). Rows of
// events and txs are built per part as usual; a handler that aggregates
// over the whole height (per-block sums) keeps its running totals in State
// and appends its rows on the Last call.
type Part struct {
	// Last is set on the final call, after every part.
	Last bool
	// State holds the handlers' running totals, each under a key of its own.
	State map[string]any
}

// RestartError is returned by a streaming decode with AttrAuto when the
// attribute encoding, which depends on the whole response, turned out to be
// other than the one parts were already decoded with: the caller discards
// the parts and decodes the height again with Attrs.
type RestartError struct {
	Attrs AttrEncoding
}

func (e *RestartError) Error() string {
	return fmt.Sprintf("attribute encoding resolved late; decode again with encoding %d", e.Attrs)
}

// ErrNotStreamable is returned by a streaming decode when the response
// cannot be decoded in one pass with the same result as a whole decode (a
// member repeated, or block-level event lists out of their begin, end,
// finalize order); the caller decodes the height whole instead.
var ErrNotStreamable = errors.New("response cannot be decoded as a stream")

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

// Genesis is what the indexer reads of a chain's genesis document (the
// `genesis` member of CometBFT's /genesis).
type Genesis struct {
	ChainID       string
	InitialHeight int64
	Time          time.Time
	// AppState is the application's genesis state (app_state).
	AppState json.RawMessage
}

// ParseGenesis reads a CometBFT genesis document. An absent or zero
// initial_height is 1, as CometBFT reads it.
func ParseGenesis(doc []byte) (*Genesis, error) {
	var d struct {
		ChainID       string          `json:"chain_id"`
		InitialHeight json.RawMessage `json:"initial_height"`
		GenesisTime   time.Time       `json:"genesis_time"`
		AppState      json.RawMessage `json:"app_state"`
	}
	if err := json.Unmarshal(doc, &d); err != nil {
		return nil, fmt.Errorf("genesis: %w", err)
	}
	g := &Genesis{ChainID: d.ChainID, Time: d.GenesisTime, AppState: d.AppState, InitialHeight: 1}
	if s := strings.Trim(string(d.InitialHeight), `"`); s != "" && s != "null" {
		h, err := strconv.ParseInt(s, 10, 64)
		if err != nil || h < 0 {
			return nil, fmt.Errorf("genesis: initial_height %s", d.InitialHeight)
		}
		if h > 0 {
			g.InitialHeight = h
		}
	}
	return g, nil
}

// GenesisHeight is the height of the rows of the state at genesis: they
// come before every block.
const GenesisHeight = 0

// ErrGenesisUnsupported is returned by GenesisRows for a genesis whose
// InitChain effects the adapter cannot reproduce exactly (a gentx message
// it does not know): the indexer then imports no genesis, and balances
// before the first height stay unknown rather than wrong.
var ErrGenesisUnsupported = errors.New("genesis not supported")

// GenesisAdapter is an Adapter that knows a chain's state at genesis as
// rows: the balances the genesis sets, plus what InitChain changes without
// emitting events (gentx self-delegations, module mints). The indexer
// writes them at GenesisHeight with the first batch of a chain indexed
// from its initial height.
type GenesisAdapter interface {
	Adapter
	// GenesisRows appends the rows of the state at genesis, at
	// GenesisHeight, to tables among Tables.
	GenesisRows(g *Genesis, out *Rows) error
	// GenesisTables lists the tables GenesisRows writes.
	GenesisTables() []Table
}

// StateTable is a table a StateAdapter writes from state snapshots: Key
// names the columns (besides chain_id and height) that identify an item,
// such as a market id; every other column is a value. A snapshot row is
// written only when its item is new or its values differ from the item's
// newest row at or below the snapshot height, so a catalog that does not
// change adds no rows.
type StateTable struct {
	Table
	Key []string
}

// StateQuery is a gRPC query a StateAdapter asks at every state snapshot,
// through abci_query at the snapshot height. A paginated query follows the
// cosmos-sdk convention: a PageRequest in field 1 of the request, the
// repeated items in field 1 of the response and a PageResponse in field 2.
// Otherwise the request is empty and field 1 of the response is the one
// item (a module's Params).
type StateQuery struct {
	Path      string
	Paginated bool
}

// StateAdapter is an Adapter that also reads part of a chain's state at
// every state snapshot (config snapshot_every): what the chain changes
// without saying so in its blocks, such as markets created by a
// governance proposal or a permissionless listing.
type StateAdapter interface {
	Adapter
	// StateQueries lists the queries of a snapshot.
	StateQueries() []StateQuery
	// StateRows appends the rows of the state at height, from items: the
	// protobuf bytes of each query's items (by path), in the node's order.
	StateRows(chainID string, height int64, items map[string][][]byte, out *Rows) error
	// StateTables lists the tables StateRows writes, with their keys.
	StateTables() []StateTable
}

// OpeningStateAdapter is an Adapter whose reports start from part of the
// chain's own state, such as open positions: a chain indexed from a height
// after its initial one imports that state at the height before, from the
// node (abci_query at that height), query by query and page by page, and
// commits it with its first batch.
type OpeningStateAdapter interface {
	Adapter
	// OpeningQueries lists the reads of the state.
	OpeningQueries() []OpeningQuery
	// OpeningRows appends the rows of one page of a query's items (see
	// OpeningQuery) read at height; query is the query's Name, key the
	// request's Key for a query of Each (empty otherwise).
	OpeningRows(chainID string, height int64, query, key string, items [][]byte, out *Rows) error
	// OpeningTables lists the tables OpeningRows writes: their rows lead
	// with chain_id and height, and their keys make a page written twice
	// add nothing.
	OpeningTables() []Table
}

// OpeningQuery is one read of the state an OpeningStateAdapter starts
// from, through abci_query at the height before a late start. Each query
// is imported, or found unavailable, on its own.
type OpeningQuery struct {
	// Path is the abci_query path: a gRPC method's, or for a store read
	// "/store/<store key>/subspace".
	Path string
	// Whole marks a gRPC query that is not paginated: its request is
	// empty (an Each query's: the request's Data) and field 1 of its
	// response repeats the items (Osmosis's AllPools). Otherwise a gRPC
	// query is paginated by the cosmos-sdk convention (see StateQuery);
	// an Each query's is Whole or a store key read.
	Whole bool
	// Prefix, when set, makes the query a read of a module store: every
	// key under Prefix (the request's data), answered in one response, a
	// Pairs{repeated Pair pairs = 1} whose items are the bytes of each
	// Pair{bytes key = 1, bytes value = 2}. A module's own gRPC queries do
	// not always list what a report starts from (Osmosis has no query of
	// every concentrated-liquidity position).
	Prefix []byte
	// Tables names the tables among OpeningTables the query's rows go to
	// (none: all of them). A query the node cannot serve drops the rows
	// staged in them; the others are imported without it.
	Tables []string
	// Each, when set, makes the query one read per request built from
	// the rows an earlier query staged (see OpeningEach).
	Each *OpeningEach
	// Unless names an earlier query that makes this one unneeded when it
	// was imported (a fallback): the query, and those of Each after it,
	// are then not read.
	Unless string
}

// OpeningEach makes an opening query a read per row of an earlier one:
// e.g. each concentrated-liquidity pool's ticks (no query lists every
// pool's), then each tick's record. The query is unavailable when the
// earlier one is.
type OpeningEach struct {
	// After is the Name of the earlier query; Table (one of its tables)
	// and Columns (read as text, NULL as "") are what the requests are
	// built from, its rows of the import's chain and height in the order
	// of the columns.
	After, Table string
	Columns      []string
	// Requests are the reads of one row (none: the row needs none).
	Requests func(row []string) ([]OpeningRequest, error)
}

// OpeningRequest is one read of an OpeningEach query: Data is the gRPC
// request (a paginated query's pagination is added to it) or, for a read
// of one store key (Path "/store/<store key>/key"), the key, whose value
// is the one item (none when the key is not set). Key names the read in
// the import's progress and in OpeningRows; it is unique in the query.
type OpeningRequest struct {
	Key  string
	Data []byte
}

// Name names the query in the import's progress and in what the import
// records (state_imports): its path, and for a store read "/" and the
// prefix in hex after it.
func (q OpeningQuery) Name() string {
	if len(q.Prefix) == 0 {
		return q.Path
	}
	return q.Path + "/" + hex.EncodeToString(q.Prefix)
}

// DescriptorAdapter is an Adapter that decodes messages from protobuf
// descriptors and takes more of them, before its own: shipped sets a chain
// is configured with (AddDescriptors, before the first Decode) and the
// node's own per application version (UseNodeDescriptors, at any time).
type DescriptorAdapter interface {
	Adapter
	AddDescriptors(sets ...*descriptorpb.FileDescriptorSet) error
	UseNodeDescriptors(versions []NodeDescriptors) error
	// MessageDecoderAt is what decodes a height's messages now.
	MessageDecoderAt(height int64) MessageDecoder
}

// NodeDescriptors are the descriptors a node served for one application
// version, in effect from FromHeight.
type NodeDescriptors struct {
	AppVersion string
	FromHeight int64
	Set        *descriptorpb.FileDescriptorSet
}

// MessageDecoder turns a message's type URL and protobuf bytes into the
// JSON the chain writes; complete is false when the bytes hold fields the
// decoder's descriptors lack (the JSON leaves them out).
type MessageDecoder interface {
	Decode(typeURL string, value []byte) (body json.RawMessage, complete bool, err error)
}
