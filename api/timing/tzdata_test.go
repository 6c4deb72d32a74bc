package timing

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// Container images often carry no tz database (distroless, scratch), and controllers that
// relied on the system's failed there, or silently used UTC. time.LoadLocation falls back to
// the database that time/tzdata embeds; this checks that the almanac binary links it, so a
// zone means the same in every image.
func TestBinaryEmbedsTheTZDatabase(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("the go tool is not on PATH")
	}
	out, err := exec.Command("go", "list", "-deps", "github.com/almanac-dev/almanac").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	if deps := strings.Fields(string(out)); !slices.Contains(deps, "time/tzdata") {
		t.Fatal("the almanac binary does not import time/tzdata: zones would depend on the image's tz database")
	}
}
