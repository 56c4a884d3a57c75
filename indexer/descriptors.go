package indexer

import (
	"context"
	"errors"
	"fmt"

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
	version := info.Version
	if version == "" {
		version = "unknown"
	}
	return descriptors.Set{AppVersion: version, FirstHeight: info.LastBlockHeight, Set: set}, nil
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
		s, err := FetchDescriptors(ctx, ds)
		switch {
		case err == nil:
			isNew, err := descriptors.Save(ctx, x.db, x.cfg.ID, s)
			if err != nil {
				return err
			}
			if isNew {
				x.log.Info("stored the node's descriptors", "app_version", s.AppVersion, "files", len(s.Set.GetFile()), "height", s.FirstHeight)
			}
		case ctx.Err() != nil:
			return ctx.Err()
		default:
			x.log.Info("decoding with the shipped descriptor sets only", "reason", err)
		}
	}
	stored, err := descriptors.Load(ctx, x.db, x.cfg.ID)
	if err != nil {
		return err
	}
	if len(stored) > 0 {
		sets := make([]*descriptorpb.FileDescriptorSet, len(stored))
		for i, s := range stored {
			sets[i] = s.Set
		}
		if err := da.AddDescriptors(sets...); err != nil {
			return fmt.Errorf("%s: node descriptors: %w", x.cfg.ID, err)
		}
	}
	x.descriptorsLoaded = true
	return nil
}
