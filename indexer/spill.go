package indexer

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"

	"github.com/uptrace/bun"

	"github.com/chainlens/chainlens/chains"
	"github.com/chainlens/chainlens/store"
)

// spill holds the rows of one height read as a stream, as COPY text in a
// temporary file per table (os.TempDir()), so that they are never held in
// memory: the fetch worker appends each part's rows as it decodes them and
// the writer copies the files into the batch transaction.
//
// The files are unlinked as soon as they are created (where the OS allows
// it), so that their space returns when they are closed, after the
// height's commit or failure, or when the process dies, even by SIGKILL.
type spill struct {
	tables []chains.Table
	files  map[string]*spillFile
	line   bytes.Buffer
	bytes  int64 // COPY text written
}

type spillFile struct {
	f    *os.File
	w    *bufio.Writer
	rows int64
	path string // set while the file could not be unlinked yet
}

func newSpill(tables []chains.Table) *spill {
	return &spill{tables: tables, files: map[string]*spillFile{}}
}

// add appends rows (one part's) to the tables' files, then empties rows.
// Rows of tables the writer does not know are dropped, as commit drops
// them from memory.
func (s *spill) add(rows *chains.Rows) error {
	for _, t := range s.tables {
		rs := rows.Of(t.Name)
		if len(rs) == 0 {
			continue
		}
		sf, err := s.file(t.Name)
		if err != nil {
			return err
		}
		for _, r := range rs {
			s.line.Reset()
			if err := store.EncodeCopyRow(&s.line, t.Columns, r); err != nil {
				return fmt.Errorf("spill %s: %w", t.Name, err)
			}
			if _, err := sf.w.Write(s.line.Bytes()); err != nil {
				return fmt.Errorf("spill %s: %w", t.Name, err)
			}
			sf.rows++
			s.bytes += int64(s.line.Len())
		}
	}
	rows.Reset()
	return nil
}

func (s *spill) file(table string) (*spillFile, error) {
	if sf, ok := s.files[table]; ok {
		return sf, nil
	}
	f, err := os.CreateTemp("", "chainlens-spill-"+table+"-*.copy")
	if err != nil {
		return nil, fmt.Errorf("spill %s: %w", table, err)
	}
	sf := &spillFile{f: f, w: bufio.NewWriterSize(f, 256<<10)}
	if os.Remove(f.Name()) != nil {
		sf.path = f.Name() // removed on close instead
	}
	s.files[table] = sf
	return sf, nil
}

// finish flushes the files once every row is added.
func (s *spill) finish() error {
	for t, sf := range s.files {
		if err := sf.w.Flush(); err != nil {
			return fmt.Errorf("spill %s: %w", t, err)
		}
	}
	return nil
}

// rows is the number of rows spilled over all tables.
func (s *spill) rows() int64 {
	var n int64
	for _, sf := range s.files {
		n += sf.rows
	}
	return n
}

// copyTable copies table t's spilled rows on conn (in the caller's
// transaction) in chunks, and checks that every row arrived.
func (s *spill) copyTable(ctx context.Context, conn bun.Conn, t chains.Table) (int64, error) {
	sf, ok := s.files[t.Name]
	if !ok {
		return 0, nil
	}
	if _, err := sf.f.Seek(0, io.SeekStart); err != nil {
		return 0, fmt.Errorf("spill %s: %w", t.Name, err)
	}
	n, err := store.CopyText(ctx, conn, t.Name, t.Columns, sf.f)
	if err != nil {
		return n, err
	}
	if n != sf.rows {
		return n, fmt.Errorf("spill %s: copied %d rows of %d", t.Name, n, sf.rows)
	}
	return n, nil
}

// remove closes and deletes the files.
func (s *spill) remove() {
	for t, sf := range s.files {
		_ = sf.f.Close()
		if sf.path != "" {
			_ = os.Remove(sf.path)
		}
		delete(s.files, t)
	}
}
