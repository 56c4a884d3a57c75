package cosmos

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/chainlens/chainlens/chains"
)

// DecodeStream decodes a height whose /block_results result is read from
// a stream, with the kind's prefix and message registry (see
// DecodeBlockStream).
func (a *Adapter) DecodeStream(raw chains.RawBlock, results io.Reader, enc chains.AttrEncoding, part func(*chains.Block) error) (*chains.Block, error) {
	return DecodeBlockStream(raw, results, Options{Bech32Prefix: a.prefix, Attrs: enc, Registry: a.MessageDecoderAt(raw.Height)}, part)
}

var _ chains.StreamAdapter = (*Adapter)(nil)

// BlockEventRun is the most block-level events DecodeBlockStream hands
// over in one part.
const BlockEventRun = 256

// DecodeBlockStream is DecodeBlock for a height too large to hold decoded
// in memory: raw.Block is the /block result (in memory; raw.Results is not
// used) and results streams the /block_results result. It walks the
// result's members with a JSON token reader and decodes one element of
// txs_results, begin_block_events, end_block_events or
// finalize_block_events at a time, with DecodeBlock's rules: it calls part
// for every tx, in order, alone in the Txs of a Block carrying the header
// fields, then for runs of at most BlockEventRun block-level events. The
// part is only valid during the call. It returns the header Block with the
// Stats of the height and no Txs or Events.
//
// The txs and events handed over are exactly DecodeBlock's, with two
// exceptions that return errors instead, after which the caller discards
// the parts it was given:
//
//   - With chains.AttrAuto the attribute encoding is a verdict over the
//     whole response (DetectBase64). Parts are decoded with the verdict so
//     far (plain until a non-empty key reads as base64); if the final
//     verdict differs from the one parts already depended on, the decode
//     fails with a *chains.RestartError naming the encoding to decode the
//     height with again. Real responses decide on their first key.
//   - A response with a member repeated, or block-level event lists out of
//     the begin, end, finalize order (their event indexes would depend on
//     what follows), fails with chains.ErrNotStreamable: decode it whole.
//
// Errors of the stream itself are returned wrapped, so that errors.Is
// finds them (io.ErrUnexpectedEOF for a truncated stream).
func DecodeBlockStream(raw chains.RawBlock, results io.Reader, opt Options, part func(*chains.Block) error) (*chains.Block, error) {
	return decodeStream(raw, results, opt, part, BlockEventRun)
}

func decodeStream(raw chains.RawBlock, results io.Reader, opt Options, part func(*chains.Block) error, run int) (*chains.Block, error) {
	blk, out, err := decodeHeader(raw)
	if err != nil {
		return nil, err
	}
	s := &streamDecoder{
		dec: json.NewDecoder(results), opt: opt, blk: blk, out: out, fn: part, run: max(run, 1),
		explicit: opt.Attrs != chains.AttrAuto, b64: opt.Attrs == chains.AttrBase64, lastList: -1,
	}
	s.part = &chains.Block{ChainID: out.ChainID, Height: out.Height, Hash: out.Hash, Time: out.Time, Proposer: out.Proposer, AppHash: out.AppHash}
	if err := s.result(); err != nil {
		var re *chains.RestartError
		if errors.As(err, &re) || errors.Is(err, chains.ErrNotStreamable) || errors.Is(err, ErrMismatch) || errors.Is(err, errPart) {
			return nil, fmt.Errorf("height %d: %w", raw.Height, err)
		}
		return nil, fmt.Errorf("height %d: /block_results: %w", raw.Height, err)
	}
	return out, nil
}

// errPart wraps the errors of the part callback.
var errPart = errors.New("part")

// Block-level event lists, in the order DecodeBlock numbers their events.
var blockLists = [...]struct {
	member       string
	mode         string
	modeFromAttr bool
}{
	{"begin_block_events", ModeBeginBlock, false},
	{"end_block_events", ModeEndBlock, false},
	{"finalize_block_events", "", true},
}

