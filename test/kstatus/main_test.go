// Package kstatus_test shows that kstatus (sigs.k8s.io/cli-utils/pkg/kstatus/status, which
// Flux's health checks, kpt and Config Sync use) reads every almanac kind right, on live
// objects: the reconcilers run in a manager, as the binary runs them, against a real
// kube-apiserver and etcd, and each object is read back as a client reads it (unstructured)
// and given to status.Compute. Every kind is Current only once almanac has reconciled its
// generation, InProgress before (just created, or just edited), and Failed while a user must
// change something (docs/gitops.md, "Flux and kstatus").
package kstatus_test

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
