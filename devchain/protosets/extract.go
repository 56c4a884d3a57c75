// Package protosets builds the protobuf descriptor sets chainlens ships
// (chains/protoset/sets) from Go modules as the module proxy serves them:
// every generated .pb.go (or cosmos-proto .pulsar.go) file embeds its .proto file's FileDescriptorProto
// (gogoproto: gzipped, in a fileDescriptor_<hash> variable; protoc-gen-go:
// raw, in file_<name>_rawDesc), so a module's descriptors are read from its
// source without a proto compiler, its include paths or its build.
package protosets

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/chainlens/chainlens/chains/protoset"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/descriptorpb"
)

// ExtractDir returns the file descriptors embedded in the generated Go
// files under dir, in a stable order (by file path, then position). Test
// files, testdata and vendored code are skipped. dir may also name one
// file.
func ExtractDir(dir string) ([]*descriptorpb.FileDescriptorProto, error) {
	var out []*descriptorpb.FileDescriptorProto
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case "testdata", "vendor", "node_modules", ".git":
				return filepath.SkipDir
			}
			return nil
		}
		if !(strings.HasSuffix(path, ".pb.go") || strings.HasSuffix(path, ".pulsar.go")) || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		fds, err := ExtractFile(path)
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		out = append(out, fds...)
		return nil
	})
	return out, err
}

// ExtractFile returns the file descriptors embedded in one generated Go
// file (usually one; none for a file without).
func ExtractFile(path string) ([]*descriptorpb.FileDescriptorProto, error) {
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if !bytes.Contains(src, []byte("fileDescriptor_")) && !bytes.Contains(src, []byte("_rawDesc")) {
		return nil, nil
	}
	f, err := parser.ParseFile(token.NewFileSet(), path, src, parser.SkipObjectResolution)
	if err != nil {
		return nil, err
	}
	var out []*descriptorpb.FileDescriptorProto
	for _, decl := range f.Decls {
		gd, ok := decl.(*ast.GenDecl)
		if !ok || (gd.Tok != token.VAR && gd.Tok != token.CONST) {
			continue
		}
		for _, spec := range gd.Specs {
			vs, ok := spec.(*ast.ValueSpec)
			if !ok || len(vs.Names) != 1 || len(vs.Values) != 1 {
				continue
			}
			name := vs.Names[0].Name
			if !strings.HasPrefix(name, "fileDescriptor_") && !(strings.HasPrefix(name, "file_") && strings.HasSuffix(name, "_rawDesc")) {
				continue
			}
			b, ok := literalBytes(vs.Values[0])
			if !ok {
				continue // e.g. a reference to another variable
			}
			fd, err := descriptorOf(b)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", name, err)
			}
			out = append(out, fd)
		}
	}
	return out, nil
}

// literalBytes evaluates a []byte{...} composite literal of integer
// literals, or a string literal or a + concatenation of string literals.
func literalBytes(e ast.Expr) ([]byte, bool) {
	switch v := e.(type) {
	case *ast.CompositeLit:
		b := make([]byte, 0, len(v.Elts))
		for _, el := range v.Elts {
			lit, ok := el.(*ast.BasicLit)
			if !ok || lit.Kind != token.INT {
				return nil, false
			}
			n, err := strconv.ParseUint(lit.Value, 0, 8)
			if err != nil {
				return nil, false
			}
			b = append(b, byte(n))
		}
		return b, true
	case *ast.BasicLit:
		if v.Kind != token.STRING {
			return nil, false
		}
		s, err := strconv.Unquote(v.Value)
		return []byte(s), err == nil
	case *ast.BinaryExpr:
		if v.Op != token.ADD {
			return nil, false
		}
		x, ok1 := literalBytes(v.X)
		y, ok2 := literalBytes(v.Y)
		return append(x, y...), ok1 && ok2
	case *ast.ParenExpr:
		return literalBytes(v.X)
	}
	return nil, false
}

// descriptorOf decodes a FileDescriptorProto, gunzipping it first when it
// is gzipped (gogoproto's form).
func descriptorOf(b []byte) (*descriptorpb.FileDescriptorProto, error) {
	b, err := protoset.Gunzip(b)
	if err != nil {
		return nil, err
	}
	fd := &descriptorpb.FileDescriptorProto{}
	if err := proto.Unmarshal(b, fd); err != nil {
		return nil, err
	}
	if fd.GetName() == "" {
		return nil, fmt.Errorf("descriptor without a file name")
	}
	return fd, nil
}
