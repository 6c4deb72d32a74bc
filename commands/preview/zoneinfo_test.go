package preview

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// berlinAsTokyo is TZif data (version 1, no transitions) of a zone that is always UTC+09:00,
// "JST": Asia/Tokyo's rules, written where Europe/Berlin's belong.
func berlinAsTokyo() []byte {
	b := []byte("TZif")
	b = append(b, make([]byte, 16)...) // version 1, reserved
	be32 := func(v uint32) { b = append(b, byte(v>>24), byte(v>>16), byte(v>>8), byte(v)) }
	for _, n := range []uint32{0, 0, 0, 0, 1, 4} { // isutcnt isstdcnt leapcnt timecnt typecnt charcnt
		be32(n)
	}
	be32(9 * 3600)
	b = append(b, 0, 0)
	return append(b, "JST\x00"...)
}

// previewChildEnv marks the process that TestPreviewIgnoresZONEINFO starts: the time package
// reads ZONEINFO once per process, so each run is a process of its own.
const previewChildEnv = "ALMANAC_PREVIEW_ZONEINFO_CHILD"

// TestPreviewIgnoresZONEINFO: `almanac preview` gives the same answer whatever tz database the
// host has. A ZONEINFO directory whose Europe/Berlin holds Asia/Tokyo's rules changes what
// time.LoadLocation returns in that process (the child checks it), and not the preview of
// Schedules in Europe/Berlin, which are drawn from the tz database that almanac embeds, the
// one the manager uses in its image.
func TestPreviewIgnoresZONEINFO(t *testing.T) {
	args := []string{"-f", filepath.Join("testdata", "fall-2027.yaml"), "--from", "2027-10-30T00:00:00Z", "--to", "2027-11-08T00:00:00Z", "-o", "json"}
	if os.Getenv(previewChildEnv) != "" {
		if dir := os.Getenv("ZONEINFO"); dir != "" {
			host, err := time.LoadLocation("Europe/Berlin")
			if err != nil {
				t.Fatal(err)
			}
			if _, offset := time.Date(2027, time.January, 15, 12, 0, 0, 0, time.UTC).In(host).Zone(); offset != 9*3600 {
				t.Fatalf("time.LoadLocation(Europe/Berlin) with ZONEINFO=%s is UTC%+d s, want the doctored +09:00: the test would test nothing", dir, offset)
			}
		}
		cmd := NewCommand()
		cmd.SetArgs(args)
		cmd.SetOut(os.Stdout)
		cmd.SetErr(os.Stderr)
		if err := cmd.Execute(); err != nil {
			t.Fatal(err)
		}
		return
	}
	doctored := t.TempDir()
	if err := os.MkdirAll(filepath.Join(doctored, "Europe"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(doctored, "Europe", "Berlin"), berlinAsTokyo(), 0o600); err != nil {
		t.Fatal(err)
	}
	preview := func(zoneinfo string) []byte {
		t.Helper()
		cmd := exec.Command(os.Args[0], "-test.run=^TestPreviewIgnoresZONEINFO$", "-test.count=1")
		cmd.Env = append(os.Environ(), previewChildEnv+"=1", "ZONEINFO="+zoneinfo)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("preview with ZONEINFO=%q: %v\n%s%s", zoneinfo, err, stdout.String(), stderr.String())
		}
		return stdout.Bytes()
	}
	plain, doctoredOut := preview(""), preview(doctored)
	if !bytes.Contains(plain, []byte(`"start": "2027-10-30T06:00:00Z"`)) {
		t.Fatalf("the preview without ZONEINFO does not open eu-office at 08:00 CEST (06:00Z):\n%s", plain)
	}
	if !bytes.Equal(plain, doctoredOut) {
		t.Errorf("the preview differs with ZONEINFO pointing at a database whose Europe/Berlin is Asia/Tokyo's:\nwithout:\n%s\nwith:\n%s", plain, doctoredOut)
	}
}