type streamDecoder struct {
	dec  *json.Decoder
	opt  Options
	blk  *decodedBlock
	out  *chains.Block // header and Stats, returned
	part *chains.Block // handed to fn, reused
	fn   func(*chains.Block) error
	run  int

	// Attribute encoding: explicit, or the verdict so far (b64) with the
	// count of non-empty attributes decoded under each verdict.
	explicit           bool
	b64                bool
	det                b64Detector
	usedPlain, usedB64 int
	seen               map[string]bool // known members seen
	height             int64
	txs                int // tx results handed over
	lastList           int // index in blockLists of the last list seen
	blockEvents        int // block-level events decoded
	pending            []chains.Event
	txBuf              [1]chains.Tx
}

// result walks the members of the /block_results result.
func (s *streamDecoder) result() error {
	tok, err := s.dec.Token()
	if err != nil {
		return malformed(err)
	}
	switch tok {
	case nil: // null reads as an empty result, as in DecodeBlock
		return s.finish()
	case json.Delim('{'):
	default:
		return fmt.Errorf("%w: result is %v, not an object", ErrMalformed, tok)
	}
	s.seen = map[string]bool{}
	for s.dec.More() {
		tok, err := s.dec.Token()
		if err != nil {
			return malformed(err)
		}
		key, _ := tok.(string)
		member := knownMember(key)
		if member != "" {
			if s.seen[member] {
				return fmt.Errorf("member %s repeated: %w", member, chains.ErrNotStreamable)
			}
			s.seen[member] = true
		}
		switch member {
		case "height":
			var n flexInt
			if err := s.dec.Decode(&n); err != nil {
				return malformed(err)
			}
			if s.height = int64(n); s.height != s.out.Height {
				return s.heightMismatch()
			}
		case "txs_results":
			err = s.txResults()
		case "":
			err = skipValue(s.dec)
		default:
			err = s.blockList(member)
		}
		if err != nil {
			return err
		}
	}
	if _, err := s.dec.Token(); err != nil { // the closing brace
		return malformed(err)
	}
	return s.finish()
}

// knownMember returns the resultsJSON member key names (matched without
// regard to case, as encoding/json does), or "".
func knownMember(key string) string {
	for _, m := range [...]string{"height", "txs_results", "begin_block_events", "end_block_events", "finalize_block_events"} {
		if strings.EqualFold(key, m) {
			return m
		}
	}
	return ""
}

func (s *streamDecoder) heightMismatch() error {
	return fmt.Errorf("/block_results is for height %d: %w", s.height, ErrMismatch)
}

// txResults decodes txs_results one element at a time.
func (s *streamDecoder) txResults() error {
	ok, err := s.openArray("txs_results")
	if !ok || err != nil {
		return err
	}
	for s.dec.More() {
		var raw json.RawMessage
		if err := s.dec.Decode(&raw); err != nil {
			return malformed(err)
		}
		i := s.txs
		if i >= len(s.blk.txs) {
			return fmt.Errorf("/block has %d txs but /block_results has more txs_results: %w", len(s.blk.txs), ErrMismatch)
		}
		var r txResultJSON
		if err := fastJSON.Unmarshal(raw, &r); err != nil {
			return malformed(err)
		}
		b64, err := s.encoding(r.Events)
		if err != nil {
			return err
		}
		res, err := convertTxResult(&r, i, b64)
		if err != nil {
			return err
		}
		s.txBuf[0] = assembleTx(s.blk.txs[i], i, &res, s.opt, &s.out.Stats)
		s.blk.txs[i] = nil // the bytes are not needed again
		s.part.Txs, s.part.Events = s.txBuf[:], nil
		if err := s.fn(s.part); err != nil {
			return fmt.Errorf("%w: %w", errPart, err)
		}
		s.txBuf[0] = chains.Tx{}
		s.txs++
	}
	_, err = s.dec.Token() // ]
	return malformed(err)
}

