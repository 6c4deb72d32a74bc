package timing

import (
	"archive/zip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// fixedTZif is TZif data (version 1, no transitions) of a zone that is always at offset
// seconds east of UTC, abbreviated abbr: what the tz database holds for Asia/Tokyo today.
func fixedTZif(offset int32, abbr string) []byte {
	b := []byte("TZif")
	b = append(b, make([]byte, 16)...) // version 1, reserved
	be32 := func(v uint32) { b = append(b, byte(v>>24), byte(v>>16), byte(v>>8), byte(v)) }
	// isutcnt, isstdcnt, leapcnt, timecnt, typecnt, charcnt
	for _, n := range []int{0, 0, 0, 0, 1, len(abbr) + 1} {
		be32(uint32(n))
	}
	be32(uint32(offset))
	b = append(b, 0, 0) // not DST; abbreviation at index 0
	return append(append(b, abbr...), 0)
}

// doctoredZoneinfo writes a zoneinfo zip (time.LoadLocation reads such a file from ZONEINFO)
// in which Europe/Berlin is always UTC+09:00, like Asia/Tokyo, and returns its path.
func doctoredZoneinfo(t testing.TB) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "zoneinfo.zip")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	zw := zip.NewWriter(f)
	// time.LoadLocation reads only stored (uncompressed) entries, as in Go's zoneinfo.zip.
	w, err := zw.CreateHeader(&zip.FileHeader{Name: "Europe/Berlin", Method: zip.Store})
	if err == nil {
		_, err = w.Write(fixedTZif(9*3600, "JST"))
	}
	if err == nil {
		err = zw.Close()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}
	return path
}

// zoneinfoChildEnv marks the process that TestZoneIgnoresZONEINFO starts with ZONEINFO set:
// the time package reads ZONEINFO once per process, so the check runs in a process of its own.
const zoneinfoChildEnv = "ALMANAC_TIMING_ZONEINFO_CHILD"

// TestZoneIgnoresZONEINFO: the engine's zones come from its embedded tz database whatever
// ZONEINFO says. `almanac validate` and `preview` on a CI host whose tz database (or ZONEINFO)
// differs from the one in the manager's image must answer as the manager does. The child
// process first checks that the doctored database is what time.LoadLocation reads there, so
// that the test cannot pass for a ZONEINFO that is simply ignored by Go.
func TestZoneIgnoresZONEINFO(t *testing.T) {
	winter := time.Date(2027, time.January, 15, 12, 0, 0, 0, time.UTC)
	summer := time.Date(2027, time.July, 15, 12, 0, 0, 0, time.UTC)
	offset := func(l *time.Location, at time.Time) time.Duration {
		_, s := at.In(l).Zone()
		return time.Duration(s) * time.Second
	}
	if os.Getenv(zoneinfoChildEnv) != "" {
		host, err := time.LoadLocation("Europe/Berlin")
		if err != nil {
			t.Fatalf("time.LoadLocation with ZONEINFO=%s: %v", os.Getenv("ZONEINFO"), err)
		}
		if got := offset(host, winter); got != 9*time.Hour {
			t.Fatalf("time.LoadLocation(Europe/Berlin) with the doctored ZONEINFO is UTC%+v, want the doctored +9h: the test does not test anything", got)
		}
		zone, err := NormalizeZone("Europe/Berlin")
		if err != nil {
			t.Fatal(err)
		}
		if w, s := offset(zone.Location, winter), offset(zone.Location, summer); w != time.Hour || s != 2*time.Hour {
			t.Errorf("the engine's Europe/Berlin with ZONEINFO set is UTC+%v in January and UTC+%v in July, want +1h0m0s and +2h0m0s (the embedded database, not ZONEINFO)", w, s)
		}
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestZoneIgnoresZONEINFO$", "-test.count=1")
	cmd.Env = append(os.Environ(), zoneinfoChildEnv+"=1", "ZONEINFO="+doctoredZoneinfo(t))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("with ZONEINFO pointing at a database whose Europe/Berlin is UTC+9: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "PASS") {
		t.Fatalf("the child process ran no test:\n%s", out)
	}
}

// TestEmbeddedTZDatabase: every zone name that NormalizeZone accepts has data in the embedded
// database, every link points at kept data, and nothing is kept that has no name.
func TestEmbeddedTZDatabase(t *testing.T) {
	if TZDataVersion == "" {
		t.Error("TZDataVersion is empty")
	}
	names := map[string]bool{}
	for _, name := range zoneNames {
		names[name] = true
		if _, err := loadEmbeddedZone(name); err != nil {
			t.Errorf("zone %s: %v", name, err)
		}
	}
	for name, target := range zoneLinks {
		if _, ok := zoneTZif[target]; !ok || !names[name] {
			t.Errorf("link %s → %s: the target holds no data or the name is not listed", name, target)
		}
	}
	for name := range zoneTZif {
		if !names[name] {
			t.Errorf("data for %s, which zoneNames does not list", name)
		}
	}
	if _, err := loadEmbeddedZone("Factory"); err == nil {
		t.Error("Factory loaded; it is left out of the embedded database")
	}
	// A link and its target name their own zones.
	kolkata, calcutta := mustEmbedded(t, "Asia/Kolkata"), mustEmbedded(t, "Asia/Calcutta")
	if kolkata.String() != "Asia/Kolkata" || calcutta.String() != "Asia/Calcutta" {
		t.Errorf("loaded %s and %s, want Asia/Kolkata and Asia/Calcutta", kolkata, calcutta)
	}
}

func mustEmbedded(t testing.TB, name string) *time.Location {
	t.Helper()
	l, err := loadEmbeddedZone(name)
	if err != nil {
		t.Fatal(err)
	}
	return l
}
