package v1alpha1

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func newEJ(name string, kind TriggerKind, trigger string) *EventJob {
	return &EventJob{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: EventJobSpec{Trigger: Trigger{Kind: kind, Name: trigger}}}
}

// objects is a namespace's EventJobs, read as admission and the reconciler read them, with
// the reads counted.
type objects struct {
	all                map[string]*EventJob
	gets, followerList int
}

func newObjects(ejs ...*EventJob) *objects {
	o := &objects{all: map[string]*EventJob{}}
	for _, ej := range ejs {
		o.all[ej.Name] = ej
	}
	return o
}

func (o *objects) get(name string) (*EventJob, error) {
	o.gets++
	return o.all[name], nil
}

func (o *objects) followers(name string) ([]*EventJob, error) {
	o.followerList++
	var out []*EventJob
	for _, ej := range o.all {
		if slices.Contains(ej.EventJobTriggerNames(), name) {
			out = append(out, ej)
		}
	}
	return out, nil
}

// fanIn returns an EventJob whose triggers are the named EventJobs.
func fanIn(name string, triggers ...string) *EventJob {
	ej := &EventJob{ObjectMeta: metav1.ObjectMeta{Name: name}}
	for _, t := range triggers {
		ej.Spec.Triggers = append(ej.Spec.Triggers, Trigger{Kind: TriggerKindEventJob, Name: t})
	}
	return ej
}

// chain returns EventJobs prefix1 … prefixN, prefix1 triggering on first and each other on
// the one before it.
func chain(prefix string, n int, kind TriggerKind, first string) []*EventJob {
	var out []*EventJob
	for i := 1; i <= n; i++ {
		ej := newEJ(fmt.Sprintf("%s%d", prefix, i), TriggerKindEventJob, fmt.Sprintf("%s%d", prefix, i-1))
		if i == 1 {
			ej.Spec.Trigger = Trigger{Kind: kind, Name: first}
		}
		out = append(out, ej)
	}
	return out
}

func names(prefix string, from, to int) []string {
	var out []string
	for i := from; ; {
		out = append(out, fmt.Sprintf("%s%d", prefix, i))
		if i == to {
			return out
		}
		if from < to {
			i++
		} else {
			i--
		}
	}
}

func TestTriggerCycle(t *testing.T) {
	o := newObjects(
		newEJ("a", TriggerKindEventJob, "b"),
		newEJ("b", TriggerKindEventJob, "c"),
		newEJ("c", TriggerKindEventJob, "a"),
		newEJ("d", TriggerKindEventJob, "a"), // leads into the cycle, is not on it
		newEJ("e", TriggerKindCronJob, "hello"),
		newEJ("f", TriggerKindEventJob, "e"),
		newEJ("g", TriggerKindEventJob, "missing"),
	)
	for _, tt := range []struct {
		name string
		want []string
	}{
		{"a", []string{"a", "b", "c", "a"}},
		{"c", []string{"c", "a", "b", "c"}},
		{"d", nil},
		{"e", nil},
		{"f", nil},
		{"g", nil},
	} {
		got, err := TriggerCycle(o.all[tt.name], o.get)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("TriggerCycle(%s) (-want +got):\n%s", tt.name, diff)
		}
	}
	if got := CycleText([]string{"a", "b", "c", "a"}); got != `EventJob "a" triggers on EventJob "b", which triggers on EventJob "c", which triggers on EventJob "a"` {
		t.Errorf("CycleText = %s", got)
	}
}

