// Package jobs_test runs the ScheduledJob and EventJob reconcilers against a real
// kube-apiserver and etcd: Jobs are created at their instants, once per slot or upstream Job,
// across manager restarts, failed status writes and history pruning. No kube-controller-manager
// runs, so the tests finish Jobs by writing their status the way the Job controller does, and
// nothing garbage-collects.
//
// Time is a fake clock that both the reconcilers and their work queues use: it runs at real
// speed (so that backoffs and retries happen) and tests jump it to the instants they check.
//
// The benchmarks (BenchmarkScheduleToJob, BenchmarkTriggerToJob) measure, against the same API
// server, the latency from a slot's instant or an upstream Job's condition to the Job's
// creation; run them with
//
//	go test ./test/jobs -run '^$' -bench . -benchtime 200x
package jobs_test

import (
	"fmt"
	"os"
	"testing"

	"github.com/almanac-dev/almanac/test/testenv"
)

var env *testenv.Env

func TestMain(m *testing.M) {
	var err error
	if env, err = testenv.Start(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	if err := env.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, err)
	}
	os.Exit(code)
}
