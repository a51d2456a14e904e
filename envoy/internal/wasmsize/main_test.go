package main

import (
	"strings"
	"testing"
)

// section encodes one section: id, LEB128 size (sizes here stay below 128), body.
func section(id byte, body ...byte) []byte { return append([]byte{id, byte(len(body))}, body...) }

func str(s string) []byte { return append([]byte{byte(len(s))}, s...) }

func cat(parts ...[]byte) []byte {
	var b []byte
	for _, p := range parts {
		b = append(b, p...)
	}
	return b
}

// module is a wasm module with one imported function (index 0) and two defined
// ones (1 and 2, bodies of 3 and 5 bytes) named in its name section.
func module() []byte {
	imports := cat([]byte{1}, str("env"), str("f"), []byte{0, 0})
	code := cat([]byte{2}, []byte{3, 0, 0x01, 0x0b}, []byte{5, 0, 0x01, 0x01, 0x01, 0x0b})
	names := cat([]byte{2}, []byte{1}, str("github.com_x_y.__T_.M"), []byte{2}, str("runtime.gcStart"))
	nameSec := cat(str("name"), []byte{1, byte(len(names))}, names)
	return cat([]byte("\x00asm\x01\x00\x00\x00"),
		section(1, 1, 0x60, 0, 0),
		section(2, imports...),
		section(3, 2, 0, 0),
		section(10, code...),
		section(0, nameSec...))
}

func TestRead(t *testing.T) {
	m, err := Read(module())
	if err != nil {
		t.Fatal(err)
	}
	if m.Imported != 1 || len(m.Bodies) != 2 || m.Bodies[0] != 3 || m.Bodies[1] != 5 {
		t.Errorf("imported %d, bodies %v", m.Imported, m.Bodies)
	}
	if m.Names[1] != "github.com_x_y.__T_.M" || m.Names[2] != "runtime.gcStart" {
		t.Errorf("names %v", m.Names)
	}
	if m.Sections["code"] == 0 || m.Sections["custom:name"] == 0 || m.Sections["import"] == 0 {
		t.Errorf("sections %v", m.Sections)
	}
}

func TestReadRefusesDamage(t *testing.T) {
	good := module()
	for _, tc := range []struct {
		name string
		in   []byte
		want string
	}{
		{"not wasm", []byte("hello world"), "not a wasm module"},
		{"truncated section", good[:len(good)-3], "runs past the end"},
		{"bad body count", func() []byte {
			b := append([]byte(nil), good...)
			i := strings.Index(string(b), "\x0a") // the code section id
			b[i+2] = 9                            // more bodies than the section holds
			return b
		}(), "section code"},
	} {
		if _, err := Read(tc.in); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want an error containing %q", tc.name, err, tc.want)
		}
	}
}

func TestPkgOf(t *testing.T) {
	for sym, want := range map[string]string{
		"github.com_kwire_kwire_codec.__MetadataResponse_.decode": "github.com_kwire_kwire_codec",
		"runtime.__mheap_.alloc":                                  "runtime",
		"runtime.gc_mark":                                         "runtime",
		"encoding_json.__decodeState_.object":                     "encoding_json",
		"golang.org_x_sys_unix.Syscall":                           "golang.org_x_sys_unix",
		"main.main":                                               "main",
	} {
		if got := pkgOf(sym); got != want {
			t.Errorf("pkgOf(%q) = %q, want %q", sym, got, want)
		}
	}
}
