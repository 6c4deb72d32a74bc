// Package testenv starts a real kube-apiserver and etcd (built by hack/envtest.sh, found
// through KUBEBUILDER_ASSETS) with almanac's CRDs installed, for integration tests. There is
// no fake client anywhere in almanac's integration tests: everything they assert went through
// a real API server.
package testenv

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	"github.com/almanac-dev/almanac/api/index"
	"github.com/almanac-dev/almanac/api/scheme"
)

// Env is a running API server with almanac's CRDs installed.
type Env struct {
	// Config reaches the API server as a cluster administrator.
	Config *rest.Config
	// Client is a direct (uncached) client with almanac's scheme.
	Client client.Client
	// KubeconfigPath is a kubeconfig file for kubectl.
	KubeconfigPath string
	// Webhook is where the API server calls the admission webhooks, when started with
	// Options.Webhooks; serve them with a manager whose WebhookServer is
	// webhook.NewServer(env.Webhook).
	Webhook webhook.Options
	// WebhookCAData is the PEM CA bundle that the webhook server's certificate in
	// Webhook.CertDir chains to (for clients that call the webhooks directly).
	WebhookCAData []byte

	env *envtest.Environment
	dir string
}

// RepoRoot is the root of the almanac checkout that this package was built from.
func RepoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

// Options are the additions to what Start sets up.
type Options struct {
	// Webhooks installs the webhook configurations from config/webhook, pointed at a local
	// HTTPS server whose host, port and certificates are in Env.Webhook. Requests for
	// almanac's kinds fail until a manager serves the webhooks there.
	Webhooks bool
	// KEDA also installs KEDA's ScaledObject CRD, taken from KEDA's own module (KEDAVersion).
	KEDA bool
	// APIServerFlags are kube-apiserver flags (without "--") set on top of envtest's, e.g.
	// "max-requests-inflight": "20" for a server whose API Priority and Fairness queues
	// sooner.
	APIServerFlags map[string]string
}

// KEDAVersion is the KEDA release whose CRDs the tests install, and whose operator the
// end-to-end suite runs (hack/keda-image.sh reads it here).
const KEDAVersion = "v2.21.0"

// KEDADir returns the folder of KEDA's module at KEDAVersion, downloaded through the Go
// module proxy into the module cache (once; later runs find it there).
func KEDADir() (string, error) {
	cmd := exec.Command("go", "mod", "download", "-json", "github.com/kedacore/keda/v2@"+KEDAVersion)
	cmd.Dir = os.TempDir() // outside the module: nothing is added to go.mod
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod")
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("failed to download KEDA %s from the Go module proxy: %w", KEDAVersion, err)
	}
	var mod struct{ Dir, Error string }
	if err := json.Unmarshal(out, &mod); err != nil || mod.Dir == "" {
		return "", fmt.Errorf("failed to download KEDA %s: %s %w", KEDAVersion, mod.Error, err)
	}
	return mod.Dir, nil
}

// KEDACRDPaths returns KEDA's ScaledObject CRD file from its module at KEDAVersion.
func KEDACRDPaths() ([]string, error) {
	dir, err := KEDADir()
	if err != nil {
		return nil, err
	}
	return []string{filepath.Join(dir, "config", "crd", "bases", "keda.sh_scaledobjects.yaml")}, nil
}

// Start starts kube-apiserver and etcd and installs the CRDs from config/crd/bases.
func Start() (*Env, error) { return StartWith(Options{}) }

