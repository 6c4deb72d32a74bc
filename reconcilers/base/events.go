package base

import (
	"fmt"
	"unicode/utf8"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/events"
)

// MaxNote is the longest note an events.k8s.io/v1 Event may have: the API server refuses a
// longer Event, and the recorder drops it (it does not retry). A condition's message, which
// may be up to four times as long, is often an event's note too.
const MaxNote = 1024

// ShortNotes returns r cutting every note to MaxNote bytes (at a character's boundary, ending
// in "…"), so that an event whose note is long is recorded shortened rather than lost.
func ShortNotes(r events.EventRecorder) events.EventRecorder { return shortNotes{r} }

type shortNotes struct{ events.EventRecorder }

func (r shortNotes) Eventf(regarding, related runtime.Object, eventtype, reason, action, note string, args ...any) {
	msg := fmt.Sprintf(note, args...)
	if len(msg) > MaxNote {
		const ellipsis = "…"
		cut := MaxNote - len(ellipsis)
		for cut > 0 && !utf8.RuneStart(msg[cut]) {
			cut--
		}
		msg = msg[:cut] + ellipsis
	}
	r.EventRecorder.Eventf(regarding, related, eventtype, reason, action, "%s", msg)
}
