package main

import (
	"archive/zip"
	"bytes"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestGeneratedFilesAreCurrent fails when zz_generated_zones.go or zz_generated_tzdata.go was
// edited by hand or the Go toolchain's tz database changed: run go generate ./api/timing.
func TestGeneratedFilesAreCurrent(t *testing.T) {
	goroot, err := findGOROOT()
	if err != nil {
		t.Fatal(err)
	}
	files, err := render(goroot)
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range files {
		got, err := os.ReadFile(filepath.Join("..", "..", name))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(want, got) {
			t.Errorf("%s is out of date: run go generate ./api/timing", name)
		}
	}
}

// TestExpandKeepsEveryAnswer: the transitions that expand writes out answer as the TZ string
// did, for every zone: at each of them, the second before it, and weekly from 1900 to 2045
// (after 2038 the TZ string answers again); and the written-out zones report the end of each
// zone period after the instant (golang/go#81583: with Go's slim data, Time.ZoneBounds
// reports Dec 31 00:00 UTC on the last day of a leap year).
func TestExpandKeepsEveryAnswer(t *testing.T) {
	goroot, err := findGOROOT()
	if err != nil {
		t.Fatal(err)
	}
	r, err := zip.OpenReader(filepath.Join(goroot, "lib", "time", "zoneinfo.zip"))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var expanded int
	for _, f := range r.File {
		rc, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		data, err := io.ReadAll(rc)
		rc.Close()
		if err != nil {
			t.Fatal(err)
		}
		out, err := expand(f.Name, data)
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Equal(out, data) {
			continue
		}
		expanded++
		slim, err := time.LoadLocationFromTZData(f.Name, data)
		if err != nil {
			t.Fatal(err)
		}
		fat, err := time.LoadLocationFromTZData(f.Name, out)
		if err != nil {
			t.Fatalf("%s: the expanded data does not load: %v", f.Name, err)
		}
		check := func(sec int64) {
			if s, g := stateAt(slim, sec), stateAt(fat, sec); s != g {
				t.Fatalf("%s at %s: expanded %+v, slim %+v", f.Name, time.Unix(sec, 0).UTC(), g, s)
			}
		}
		parsed, err := parseTZif(out)
		if err != nil {
			t.Fatal(err)
		}
		for _, tr := range parsed.times {
			check(tr - 1)
			check(tr)
		}
		for sec := time.Date(1900, 1, 1, 0, 0, 0, 0, time.UTC).Unix(); sec < time.Date(2045, 1, 1, 0, 0, 0, 0, time.UTC).Unix(); sec += 7 * 24 * 3600 {
			check(sec)
		}
		for _, y := range []int{2024, 2028, 2032, 2036} {
			at := time.Date(y, time.December, 31, 12, 0, 0, 0, time.UTC).In(fat)
			if _, end := at.ZoneBounds(); !end.IsZero() && !end.After(at) {
				t.Errorf("%s: ZoneBounds at %s ends at %s, not after it", f.Name, at.UTC(), end.UTC())
			}
		}
	}
	if expanded < 100 {
		t.Errorf("only %d zones got transitions written out; the zones with daylight saving time are more", expanded)
	}
}
