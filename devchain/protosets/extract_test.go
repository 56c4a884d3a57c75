package protosets

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/descriptorpb"
)

// The three forms generated Go code embeds a file descriptor in: gogoproto's
// gzipped []byte, protoc-gen-go's raw []byte, and its newer string
// constant; other variables and test files are left alone.
func TestExtractFile(t *testing.T) {
	fd := &descriptorpb.FileDescriptorProto{Name: proto.String("x/v1/tx.proto"), Package: proto.String("x.v1"),
		MessageType: []*descriptorpb.DescriptorProto{{Name: proto.String("MsgDo")}}}
	raw, err := proto.Marshal(fd)
	if err != nil {
		t.Fatal(err)
	}
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(raw)
	zw.Close()
	byteLit := func(b []byte) string {
		parts := make([]string, len(b))
		for i, c := range b {
			parts[i] = fmt.Sprintf("0x%02x", c)
		}
		return "[]byte{\n\t" + strings.Join(parts, ", ") + ",\n}"
	}
	half := len(raw) / 2
	tests := []struct {
		name, file, src string
		want            int
	}{
		{"gogoproto", "tx.pb.go", "package x\nvar fileDescriptor_0123abcd = " + byteLit(gz.Bytes()) + "\n", 1},
		{"protoc-gen-go bytes", "tx.pb.go", "package x\nvar file_x_v1_tx_proto_rawDesc = " + byteLit(raw) + "\n", 1},
		{"protoc-gen-go string", "tx.pulsar.go", "package x\nconst file_x_v1_tx_proto_rawDesc = \"\" +\n\t" +
			strconv.Quote(string(raw[:half])) + " +\n\t" + strconv.Quote(string(raw[half:])) + "\n", 1},
		{"other variables", "tx.pb.go", "package x\nvar fileDescriptor_x = otherVar\nvar y = []byte{1, 2}\n", 0},
		{"test file", "tx_test.go", "package x\nvar fileDescriptor_0123abcd = " + byteLit(gz.Bytes()) + "\n", 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, tc.file), []byte(tc.src), 0o644); err != nil {
				t.Fatal(err)
			}
			got, err := ExtractDir(dir)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != tc.want {
				t.Fatalf("%d descriptors, want %d", len(got), tc.want)
			}
			if tc.want == 1 && !proto.Equal(got[0], fd) {
				t.Errorf("got %v, want %v", got[0], fd)
			}
		})
	}
	bad := filepath.Join(t.TempDir(), "bad.pb.go")
	os.WriteFile(bad, []byte("package x\nvar fileDescriptor_1 = []byte{0x1f, 0x8b, 0x00}\n"), 0o644)
	if _, err := ExtractFile(bad); err == nil {
		t.Error("a broken gzip descriptor was accepted")
	}
}