// blockList decodes a block-level event list one event at a time.
func (s *streamDecoder) blockList(member string) error {
	k := 0
	for k < len(blockLists) && blockLists[k].member != member {
		k++
	}
	if k < s.lastList {
		return fmt.Errorf("%s after %s: %w", member, blockLists[s.lastList].member, chains.ErrNotStreamable)
	}
	s.lastList = k
	ok, err := s.openArray(member)
	if !ok || err != nil {
		return err
	}
	l := blockLists[k]
	one := make([]eventJSON, 1)
	for s.dec.More() {
		var raw json.RawMessage
		if err := s.dec.Decode(&raw); err != nil {
			return malformed(err)
		}
		one[0] = eventJSON{}
		if err := fastJSON.Unmarshal(raw, &one[0]); err != nil {
			return malformed(err)
		}
		b64, err := s.encoding(one)
		if err != nil {
			return err
		}
		n := len(s.pending)
		s.pending = convertEvents(s.pending, one, -1, b64, l.mode, l.modeFromAttr)
		s.pending[n].Index = s.blockEvents
		s.blockEvents++
		if len(s.pending) >= s.run {
			if err := s.flushEvents(); err != nil {
				return err
			}
		}
	}
	_, err = s.dec.Token() // ]
	return malformed(err)
}

// openArray reads the start of an array member: ok is false for null.
func (s *streamDecoder) openArray(member string) (ok bool, err error) {
	tok, err := s.dec.Token()
	if err != nil {
		return false, malformed(err)
	}
	switch tok {
	case nil:
		return false, nil
	case json.Delim('['):
		return true, nil
	}
	return false, fmt.Errorf("%w: %s is %v, not an array", ErrMalformed, member, tok)
}

func (s *streamDecoder) flushEvents() error {
	if len(s.pending) == 0 {
		return nil
	}
	s.part.Txs, s.part.Events = nil, s.pending
	if err := s.fn(s.part); err != nil {
		return fmt.Errorf("%w: %w", errPart, err)
	}
	clear(s.pending)
	s.pending = s.pending[:0]
	return nil
}

// encoding returns whether the attributes of evs, the next events of the
// response, are decoded as base64, following DetectBase64's verdict over
// what was read so far; see DecodeBlockStream.
func (s *streamDecoder) encoding(evs []eventJSON) (bool, error) {
	if s.explicit {
		return s.b64, nil
	}
	s.det.add(evs)
	switch {
	case s.det.failed:
		if s.usedB64 > 0 {
			return false, &chains.RestartError{Attrs: chains.AttrPlain}
		}
		s.b64 = false
	case s.det.seen && s.usedPlain == 0:
		s.b64 = true
	}
	// Attributes whose key and value are both empty read the same either way.
	n := 0
	for _, e := range evs {
		for _, a := range e.Attributes {
			if a.Key != "" || a.Value != "" {
				n++
			}
		}
	}
	if s.b64 {
		s.usedB64 += n
	} else {
		s.usedPlain += n
	}
	return s.b64, nil
}

// finish checks the whole response once it is read.
func (s *streamDecoder) finish() error {
	if err := s.flushEvents(); err != nil {
		return err
	}
	if s.height != s.out.Height {
		return s.heightMismatch()
	}
	if s.txs != len(s.blk.txs) {
		return fmt.Errorf("/block has %d txs but /block_results has %d txs_results: %w", len(s.blk.txs), s.txs, ErrMismatch)
	}
	if s.explicit {
		s.out.Stats.Base64Attributes = s.b64
		return nil
	}
	final := s.det.base64()
	switch {
	case final && s.usedPlain > 0:
		return &chains.RestartError{Attrs: chains.AttrBase64}
	case !final && s.usedB64 > 0:
		return &chains.RestartError{Attrs: chains.AttrPlain}
	}
	s.out.Stats.Base64Attributes = final
	return nil
}

// skipValue reads past one JSON value.
func skipValue(dec *json.Decoder) error {
	depth := 0
	for {
		tok, err := dec.Token()
		if err != nil {
			return malformed(err)
		}
		switch tok {
		case json.Delim('{'), json.Delim('['):
			depth++
		case json.Delim('}'), json.Delim(']'):
			depth--
		}
		if depth == 0 {
			return nil
		}
	}
}

// malformed wraps a JSON or stream error (nil stays nil).
func malformed(err error) error {
	if err == nil {
		return nil
	}
	if err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	return fmt.Errorf("%w: %w", ErrMalformed, err)
}
