package main

import (
	"bytes"
	"os"
	"testing"
)

// TestGeneratedFileIsCurrent fails when zz_generated_zones.go was edited by hand or the Go
// toolchain's tz database changed: run go generate ./api/timing.
func TestGeneratedFileIsCurrent(t *testing.T) {
	goroot, err := findGOROOT()
	if err != nil {
		t.Fatal(err)
	}
	want, err := render(goroot)
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile("../../zz_generated_zones.go")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(want, got) {
		t.Error("zz_generated_zones.go is out of date: run go generate ./api/timing")
	}
}
