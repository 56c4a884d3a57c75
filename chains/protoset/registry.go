// Package protoset decodes protobuf messages of any cosmos chain to the
// proto3 JSON the chain itself writes, from file descriptors rather than
// compiled Go types: the descriptor sets shipped in the binary (sets/, built
// by `chainlens-dev protosets`) and those a node serves through its
// reflection service. One Registry serves one chain; it is immutable and
// safe for concurrent use.
package protoset

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/dynamicpb"
)

// ErrUnknownType is returned for a type URL the registry does not know.
var ErrUnknownType = errors.New("unknown message type")

// Registry resolves message types by name and type URL.
type Registry struct {
	files *protoregistry.Files
	types map[protoreflect.FullName]*msgType
	// Skipped names the files left out because another file of the same
	// path or defining the same names came first.
	Skipped []string
}

// msgType is one message type with what the JSON encoder needs of it.
type msgType struct {
	desc protoreflect.MessageDescriptor
	typ  protoreflect.MessageType
	// fields are the message's fields in declaration order with their
	// gogoproto options, resolved once.
	fields []field
	wkt    wellKnown
}

// field is one field of a message type.
type field struct {
	fd   protoreflect.FieldDescriptor
	name string // the proto name, JSON-quoted
	gogo gogoOptions
}

// New builds a registry from descriptor sets; for a file path or a name
// defined in more than one set, the earlier set wins (put a chain's own
// set before the common ones). The well-known google.protobuf files are
// always available. Imports that no set provides (option-only files such
// as google/api/annotations.proto) are tolerated: only a message field of
// an unresolved type fails, and only when a message uses it.
func New(sets ...*descriptorpb.FileDescriptorSet) (*Registry, error) {
	byPath := map[string]*descriptorpb.FileDescriptorProto{}
	var order []string
	for _, s := range sets {
		var paths []string
		for _, f := range s.GetFile() {
			if _, dup := byPath[f.GetName()]; dup {
				continue
			}
			byPath[f.GetName()] = f
			paths = append(paths, f.GetName())
		}
		// Set by set, in a stable order within each: where two files of
		// different paths define one name, the earlier set's file wins.
		sort.Strings(paths)
		order = append(order, paths...)
	}
	r := &Registry{files: new(protoregistry.Files), types: map[protoreflect.FullName]*msgType{}}
	state := map[string]int{} // 0 new, 1 in progress, 2 done
	var register func(path string) error
	register = func(path string) error {
		switch state[path] {
		case 1:
			return fmt.Errorf("import cycle through %s", path)
		case 2:
			return nil
		}
		state[path] = 1
		defer func() { state[path] = 2 }()
		f, ok := byPath[path]
		if !ok {
			// A well-known file of the protobuf runtime, or nothing.
			if gf, err := protoregistry.GlobalFiles.FindFileByPath(path); err == nil && strings.HasPrefix(path, "google/protobuf/") {
				return r.files.RegisterFile(gf)
			}
			return nil
		}
		for _, dep := range f.GetDependency() {
			if err := register(dep); err != nil {
				return err
			}
		}
		fd, err := protodesc.FileOptions{AllowUnresolvable: true}.New(f, r.files)
		if err == nil {
			err = r.files.RegisterFile(fd)
		}
		if err != nil {
			r.Skipped = append(r.Skipped, fmt.Sprintf("%s: %v", path, err))
		}
		return nil
	}
	for _, p := range order {
		if err := register(p); err != nil {
			return nil, err
		}
	}
	for _, p := range []string{"google/protobuf/any.proto", "google/protobuf/timestamp.proto", "google/protobuf/duration.proto",
		"google/protobuf/wrappers.proto", "google/protobuf/struct.proto", "google/protobuf/empty.proto", "google/protobuf/field_mask.proto"} {
		if err := register(p); err != nil {
			return nil, err
		}
	}
	r.files.RangeFiles(func(fd protoreflect.FileDescriptor) bool {
		r.addMessages(fd.Messages())
		return true
	})
	return r, nil
}

func (r *Registry) addMessages(ms protoreflect.MessageDescriptors) {
	for i := 0; i < ms.Len(); i++ {
		md := ms.Get(i)
		if md.IsMapEntry() {
			continue
		}
		t := &msgType{desc: md, typ: dynamicpb.NewMessageType(md), wkt: wellKnownOf(md.FullName())}
		fs := md.Fields()
		t.fields = make([]field, fs.Len())
		for j := range t.fields {
			fd := fs.Get(j)
			t.fields[j] = field{fd: fd, name: quote(string(fd.Name())), gogo: gogoOf(fd)}
		}
		r.types[md.FullName()] = t
		r.addMessages(md.Messages())
	}
}

// Len is the number of message types the registry knows.
func (r *Registry) Len() int {
	if r == nil {
		return 0
	}
	return len(r.types)
}

// Known reports whether the registry decodes the type URL.
func (r *Registry) Known(typeURL string) bool {
	_, ok := r.lookup(typeURL)
	return ok
}

// lookup finds the type of a type URL ("/pkg.Msg" or "host/pkg.Msg"); a
// type with a field of an unresolved message type counts as known: it
// fails only when that field is present.
func (r *Registry) lookup(typeURL string) (*msgType, bool) {
	if r == nil {
		return nil, false
	}
	name := typeURL
	if i := strings.LastIndexByte(name, '/'); i >= 0 {
		name = name[i+1:]
	}
	t, ok := r.types[protoreflect.FullName(name)]
	return t, ok
}

// FindMessageByURL implements protoregistry.MessageTypeResolver (for the
// protobuf decoder's own Any handling).
func (r *Registry) FindMessageByURL(url string) (protoreflect.MessageType, error) {
	t, ok := r.lookup(url)
	if !ok {
		return nil, protoregistry.NotFound
	}
	return t.typ, nil
}

// FindMessageByName implements protoregistry.MessageTypeResolver.
func (r *Registry) FindMessageByName(name protoreflect.FullName) (protoreflect.MessageType, error) {
	return r.FindMessageByURL(string(name))
}

// FindExtensionByName implements protoregistry.ExtensionTypeResolver:
// messages carry no extensions worth decoding.
func (r *Registry) FindExtensionByName(protoreflect.FullName) (protoreflect.ExtensionType, error) {
	return nil, protoregistry.NotFound
}

// FindExtensionByNumber implements protoregistry.ExtensionTypeResolver.
func (r *Registry) FindExtensionByNumber(protoreflect.FullName, protoreflect.FieldNumber) (protoreflect.ExtensionType, error) {
	return nil, protoregistry.NotFound
}
