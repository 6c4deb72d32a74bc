// Package crds_test checks almanac's CustomResourceDefinitions against a real kube-apiserver:
// they install, their schemas and CEL rules reject what they should with the exact message,
// the examples are accepted, and kubectl explains every field.
package crds_test

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
