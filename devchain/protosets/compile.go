package protosets

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/bufbuild/protocompile"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/types/descriptorpb"
)

// compileProtos compiles .proto files under root (paths relative to it)
// into file descriptors. Their imports come from root or from deps (the
// descriptors of sets built before, e.g. gogoproto and cosmos-sdk types).
func compileProtos(ctx context.Context, root string, paths []string, deps []*descriptorpb.FileDescriptorProto) ([]*descriptorpb.FileDescriptorProto, error) {
	byPath := map[string]*descriptorpb.FileDescriptorProto{}
	for _, d := range deps {
		byPath[d.GetName()] = d
	}
	c := protocompile.Compiler{
		Resolver: protocompile.WithStandardImports(protocompile.CompositeResolver{
			&protocompile.SourceResolver{Accessor: func(p string) (f io.ReadCloser, err error) {
				return os.Open(filepath.Join(root, filepath.FromSlash(p)))
			}},
			protocompile.ResolverFunc(func(p string) (protocompile.SearchResult, error) {
				if d, ok := byPath[p]; ok {
					return protocompile.SearchResult{Proto: d}, nil
				}
				return protocompile.SearchResult{}, os.ErrNotExist
			}),
		}),
	}
	files, err := c.Compile(ctx, paths...)
	if err != nil {
		return nil, fmt.Errorf("compile %v: %w", paths, err)
	}
	out := make([]*descriptorpb.FileDescriptorProto, len(files))
	for i, f := range files {
		out[i] = protodesc.ToFileDescriptorProto(f)
	}
	return out, nil
}