// TestCheckTriggerChain: chains of EventJob triggers longer than MaxTriggerChain, next to the
// ones at the limit, found walking up from the EventJob (the reconciler, admission) and down
// from it (admission: an EventJob added upstream of a long chain), in at most
// MaxTriggerChain reads up and MaxFollowerReads lists down.
func TestCheckTriggerChain(t *testing.T) {
	ring := func(n int) []*EventJob { return chain("r", n, TriggerKindEventJob, fmt.Sprintf("r%d", n)) }
	tests := []struct {
		name      string
		objects   []*EventJob
		check     string
		candidate *EventJob // checked instead of an object of the namespace: a create
		down      bool
		want      *TriggerChainError
	}{{
		name: "a chain of 100 ends at a CronJob: within the limit", objects: chain("e", 100, TriggerKindCronJob, "hello"), check: "e100",
	}, {
		name: "a chain of 101: too long, by its exact length", objects: chain("e", 101, TriggerKindCronJob, "hello"), check: "e101",
		want: &TriggerChainError{Chain: names("e", 101, 1), Length: 101},
	}, {
		name: "the 100th of a chain of 101 is within the limit", objects: chain("e", 101, TriggerKindCronJob, "hello"), check: "e100",
	}, {
		name: "a chain of 150: the walk stops at the limit", objects: chain("e", 150, TriggerKindCronJob, "hello"), check: "e150",
		want: &TriggerChainError{Chain: names("e", 150, 50), Length: 101, AtLeast: true},
	}, {
		// Whether e0 exists would take a 101st read: 101 found is enough.
		name: "a chain of 101 whose upper end is missing", objects: chain("e", 101, TriggerKindEventJob, "e0"), check: "e101",
		want: &TriggerChainError{Chain: names("e", 101, 1), Length: 101, AtLeast: true},
	}, {
		name: "a ring of 100: a cycle", objects: ring(100), check: "r100",
		want: &TriggerChainError{Cycle: append(names("r", 100, 1), "r100")},
	}, {
		name: "a ring of 101: a cycle, found within the reads", objects: ring(101), check: "r50",
		want: &TriggerChainError{Cycle: append(names("r", 50, 1), names("r", 101, 50)...)},
	}, {
		name: "a ring of 102: too long before the cycle shows", objects: ring(102), check: "r102",
		want: &TriggerChainError{Chain: names("r", 102, 2), Length: 101, AtLeast: true},
	}, {
		name: "an EventJob added upstream of a chain of 100: too long below it", down: true,
		objects:   chain("e", 101, TriggerKindEventJob, "e0")[1:], // e2 … e101, e2 on the missing e1
		candidate: newEJ("e1", TriggerKindCronJob, "hello"),
		want:      &TriggerChainError{Chain: names("e", 101, 1), Below: 100, Length: 101},
	}, {
		name: "an EventJob added upstream of a chain of 99: within the limit", down: true,
		objects:   chain("e", 100, TriggerKindEventJob, "e0")[1:],
		candidate: newEJ("e1", TriggerKindCronJob, "hello"),
	}, {
		name: "a trigger changed in the middle joins two chains of 60", down: true,
		objects: append(chain("a", 60, TriggerKindCronJob, "hello"), chain("b", 60, TriggerKindEventJob, "gap")...),
		// b1 now triggers on a60: b60's chain is 120 long, b40's 100.
		candidate: newEJ("b1", TriggerKindEventJob, "a60"),
		want:      &TriggerChainError{Chain: append(names("b", 41, 1), names("a", 60, 1)...), Below: 40, Length: 101},
	}, {
		name: "the reconciler looks up only", objects: chain("e", 101, TriggerKindEventJob, "e0")[1:], candidate: newEJ("e1", TriggerKindCronJob, "hello"),
	}, {
		name: "a cycle further up, which the EventJob is not on", check: "d",
		objects: []*EventJob{newEJ("a", TriggerKindEventJob, "b"), newEJ("b", TriggerKindEventJob, "a"), newEJ("d", TriggerKindEventJob, "a")},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := newObjects(tt.objects...)
			ej := tt.candidate
			if ej == nil {
				ej = o.all[tt.check]
			}
			var followers func(string) ([]*EventJob, error)
			if tt.down {
				followers = o.followers
			}
			got, err := CheckTriggerChain(ej, o.get, followers)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("CheckTriggerChain(%s) (-want +got):\n%s", ej.Name, diff)
			}
			if o.gets > MaxTriggerChain || o.followerList > MaxFollowerReads {
				t.Errorf("%d reads up and %d lists down, want at most %d and %d", o.gets, o.followerList, MaxTriggerChain, MaxFollowerReads)
			}
		})
	}
}

// TestCheckTriggerChainBoundsTheReadsBelow: a wide tree below a new EventJob costs at most
// MaxFollowerReads lists; the EventJobs the walk did not reach check their own chains.
func TestCheckTriggerChainBoundsTheReadsBelow(t *testing.T) {
	var all []*EventJob
	for i := range 3 * MaxFollowerReads {
		all = append(all, newEJ(fmt.Sprintf("w%d", i), TriggerKindEventJob, "root"))
	}
	o := newObjects(all...)
	got, err := CheckTriggerChain(newEJ("root", TriggerKindCronJob, "hello"), o.get, o.followers)
	if err != nil || got != nil {
		t.Fatalf("CheckTriggerChain = %v, %v; want nil", got, err)
	}
	if o.followerList != MaxFollowerReads {
		t.Errorf("%d lists of followers, want %d", o.followerList, MaxFollowerReads)
	}
}

func TestChainText(t *testing.T) {
	short := ChainText([]string{"c", "b", "a"}, false)
	if want := `EventJob "c" triggers on EventJob "b", which triggers on EventJob "a"`; short != want {
		t.Errorf("ChainText = %s, want %s", short, want)
	}
	long := ChainText(names("e", 101, 1), true)
	want := `EventJob "e101" triggers on EventJob "e100", which triggers on EventJob "e99", which triggers on EventJob "e98", which triggers on EventJob "e97", … (92 more) …, ` +
		`which triggers on EventJob "e4", which triggers on EventJob "e3", which triggers on EventJob "e2", which triggers on EventJob "e1", and so on`
	if long != want {
		t.Errorf("ChainText =\n%s\nwant\n%s", long, want)
	}
	if n := strings.Count(long, `"`) / 2; n != shownLinks+1 {
		t.Errorf("ChainText names %d EventJobs, want %d", n, shownLinks+1)
	}
}

