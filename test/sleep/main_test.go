// Package sleep_test runs the Sleep and ClusterSleep reconciler in real controller-runtime
// managers against a real kube-apiserver and etcd, with almanac's webhooks served as a cluster
// calls them: workloads go to sleep at the boundary and wake exactly as they were, whatever
// happens in between (a manager restart, a leader change, an upgrade's record, a hand
// scale-up, a GitOps tool putting replicas back, workloads created and deleted during sleep),
// ClusterSleeps over several namespaces, tiers and the pace of a wake, the learned lead, and
// what a tenant may and may not make a Sleep do.
//
// The API server runs no controllers: no Pods start, and the tests write a workload's
// readyReplicas themselves where a wake waits for it. The reconciler's clock runs at the real
// rate, offset to the instants a test looks at (offsetClock); a jump of the clock is followed
// by a change of the sleep (poke), which brings a reconcile at the new time.
package sleep_test

import (
	"fmt"
	"os"
	"testing"

	"github.com/go-logr/logr"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/almanac-dev/almanac/test/testenv"
	"github.com/almanac-dev/almanac/webhooks"
)

var env *testenv.Env

func TestMain(m *testing.M) {
	code, err := run(m)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(code)
}

func run(m *testing.M) (int, error) {
	if os.Getenv("SLEEP_LOG") == "" {
		ctrl.SetLogger(logr.Discard())
	}
	var err error
	if env, err = testenv.StartWith(testenv.Options{Webhooks: true, KEDA: true}); err != nil {
		return 0, err
	}
	defer func() { _ = env.Stop() }()
	// One manager serves the webhooks, on the real clock; each test runs its own reconciler.
	mgr, err := env.NewManager()
	if err != nil {
		return 0, err
	}
	if err := webhooks.SetupWithManager(mgr, clock.RealClock{}); err != nil {
		return 0, err
	}
	stop, err := env.RunManager(mgr)
	if err != nil {
		return 0, err
	}
	defer stop()
	return m.Run(), nil
}
