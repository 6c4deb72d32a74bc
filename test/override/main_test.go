// Package override_test runs `almanac override` (its Go entry point, override.Run, through a
// kubeconfig) against a real kube-apiserver and etcd, with almanac's admission webhooks and
// both scaling reconcilers running in a manager: an override changes the autoscaler's bounds,
// --list shows it, the Schedule reconciler deletes it once its window has ended (and leaves an
// ordinary Schedule that ended with it), --remove deletes one sooner, admission's answers are
// printed, and a user without create on Schedules is told so.
//
// The manager, its webhooks and the command share one clock that runs at the real rate but is
// offset (offsetClock, as in test/scaling), so that the end of a window written in whole
// minutes is a few seconds ahead and the reconciler's RequeueAfter is waited for in real time,
// as in production. The tests set it in turn, so they do not run in parallel.
package override_test

import (
	"fmt"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/zap/zapcore"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/almanac-dev/almanac/reconcilers/base"
	"github.com/almanac-dev/almanac/reconcilers/schedule"
	"github.com/almanac-dev/almanac/reconcilers/scheduledpodautoscaler"
	"github.com/almanac-dev/almanac/test/testenv"
	"github.com/almanac-dev/almanac/webhooks"
)

var (
	env *testenv.Env
	// clk is the clock of the manager, its webhooks and the command.
	clk = newOffsetClock(time.Date(2030, time.June, 1, 9, 0, 0, 0, time.UTC))
)

// offsetClock runs at the real rate, shifted by an offset that can be moved; its timers are
// real ones.
type offsetClock struct {
	clock.RealClock
	offset atomic.Int64
}

func newOffsetClock(now time.Time) *offsetClock {
	c := &offsetClock{}
	c.set(now)
	return c
}

// set moves the clock so that it reads now.
func (c *offsetClock) set(now time.Time) { c.offset.Store(int64(time.Until(now))) }

func (c *offsetClock) Now() time.Time { return time.Now().Add(time.Duration(c.offset.Load())) }

func (c *offsetClock) Since(t time.Time) time.Duration { return c.Now().Sub(t) }

func (c *offsetClock) Until(t time.Time) time.Duration { return t.Sub(c.Now()) }

var _ clock.WithDelayedExecution = (*offsetClock)(nil)

func TestMain(m *testing.M) {
	code, err := run(m)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(code)
}

func run(m *testing.M) (int, error) {
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
	if err := webhooks.SetupWithManager(mgr, clk); err != nil {
		return 0, err
	}
	lanes := base.WithLanes(base.NewLanes(clk, base.DefaultMaxReportDelay))
	if err := scheduledpodautoscaler.New(mgr, clk, lanes).SetupWithManager(mgr); err != nil {
		return 0, err
	}
	if err := schedule.New(mgr, clk, scheduledpodautoscaler.ScheduleEvaluationErrors(), lanes).SetupWithManager(mgr); err != nil {
		return 0, err
	}
	stop, err := env.RunManager(mgr)
	if err != nil {
		return 0, err
	}
	defer stop()
	return m.Run(), nil
}
