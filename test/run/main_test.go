// Package run_test runs `almanac run` (its Go entry point, run.Run, through a kubeconfig)
// against a real kube-apiserver and etcd, with almanac's admission webhooks (the permission
// check included) and the ScheduledJob reconciler running in a manager: a run starts exactly
// one Job and prints its name, concurrencyPolicy Forbid refuses a second one while the first
// runs, --wait follows the Job to its end, and a user who may not create Jobs, or may not patch
// ScheduledJobs, is refused and told why.
package run_test

import (
	"fmt"
	"os"
	"testing"

	"go.uber.org/zap/zapcore"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/almanac-dev/almanac/reconcilers/base"
	"github.com/almanac-dev/almanac/reconcilers/scheduledjob"
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
	clk := clock.RealClock{}
	if err := webhooks.SetupWithManager(mgr, clk); err != nil {
		return 0, err
	}
	lanes := base.WithLanes(base.NewLanes(clk, base.DefaultMaxReportDelay))
	if err := scheduledjob.New(mgr, clk, lanes).SetupWithManager(mgr); err != nil {
		return 0, err
	}
	stop, err := env.RunManager(mgr)
	if err != nil {
		return 0, err
	}
	defer stop()
	return m.Run(), nil
}
