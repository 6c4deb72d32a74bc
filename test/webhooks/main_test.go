// Package webhooks_test checks almanac's admission webhooks against a real kube-apiserver and
// etcd, which call them over HTTPS as a cluster would: rejections with their exact causes,
// warnings, server-side dry runs, the normalized objects that are stored, ratcheting, and the
// parity of `almanac validate` with the live webhooks. The webhooks' clock is fixed (now), so
// messages that name dates are exact.
package webhooks_test

import (
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/go-logr/logr"
	clocktesting "k8s.io/utils/clock/testing"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/almanac-dev/almanac/test/testenv"
	"github.com/almanac-dev/almanac/webhooks"
)

// now is the webhooks' clock: Friday 2027-01-15 12:00 UTC.
var now = time.Date(2027, time.January, 15, 12, 0, 0, 0, time.UTC)

var (
	// binDir holds the almanac binary that the tests build (buildAlmanac).
	binDir string
	env    *testenv.Env
	clk    = clocktesting.NewFakePassiveClock(now)
	cache  client.Reader // the manager's cache, which the webhooks read
)

func TestMain(m *testing.M) {
	code, err := run(m)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(code)
}

func run(m *testing.M) (int, error) {
	ctrl.SetLogger(logr.Discard())
	var err error
	if binDir, err = os.MkdirTemp("", "almanac-webhooks-test-"); err != nil {
		return 0, err
	}
	defer func() { _ = os.RemoveAll(binDir) }()
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
	stop, err := env.RunManager(mgr)
	if err != nil {
		return 0, err
	}
	defer stop()
	cache = mgr.GetCache()
	return m.Run(), nil
}
