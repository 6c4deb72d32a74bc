// Package install tests what an installation depends on, against a real kube-apiserver and
// etcd: the self-managed webhook certificates (served, injected, rotated, shared by
// replicas), `almanac check`, and the Helm chart (lint, render, install, uninstall).
package install

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/almanac-dev/almanac/api/scheme"
	"github.com/almanac-dev/almanac/certs"
	"github.com/almanac-dev/almanac/test/testenv"
)

var env *testenv.Env

// ns is the namespace the managers "run in": it holds their CA Secret and Leases.
const ns = "almanac-system"

func TestMain(m *testing.M) {
	if os.Getenv("ALMANAC_TEST_LOGS") != "" {
		ctrl.SetLogger(zap.New(zap.UseDevMode(true)))
	}
	var err error
	env, err = testenv.Start()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if err := env.Client.Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		_ = env.Stop()
		os.Exit(1)
	}
	code := m.Run()
	if binaryDir != "" {
		_ = os.RemoveAll(binaryDir)
	}
	stopChartEnv()
	_ = env.Stop()
	os.Exit(code)
}

// replica is one in-process almanac manager with the certs package in self-managed mode,
// serving a test admission handler that allows everything and counts its calls.
type replica struct {
	name     string
	port     int
	provider *certs.Provider
	calls    atomic.Int64
	cancel   context.CancelFunc
	done     chan struct{}
	mgr      manager.Manager
}

type replicaConfig struct {
	// id names the test: its Secret, webhook configurations and Lease.
	id           string
	leafDuration time.Duration
	webhooks     []string // paths served
}

func freePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = l.Close() }()
	return l.Addr().(*net.TCPAddr).Port
}

func startReplica(t testing.TB, name string, rc replicaConfig) *replica {
	t.Helper()
	r := &replica{name: name, port: freePort(t), done: make(chan struct{})}
	opts := certs.Options{
		Mode:                           certs.ModeSelfManaged,
		Namespace:                      ns,
		CASecretName:                   rc.id + "-ca",
		ServiceName:                    rc.id,
		DNSNames:                       []string{"localhost"},
		MutatingWebhookConfiguration:   rc.id,
		ValidatingWebhookConfiguration: rc.id,
		CADuration:                     24 * time.Hour,
		LeafDuration:                   rc.leafDuration,
	}
	if opts.LeafDuration == 0 {
		opts.LeafDuration = time.Hour
	}
	p, err := certs.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	r.provider = p
	mgr, err := ctrl.NewManager(env.Config, manager.Options{
		Scheme:                        scheme.Scheme,
		Metrics:                       metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress:        "0",
		LeaderElection:                true,
		LeaderElectionID:              rc.id,
		LeaderElectionNamespace:       ns,
		LeaderElectionReleaseOnCancel: true,
		LeaseDuration:                 ptr.To(4 * time.Second),
		RenewDeadline:                 ptr.To(3 * time.Second),
		RetryPeriod:                   ptr.To(500 * time.Millisecond),
		WebhookServer: webhook.NewServer(webhook.Options{
			Port:    r.port,
			TLSOpts: []func(*tls.Config){p.ConfigureTLS},
		}),
	})
	if err != nil {
		t.Fatal(err)
	}
	r.mgr = mgr
	allow := admission.HandlerFunc(func(context.Context, admission.Request) admission.Response {
		r.calls.Add(1)
		return admission.Allowed("")
	})
	for _, path := range rc.webhooks {
		// Closing every connection makes the API server do a TLS handshake per request, so
		// every request sees the certificate served at that moment (a kept-alive
		// connection would hide a rotation).
		wh := &webhook.Admission{Handler: allow}
		mgr.GetWebhookServer().Register(path, http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
			w.Header().Set("Connection", "close")
			wh.ServeHTTP(w, req)
		}))
	}
	if err := p.SetupWithManager(mgr); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	r.cancel = cancel
	go func() {
		defer close(r.done)
		if err := mgr.Start(ctx); err != nil {
			t.Errorf("replica %s: %v", name, err)
		}
	}()
	t.Cleanup(r.stop)
	return r
}

var stopOnce sync.Map

func (r *replica) stop() {
	if _, loaded := stopOnce.LoadOrStore(r, true); loaded {
		return
	}
	r.cancel()
	<-r.done
}

func (r *replica) url(path string) string {
	return "https://localhost:" + strconv.Itoa(r.port) + path
}

// configMapRule and configMapSelector scope a test's webhooks to its own ConfigMaps.
var configMapRule = admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"configmaps"}}

func configMapSelector(id string) *metav1.LabelSelector {
	return &metav1.LabelSelector{MatchLabels: map[string]string{"almanac-test": id}}
}

// webhookConfigurations creates a mutating and a validating configuration named id, without
// a caBundle, whose webhooks call mutatingURL and validatingURL on CREATE and UPDATE of
// rule's resources matching selector (nil: all), and deletes them when the test ends.
func webhookConfigurations(t testing.TB, id, mutatingURL, validatingURL string, rule admissionregistrationv1.Rule, selector *metav1.LabelSelector) {
	t.Helper()
	ctx := context.Background()
	rules := []admissionregistrationv1.RuleWithOperations{{
		Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update},
		Rule:       rule,
	}}
	m := &admissionregistrationv1.MutatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: id},
		Webhooks: []admissionregistrationv1.MutatingWebhook{{
			Name: "m." + id + ".almanac.dev", ClientConfig: admissionregistrationv1.WebhookClientConfig{URL: ptr.To(mutatingURL)},
			Rules: rules, ObjectSelector: selector,
			SideEffects: ptr.To(admissionregistrationv1.SideEffectClassNone), FailurePolicy: ptr.To(admissionregistrationv1.Fail),
			TimeoutSeconds: ptr.To[int32](5), AdmissionReviewVersions: []string{"v1"},
		}},
	}
	v := &admissionregistrationv1.ValidatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: id},
		Webhooks: []admissionregistrationv1.ValidatingWebhook{{
			Name: "v." + id + ".almanac.dev", ClientConfig: admissionregistrationv1.WebhookClientConfig{URL: ptr.To(validatingURL)},
			Rules: rules, ObjectSelector: selector,
			SideEffects: ptr.To(admissionregistrationv1.SideEffectClassNone), FailurePolicy: ptr.To(admissionregistrationv1.Fail),
			TimeoutSeconds: ptr.To[int32](5), AdmissionReviewVersions: []string{"v1"},
		}},
	}
	if err := env.Client.Create(ctx, m); err != nil {
		t.Fatal(err)
	}
	if err := env.Client.Create(ctx, v); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = env.Client.Delete(context.Background(), m)
		_ = env.Client.Delete(context.Background(), v)
	})
}

// eventually polls f every 100ms until it returns nil or timeout passes.
func eventually(t testing.TB, timeout time.Duration, what string, f func() error) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	var err error
	for time.Now().Before(deadline) {
		if err = f(); err == nil {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("%s: not within %s: %v", what, timeout, err)
}
