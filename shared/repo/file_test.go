package repo_test

import (
	"crypto/sha256"
	"strings"
	"testing"
	"time"

	"github.com/toolshed/toolshed/shared/repo"
)

// TestNewFile: a compressed File gives back the content it was made of
// (without a byte order mark), however it is read; binary data makes none.
func TestNewFile(t *testing.T) {
	tests := []struct {
		name, data, want string
		lines            int
	}{
		{"empty", "", "", 0},
		{"one line", "package a\n", "package a\n", 1},
		{"no final newline", "a\nb", "a\nb", 2},
		{"byte order mark", "\xEF\xBB\xBFx := 1\n", "x := 1\n", 1},
		{"repetitive", strings.Repeat("func f() {}\n", 5000), strings.Repeat("func f() {}\n", 5000), 5000},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data := []byte(tt.data)
			f := repo.NewFile("a.go", data, time.Time{})
			clear(data) // the File keeps no reference to it
			if f.Text() != tt.want || string(f.Content()) != tt.want {
				t.Errorf("text %q, content %q; want %q", f.Text(), f.Content(), tt.want)
			}
			if f.Size() != len(tt.want) || f.Lines() != tt.lines || f.Hash() != sha256.Sum256([]byte(tt.want)) {
				t.Errorf("size %d, %d lines, hash %x; want %d, %d, %x", f.Size(), f.Lines(), f.Hash(), len(tt.want), tt.lines, sha256.Sum256([]byte(tt.want)))
			}
			buf := make([]byte, 0, 1<<17)
			if got := f.ContentInto(&buf); string(got) != tt.want || cap(got) != cap(buf) {
				t.Errorf("ContentInto a large enough buffer: %q, capacity %d (the buffer's: %d)", got, cap(got), cap(buf))
			}
			if got := f.ContentInto(new([]byte)); string(got) != tt.want {
				t.Errorf("ContentInto an empty buffer: %q", got)
			}
		})
	}
	if f := repo.NewFile("b.bin", []byte("a\x00b"), time.Time{}); f != nil {
		t.Errorf("binary data made a File: %+v", f)
	}
}