// TestCheckTriggerChainWithSeveralTriggers: an EventJob with several EventJob triggers (fan-in)
// is on a cycle when any of them leads back to it, and its chain is its longest; each EventJob
// above is read once, however many paths lead to it, and no more than MaxChainReads.
func TestCheckTriggerChainWithSeveralTriggers(t *testing.T) {
	long := chain("e", 100, TriggerKindCronJob, "hello") // e100 is 100 from the start
	tests := []struct {
		name    string
		objects []*EventJob
		check   *EventJob
		down    bool
		want    *TriggerChainError
		reads   int
	}{{
		name: "a cycle through the second trigger", objects: []*EventJob{fanIn("d", "x", "y"), newEJ("x", TriggerKindCronJob, "hello"), newEJ("y", TriggerKindEventJob, "d")},
		check: fanIn("d", "x", "y"), want: &TriggerChainError{Cycle: []string{"d", "y", "d"}}, reads: 2,
	}, {
		name: "the longest chain counts: 100 above through the second trigger", objects: append(long, newEJ("x", TriggerKindCronJob, "hello")),
		check: fanIn("d", "x", "e100"), want: &TriggerChainError{Chain: append([]string{"d"}, names("e", 100, 1)...), Length: 101}, reads: 101,
	}, {
		name: "within the limit through either", objects: append(chain("e", 99, TriggerKindCronJob, "hello"), newEJ("x", TriggerKindCronJob, "hello")),
		check: fanIn("d", "x", "e99"), reads: 100,
	}, {
		name: "a diamond is read once per EventJob", objects: []*EventJob{fanIn("l", "top"), fanIn("r", "top"), newEJ("top", TriggerKindCronJob, "hello")},
		check: fanIn("d", "l", "r"), reads: 3,
	}, {
		name:    "a cycle further up through a fan-in, which the EventJob is not on, is no problem",
		objects: []*EventJob{fanIn("a", "b", "x"), newEJ("b", TriggerKindEventJob, "a"), newEJ("x", TriggerKindCronJob, "hello")},
		check:   newEJ("d", TriggerKindEventJob, "a"), reads: 3,
	}, {
		name: "a fan-in added above a chain of 99 through one of its followers", down: true,
		objects: chain("e", 100, TriggerKindEventJob, "f")[1:], // e2 … e100, e2 on the missing e1
		check:   func() *EventJob { ej := fanIn("e1", "f"); ej.Spec.Triggers[0].Kind = TriggerKindCronJob; return ej }(),
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := newObjects(tt.objects...)
			var followers func(string) ([]*EventJob, error)
			if tt.down {
				followers = o.followers
			}
			got, err := CheckTriggerChain(tt.check, o.get, followers)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("CheckTriggerChain(%s) (-want +got):\n%s", tt.check.Name, diff)
			}
			if tt.reads > 0 && o.gets != tt.reads {
				t.Errorf("%d reads up, want %d", o.gets, tt.reads)
			}
		})
	}

	// A lattice of 40 levels of two EventJobs, each on both of the level above: 2^40 paths,
	// 80 EventJobs, each read once.
	var lattice []*EventJob
	for level := 1; level <= 40; level++ {
		for _, side := range []string{"l", "r"} {
			name := fmt.Sprintf("%s%d", side, level)
			if level == 1 {
				lattice = append(lattice, newEJ(name, TriggerKindCronJob, "hello"))
				continue
			}
			lattice = append(lattice, fanIn(name, fmt.Sprintf("l%d", level-1), fmt.Sprintf("r%d", level-1)))
		}
	}
	o := newObjects(lattice...)
	got, err := CheckTriggerChain(fanIn("bottom", "l40", "r40"), o.get, nil)
	if err != nil || got != nil || o.gets != 80 {
		t.Errorf("lattice: %v, %v after %d reads; want nil after 80", got, err, o.gets)
	}

	// More EventJobs above than a check reads: refused as unchecked.
	var wide []*EventJob
	var names []string
	for i := range MaxChainReads + 1 {
		wide = append(wide, newEJ(fmt.Sprintf("w%d", i), TriggerKindCronJob, "hello"))
	}
	for i := 0; i <= MaxChainReads; i += MaxTriggers {
		var ts []string
		for j := i; j < min(i+MaxTriggers, MaxChainReads+1); j++ {
			ts = append(ts, fmt.Sprintf("w%d", j))
		}
		name := fmt.Sprintf("m%d", i)
		wide = append(wide, fanIn(name, ts...))
		names = append(names, name)
	}
	// The bottom EventJob reaches them through a tree of fan-ins.
	for len(names) > 1 {
		var next []string
		for i := 0; i < len(names); i += MaxTriggers {
			name := fmt.Sprintf("t%d-%d", len(names), i)
			wide = append(wide, fanIn(name, names[i:min(i+MaxTriggers, len(names))]...))
			next = append(next, name)
		}
		names = next
	}
	o = newObjects(wide...)
	got, err = CheckTriggerChain(fanIn("bottom", names[0]), o.get, nil)
	if err != nil || got == nil || !got.Unchecked || o.gets > MaxChainReads {
		t.Errorf("wide: %+v, %v after %d reads; want Unchecked within %d reads", got, err, o.gets, MaxChainReads)
	}
}