// StartWith is Start with options.
func StartWith(opts Options) (*Env, error) {
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		return nil, errors.New("KUBEBUILDER_ASSETS is not set: run the tests with `make unit` (it builds kube-apiserver and etcd), " +
			"or export KUBEBUILDER_ASSETS=$(hack/envtest.sh)")
	}
	e := &envtest.Environment{
		Scheme:                scheme.Scheme,
		CRDDirectoryPaths:     []string{filepath.Join(RepoRoot(), "config", "crd", "bases")},
		ErrorIfCRDPathMissing: true,
	}
	if opts.KEDA {
		paths, err := KEDACRDPaths()
		if err != nil {
			return nil, err
		}
		e.CRDDirectoryPaths = append(e.CRDDirectoryPaths, paths...)
	}
	for flag, value := range opts.APIServerFlags {
		e.ControlPlane.GetAPIServer().Configure().Set(flag, value)
	}
	if opts.Webhooks {
		e.WebhookInstallOptions = envtest.WebhookInstallOptions{
			Paths: []string{filepath.Join(RepoRoot(), "config", "webhook")},
		}
	}
	cfg, err := e.Start()
	if err != nil {
		return nil, fmt.Errorf("failed to start kube-apiserver and etcd from %s: %w", os.Getenv("KUBEBUILDER_ASSETS"), err)
	}
	env := &Env{Config: cfg, env: e}
	if opts.Webhooks {
		w := &e.WebhookInstallOptions
		env.Webhook = webhook.Options{Host: w.LocalServingHost, Port: w.LocalServingPort, CertDir: w.LocalServingCertDir}
		env.WebhookCAData = w.LocalServingCAData
	}
	if env.Client, err = client.New(cfg, client.Options{Scheme: scheme.Scheme}); err != nil {
		_ = env.Stop()
		return nil, fmt.Errorf("failed to create a client: %w", err)
	}
	if env.dir, err = os.MkdirTemp("", "almanac-testenv-"); err != nil {
		_ = env.Stop()
		return nil, err
	}
	env.KubeconfigPath = filepath.Join(env.dir, "kubeconfig")
	if err := os.WriteFile(env.KubeconfigPath, e.KubeConfig, 0o600); err != nil {
		_ = env.Stop()
		return nil, err
	}
	return env, nil
}

// Stop stops the API server and etcd and removes their data.
func (e *Env) Stop() error {
	if e.dir != "" {
		_ = os.RemoveAll(e.dir)
	}
	return e.env.Stop()
}

// AddUser returns a config that authenticates as the user name in groups (with a client
// certificate), who may do only what RBAC grants that name and those groups.
func (e *Env) AddUser(name string, groups ...string) (*rest.Config, error) {
	u, err := e.env.AddUser(envtest.User{Name: name, Groups: groups}, e.Config)
	if err != nil {
		return nil, fmt.Errorf("failed to add user %s: %w", name, err)
	}
	return u.Config(), nil
}

// InstalledCRDs names the CustomResourceDefinitions that Start installed, by group and
// resource.
func (e *Env) InstalledCRDs() []schema.GroupResource {
	var out []schema.GroupResource
	for _, crd := range e.env.CRDs {
		out = append(out, schema.GroupResource{Group: crd.Spec.Group, Resource: crd.Spec.Names.Plural})
	}
	return out
}

// CacheOptions are the cache options of almanac's manager (main.go): the transforms of
// api/index, so that the tests' managers read what the manager binary's cache keeps, and no
// more.
func CacheOptions() cache.Options {
	opts := cache.Options{DefaultTransform: index.TrimObject, ByObject: map[client.Object]cache.ByObject{}}
	for _, t := range index.Transforms() {
		opts.ByObject[t.Object] = cache.ByObject{Transform: t.Func}
	}
	return opts
}

// RegisterIndexes registers, in a test's manager, every cache field index that the webhooks
// and reconcilers read (api/index), as main.go does in almanac's manager.
func RegisterIndexes(mgr manager.Manager) error {
	for _, ix := range index.All() {
		values := ix.Values
		if err := mgr.GetFieldIndexer().IndexField(context.Background(), ix.Object, ix.Field, func(o client.Object) []string { return values(o) }); err != nil {
			return fmt.Errorf("failed to index %T by %s: %w", ix.Object, ix.Field, err)
		}
	}
	return nil
}

// WaitForWebhookServer waits until a test's manager serves its webhooks where the API server
// calls them (Webhook), or fails when done reports that the manager stopped.
func (e *Env) WaitForWebhookServer(ctx context.Context, done <-chan error) error {
	addr := net.JoinHostPort(e.Webhook.Host, strconv.Itoa(e.Webhook.Port))
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case err := <-done:
			return fmt.Errorf("the manager stopped: %w", err)
		default:
		}
		dialer := &tls.Dialer{Config: &tls.Config{InsecureSkipVerify: true}} //nolint:gosec // only checks that the port is served
		if conn, err := dialer.DialContext(ctx, "tcp", addr); err == nil {
			_ = conn.Close()
			return nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	return fmt.Errorf("the webhook server did not listen on %s", addr)
}
