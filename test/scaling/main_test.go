// Package scaling_test runs the ScheduledPodAutoscaler and Schedule reconcilers in a real
// controller-runtime manager against a real kube-apiserver and etcd: HPAs are created, bounds
// change at the boundary instant and come back, nothing is written between boundaries, a
// restart mid-window converges, other field managers are left alone, and the manifests
// migrated from scheduled-pod-autoscaler behave as that project documented. The benchmarks
// (BenchmarkBoundaryLag, BenchmarkScale) run with `make bench`.
//
// Schedules are written in whole minutes, so the tests give the manager a clock that runs at
// the real rate but is offset so that a boundary is a few seconds ahead (offsetClock): the
// reconciler's RequeueAfter is then waited for in real time, exactly as in production.
package scaling_test

import (
	"fmt"
	"os"
	"testing"

	"go.uber.org/zap/zapcore"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/almanac-dev/almanac/test/testenv"
)

var env *testenv.Env

func TestMain(m *testing.M) {
	ctrl.SetLogger(zap.New(zap.Level(zapcore.ErrorLevel)))
	var err error
	if env, err = testenv.StartWith(testenv.Options{KEDA: true}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	if err := env.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, err)
	}
	os.Exit(code)
}
