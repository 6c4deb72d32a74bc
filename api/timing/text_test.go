package timing

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestInstantText: messages name an instant in local time and in UTC, to the minute, and to
// the second when its seconds are not zero (a ScheduledJob's at to the second, issue 12).
func TestInstantText(t *testing.T) {
	tokyo, err := NormalizeZone("Asia/Tokyo")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		at   string
		zone Zone
		want string
	}{
		{"2027-03-14T07:00:00Z", Zone{}, "2027-03-14 07:00 UTC"},
		{"2027-03-14T07:00:00Z", tokyo, "2027-03-14 16:00 Asia/Tokyo (2027-03-14 07:00 UTC)"},
		{"2036-03-21T13:53:55Z", Zone{Name: DefaultZone}, "2036-03-21 13:53:55 UTC"},
		{"2036-03-21T13:53:55Z", tokyo, "2036-03-21 22:53:55 Asia/Tokyo (2036-03-21 13:53:55 UTC)"},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, InstantText(instant(t, tt.at), tt.zone)); diff != "" {
			t.Errorf("InstantText(%s, %q) (-want +got):\n%s", tt.at, tt.zone.Name, diff)
		}
	}
}
