package indexer

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/uptrace/bun"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/descriptorpb"

	"github.com/chainlens/chainlens/chains"
	"github.com/chainlens/chainlens/indexer/cometbft"
	"github.com/chainlens/chainlens/store/descriptors"
)

// ReflectionPath is the cosmos-sdk reflection service's method (SDK 0.47
// and later) that returns every protobuf file descriptor the application
// registered: its FileDescriptorsResponse has the wire form of a
// google.protobuf.FileDescriptorSet (repeated FileDescriptorProto = 1).
const ReflectionPath = "/cosmos.reflection.v1.ReflectionService/FileDescriptors"

// DescriptorSource is a node that serves its application's descriptors.
type DescriptorSource interface {
	ABCIQuery(ctx context.Context, path string, data []byte, height int64) ([]byte, error)
	ABCIInfo(ctx context.Context) (cometbft.ABCIInfo, error)
}

func (s clientSource) ABCIQuery(ctx context.Context, path string, data []byte, height int64) ([]byte, error) {
	return s.c.ABCIQuery(ctx, path, data, height)
}

func (s clientSource) ABCIInfo(ctx context.Context) (cometbft.ABCIInfo, error) {
	return s.c.ABCIInfo(ctx)
}

// ErrNoReflection: the node does not serve the reflection service (SDK
// before 0.47, or the service not registered).
var ErrNoReflection = errors.New("the node serves no descriptors (cosmos.reflection.v1)")

// FetchDescriptors asks a node for its application's file descriptors and
// version.
func FetchDescriptors(ctx context.Context, src DescriptorSource) (descriptors.Set, error) {
	info, err := src.ABCIInfo(ctx)
	if err != nil {
		return descriptors.Set{}, err
	}
	b, err := src.ABCIQuery(ctx, ReflectionPath, nil, 0)
	if err != nil {
		return descriptors.Set{}, fmt.Errorf("%w: %v", ErrNoReflection, err)
	}
	set := &descriptorpb.FileDescriptorSet{}
	if err := proto.Unmarshal(b, set); err != nil {
		return descriptors.Set{}, fmt.Errorf("reflection answer: %w", err)
	}
	if len(set.GetFile()) == 0 {
		return descriptors.Set{}, ErrNoReflection
	}
	return descriptors.Set{AppVersion: versionName(info.Version), FirstHeight: info.LastBlockHeight, Set: set}, nil
}

// useNodeDescriptors gives a descriptor-driven adapter the node's own
// descriptors: fetched from the node and stored when its application
// version is new, then every stored version, newest first, before the
// adapter's shipped sets. A node without the reflection service leaves the
// shipped sets alone (logged); the stored versions still apply.
func (x *Cosmos) useNodeDescriptors(ctx context.Context) error {
	if x.descriptorsLoaded {
		return nil
	}
	da, ok := x.adapter.(chains.DescriptorAdapter)
	if !ok {
		return nil
	}
	if ds, ok := x.src.(DescriptorSource); ok {
		if err := x.storeNodeDescriptors(ctx, ds); err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			x.log.Info("decoding with the shipped descriptor sets only", "reason", err)
		}
	}
	if err := loadNodeDescriptors(ctx, x.db, x.cfg.ID, da); err != nil {
		return err
	}
	x.descriptorsLoaded = true
	return nil
}

// storeNodeDescriptors stores the node's descriptors unless its
// application version's are stored already (then the node is asked only
// its version, not for megabytes of descriptors).
func (x *Cosmos) storeNodeDescriptors(ctx context.Context, ds DescriptorSource) error {
	info, err := ds.ABCIInfo(ctx)
	if err != nil {
		return err
	}
	vs, err := descriptors.Versions(ctx, x.db, x.cfg.ID)
	if err != nil {
		return err
	}
	if slices.ContainsFunc(vs, func(v descriptors.Version) bool { return v.AppVersion == versionName(info.Version) }) {
		return nil
	}
	s, err := FetchDescriptors(ctx, ds)
	if err != nil {
		return err
	}
	isNew, err := descriptors.Save(ctx, x.db, x.cfg.ID, s)
	if err != nil {
		return err
	}
	if isNew {
		x.log.Info("stored the node's descriptors", "app_version", s.AppVersion, "files", len(s.Set.GetFile()), "height", s.FirstHeight)
	}
	return nil
}

// versionName is how an application version is stored ("unknown" when
// the node gives none).
func versionName(v string) string {
	if v == "" {
		return "unknown"
	}
	return v
}

// loadNodeDescriptors gives the adapter every stored version of the
// chain's node descriptors.
func loadNodeDescriptors(ctx context.Context, db bun.IDB, chainID string, da chains.DescriptorAdapter) error {
	stored, err := descriptors.Load(ctx, db, chainID)
	if err != nil {
		return err
	}
	if len(stored) == 0 {
		return nil
	}
	vs := make([]chains.NodeDescriptors, len(stored))
	for i, s := range stored {
		vs[i] = chains.NodeDescriptors{AppVersion: s.AppVersion, FromHeight: s.FirstHeight, Set: s.Set}
	}
	if err := da.UseNodeDescriptors(vs); err != nil {
		return fmt.Errorf("%s: node descriptors: %w", chainID, err)
	}
	return nil
}

// versionCheckEvery is how often, at most, messages of unknown types make
// the indexer ask the node whether its application changed (an upgrade
// brings new message types, and the node serves their descriptors).
const versionCheckEvery = time.Minute

// checkNodeVersion asks the node for its descriptors when its application
// version is one not stored yet, stores them and decodes with them from
// then on (messages already kept raw wait for --redecode). It runs on the
// commit path, at most once per versionCheckEvery; a failure is logged.
func (x *Cosmos) checkNodeVersion(ctx context.Context) {
	da, ok := x.adapter.(chains.DescriptorAdapter)
	ds, ok2 := x.src.(DescriptorSource)
	if !ok || !ok2 || time.Since(x.versionChecked) < versionCheckEvery {
		return
	}
	x.versionChecked = time.Now()
	before, err := descriptors.Versions(ctx, x.db, x.cfg.ID)
	if err != nil {
		return
	}
	if err := x.storeNodeDescriptors(ctx, ds); err != nil {
		x.log.Info("messages of unknown types; the node serves no new descriptors", "err", err)
		return
	}
	after, err := descriptors.Versions(ctx, x.db, x.cfg.ID)
	if err != nil || len(after) == len(before) {
		return
	}
	if err := loadNodeDescriptors(ctx, x.db, x.cfg.ID, da); err != nil {
		x.log.Warn("using the node's descriptors", "err", err)
		return
	}
	x.log.Info("the node runs a new application version: decoding with its descriptors", "app_version", after[0].AppVersion, "from_height", after[0].FirstHeight)
}
