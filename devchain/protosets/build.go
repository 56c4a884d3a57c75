package protosets

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/descriptorpb"
)

// Manifest lists the shipped descriptor sets and the module versions each
// is built from (chains/protoset/sets/sets.json).
type Manifest struct {
	Comment string `json:"comment,omitempty"`
	Sets    []Set  `json:"sets"`
}

// Set is one shipped descriptor set.
type Set struct {
	Name    string   `json:"name"`
	About   string   `json:"about,omitempty"`
	Modules []Module `json:"modules,omitempty"`
	// Protos are .proto files under the manifest's proto/ folder, for
	// modules the module proxy does not serve; their imports come from the
	// sets built before this one.
	Protos []string `json:"protos,omitempty"`
	// Files and Types are filled by the build: how many .proto files and
	// message types the set holds.
	Files    int `json:"files"`
	Messages int `json:"messages"`
}

// Module is a Go module at a pinned version; Sum is the go.sum hash of its
// zip, recorded by the first build and checked by every later one.
type Module struct {
	Path    string `json:"path"`
	Version string `json:"version"`
	Sum     string `json:"sum,omitempty"`
	// Under, when set, keeps only the generated files below these
	// directories of the module (e.g. a chain's own x/ and proto packages,
	// without the copies of other modules' types it vendors).
	Under []string `json:"under,omitempty"`
}

// Build downloads every module of the manifest at dir/sets.json with the
// go command, extracts the descriptors of its generated code and writes
// each set to dir/<name>.binpb.gz (a gzipped FileDescriptorSet, the
// module listed first winning a path both hold), then rewrites the
// manifest with the sums and counts.
func Build(ctx context.Context, dir string, logf func(string, ...any)) error {
	path := filepath.Join(dir, "sets.json")
	raw, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var man Manifest
	if err := json.Unmarshal(raw, &man); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	var built []*descriptorpb.FileDescriptorProto // every set so far, for imports of protos
	for i := range man.Sets {
		s := &man.Sets[i]
		set := &descriptorpb.FileDescriptorSet{}
		seen := map[string]bool{}
		if len(s.Protos) > 0 {
			fds, err := compileProtos(ctx, filepath.Join(dir, "..", "proto"), s.Protos, built)
			if err != nil {
				return fmt.Errorf("set %s: %w", s.Name, err)
			}
			for _, fd := range fds {
				if s := slices.IndexFunc(s.Protos, func(p string) bool { return p == fd.GetName() }); s < 0 {
					continue // an import
				}
				seen[fd.GetName()] = true
				fd.SourceCodeInfo = nil
				set.File = append(set.File, fd)
			}
			logf("set %s: %d .proto files compiled", s.Name, len(s.Protos))
		}
		for j := range s.Modules {
			m := &s.Modules[j]
			modDir, sum, err := download(ctx, m.Path, m.Version)
			if err != nil {
				return err
			}
			if m.Sum != "" && m.Sum != sum {
				return fmt.Errorf("%s@%s: the module's hash is %s, the manifest pins %s", m.Path, m.Version, sum, m.Sum)
			}
			m.Sum = sum
			roots := []string{modDir}
			if len(m.Under) > 0 {
				roots = roots[:0]
				for _, u := range m.Under {
					roots = append(roots, filepath.Join(modDir, filepath.FromSlash(u)))
				}
			}
			n := 0
			for _, root := range roots {
				fds, err := ExtractDir(root)
				if err != nil {
					return fmt.Errorf("%s@%s: %w", m.Path, m.Version, err)
				}
				for _, fd := range fds {
					if seen[fd.GetName()] {
						continue
					}
					seen[fd.GetName()] = true
					fd.SourceCodeInfo = nil
					set.File = append(set.File, fd)
					n++
				}
			}
			logf("set %s: %s@%s: %d files", s.Name, m.Path, m.Version, n)
		}
		sort.Slice(set.File, func(a, b int) bool { return set.File[a].GetName() < set.File[b].GetName() })
		built = append(built, set.File...)
		s.Files, s.Messages = len(set.File), countMessages(set.File)
		if err := writeSet(filepath.Join(dir, s.Name+".binpb.gz"), set); err != nil {
			return err
		}
	}
	out, err := json.MarshalIndent(man, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(out, '\n'), 0o644)
}

func countMessages(fs []*descriptorpb.FileDescriptorProto) int {
	var count func([]*descriptorpb.DescriptorProto) int
	count = func(ms []*descriptorpb.DescriptorProto) int {
		n := 0
		for _, m := range ms {
			if !m.GetOptions().GetMapEntry() {
				n++
			}
			n += count(m.NestedType)
		}
		return n
	}
	n := 0
	for _, f := range fs {
		n += count(f.MessageType)
	}
	return n
}

// writeSet writes a set deterministically: the same descriptors give the
// same bytes (no gzip timestamp, deterministic protobuf).
func writeSet(path string, set *descriptorpb.FileDescriptorSet) error {
	b, err := proto.MarshalOptions{Deterministic: true}.Marshal(set)
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	zw, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if err != nil {
		return err
	}
	if _, err := zw.Write(b); err != nil {
		return err
	}
	if err := zw.Close(); err != nil {
		return err
	}
	return os.WriteFile(path, buf.Bytes(), 0o644)
}

// download fetches a module into the module cache and returns its
// directory and go.sum hash. The checksum database is not consulted (it
// may be unreachable); the manifest pins each hash instead.
func download(ctx context.Context, path, version string) (dir, sum string, err error) {
	cmd := exec.CommandContext(ctx, "go", "mod", "download", "-json", path+"@"+version)
	cmd.Env = append(os.Environ(), "GOSUMDB=off", "GOFLAGS=-mod=mod")
	cmd.Dir = os.TempDir() // outside any module: nothing is added to a go.mod
	out, runErr := cmd.Output()
	var info struct{ Dir, Sum, Error string }
	if err := json.Unmarshal(out, &info); err != nil {
		return "", "", fmt.Errorf("go mod download %s@%s: %v %w", path, version, runErr, err)
	}
	if info.Error != "" || info.Dir == "" {
		return "", "", fmt.Errorf("go mod download %s@%s: %s", path, version, info.Error)
	}
	return info.Dir, info.Sum, nil
}
