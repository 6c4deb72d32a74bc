// Package plugin_test runs the cluster-facing commands of `kubectl almanac` (their Go entry
// points and cobra commands, through a kubeconfig) against a real kube-apiserver and etcd, with
// almanac's admission webhooks running in a manager (they default and normalize what is
// stored, as in a cluster) and no reconcilers, so that the status of each object is what the
// test writes:
//
//   - next: an autoscaler whose bounds change at a Schedule's window, one suspended, one held
//     by a missing calendar, one whose Schedule's window a calendar skips; ScheduledJobs whose
//     next slot a calendar skips, suspended, held by a missing calendar, under
//     concurrencyPolicy Forbid while a Job runs; an EventJob waiting for a ScheduledJob's Job;
//   - preview --cluster draws the same timeline as preview -f of the same objects;
//   - suspend and resume patch spec.suspend under the field manager kubectl-almanac, and a
//     user who may read but not patch is refused and told which RBAC to ask for.
package plugin_test

import (
	"fmt"
	"os"
	"testing"

	"go.uber.org/zap/zapcore"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/almanac-dev/almanac/test/testenv"
	"github.com/almanac-dev/almanac/webhooks"
)

var env *testenv.Env

func TestMain(m *testing.M) {
	code, err := start(m)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(code)
}

func start(m *testing.M) (int, error) {
	ctrl.SetLogger(zap.New(zap.Level(zapcore.ErrorLevel)))
	var err error
	if env, err = testenv.StartWith(testenv.Options{Webhooks: true}); err != nil {
		return 0, err
	}
	defer func() { _ = env.Stop() }()
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
