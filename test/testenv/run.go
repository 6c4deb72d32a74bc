package testenv

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	"github.com/almanac-dev/almanac/api/scheme"
)

// NewManager returns a manager of the test API server built as the manager binary builds its
// own: almanac's scheme, the binary's cache options and indexes; without metrics or health
// endpoints; serving the webhooks where the API server calls them when the environment was
// started with Options.Webhooks; and with controller names that may repeat (a test process
// builds several managers).
func (e *Env) NewManager() (manager.Manager, error) {
	opts := manager.Options{
		Scheme:                 scheme.Scheme,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		Controller:             config.Controller{SkipNameValidation: ptr.To(true)},
		Cache:                  CacheOptions(),
	}
	if e.Webhook.Port != 0 {
		opts.WebhookServer = webhook.NewServer(e.Webhook)
	}
	mgr, err := manager.New(e.Config, opts)
	if err != nil {
		return nil, err
	}
	if err := RegisterIndexes(mgr); err != nil {
		return nil, err
	}
	return mgr, nil
}

// NewNamespace creates a namespace named from prefix for a test.
func (e *Env) NewNamespace(t testing.TB, prefix string) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: prefix + "-"}}
	if err := e.Client.Create(context.Background(), ns); err != nil {
		t.Fatal(err)
	}
	return ns.Name
}

// Create creates objs, failing the test on the first error.
func (e *Env) Create(t testing.TB, objs ...client.Object) {
	t.Helper()
	for _, obj := range objs {
		if err := e.Client.Create(context.Background(), obj); err != nil {
			t.Fatalf("create %T %s: %v", obj, obj.GetName(), err)
		}
	}
}

// RunManager starts mgr, waits until it serves its webhooks where the API server calls them
// (when the environment was started with Options.Webhooks: mgr is then expected to serve
// them) and its cache has synced, and returns the function that stops it and prints how it
// ended.
func (e *Env) RunManager(mgr manager.Manager) (stop func(), err error) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	stop = func() {
		cancel()
		if err := <-done; err != nil {
			fmt.Fprintln(os.Stderr, "the manager stopped with an error:", err)
		}
	}
	if e.Webhook.Port != 0 {
		if err := e.WaitForWebhookServer(ctx, done); err != nil {
			stop()
			return nil, err
		}
	}
	if !mgr.GetCache().WaitForCacheSync(ctx) {
		stop()
		return nil, errors.New("the manager's cache did not sync")
	}
	return stop, nil
}

// ImpersonatingKubeconfig writes, into dir, a kubeconfig of the test API server whose
// credentials impersonate user (rest.Config.Impersonate, as kubectl --as does), and returns
// its path: a command run with it may do what user may do.
func (e *Env) ImpersonatingKubeconfig(dir, user string) (string, error) {
	cfg, err := clientcmd.LoadFromFile(e.KubeconfigPath)
	if err != nil {
		return "", err
	}
	for _, auth := range cfg.AuthInfos {
		auth.Impersonate = user
	}
	path := filepath.Join(dir, user+".kubeconfig")
	return path, clientcmd.WriteToFile(*cfg, path)
}
