// Package descriptors stores the protobuf file descriptors a chain's node
// serves (its reflection service), one set per application version, so
// messages are decoded with the chain's own types, and re-decoded later,
// without asking the node again.
package descriptors

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"io"

	"github.com/uptrace/bun"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/descriptorpb"
)

// Set is the descriptor set of one application version of a chain.
type Set struct {
	AppVersion string
	// FirstHeight is the node's last block height when the set was first
	// fetched: the version ran at that height.
	FirstHeight int64
	Set         *descriptorpb.FileDescriptorSet
}

// Save stores a chain's set of an application version unless one is
// stored already (the first fetch of a version keeps its height). It
// reports whether the set was new.
func Save(ctx context.Context, db bun.IDB, chainID string, s Set) (bool, error) {
	b, err := proto.MarshalOptions{Deterministic: true}.Marshal(s.Set)
	if err != nil {
		return false, err
	}
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	if _, err := zw.Write(b); err != nil {
		return false, err
	}
	if err := zw.Close(); err != nil {
		return false, err
	}
	res, err := db.NewRaw(`INSERT INTO node_descriptors (chain_id, app_version, first_height, files, set_gz) VALUES (?, ?, ?, ?, ?)
		ON CONFLICT (chain_id, app_version) DO NOTHING`, chainID, s.AppVersion, s.FirstHeight, len(s.Set.GetFile()), gz.Bytes()).Exec(ctx)
	if err != nil {
		return false, fmt.Errorf("save descriptors of %s %s: %w", chainID, s.AppVersion, err)
	}
	n, err := res.RowsAffected()
	return n > 0, err
}

// Load returns a chain's stored sets, the newest application version
// (highest first height) first.
func Load(ctx context.Context, db bun.IDB, chainID string) ([]Set, error) {
	var rows []struct {
		AppVersion  string `bun:"app_version"`
		FirstHeight int64  `bun:"first_height"`
		SetGz       []byte `bun:"set_gz"`
	}
	if err := db.NewRaw(`SELECT app_version, first_height, set_gz FROM node_descriptors WHERE chain_id = ? ORDER BY first_height DESC, fetched_at DESC`,
		chainID).Scan(ctx, &rows); err != nil {
		return nil, fmt.Errorf("load descriptors of %s: %w", chainID, err)
	}
	out := make([]Set, 0, len(rows))
	for _, r := range rows {
		zr, err := gzip.NewReader(bytes.NewReader(r.SetGz))
		if err != nil {
			return nil, fmt.Errorf("descriptors of %s %s: %w", chainID, r.AppVersion, err)
		}
		b, err := io.ReadAll(zr)
		if err != nil {
			return nil, fmt.Errorf("descriptors of %s %s: %w", chainID, r.AppVersion, err)
		}
		set := &descriptorpb.FileDescriptorSet{}
		if err := proto.Unmarshal(b, set); err != nil {
			return nil, fmt.Errorf("descriptors of %s %s: %w", chainID, r.AppVersion, err)
		}
		out = append(out, Set{AppVersion: r.AppVersion, FirstHeight: r.FirstHeight, Set: set})
	}
	return out, nil
}

// Version is one stored application version of a chain's descriptors.
type Version struct {
	AppVersion  string `bun:"app_version"`
	FirstHeight int64  `bun:"first_height"`
	Files       int    `bun:"files"`
}

// Versions lists a chain's stored descriptor versions, newest first,
// without reading the sets.
func Versions(ctx context.Context, db bun.IDB, chainID string) ([]Version, error) {
	var vs []Version
	if err := db.NewRaw(`SELECT app_version, first_height, files FROM node_descriptors WHERE chain_id = ? ORDER BY first_height DESC, fetched_at DESC`,
		chainID).Scan(ctx, &vs); err != nil {
		return nil, fmt.Errorf("descriptor versions of %s: %w", chainID, err)
	}
	return vs, nil
}
