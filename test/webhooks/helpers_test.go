package webhooks_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/almanac-dev/almanac/api/scheme"
)

// warningCollector records the warnings of the API server's responses.
type warningCollector struct {
	mu       sync.Mutex
	warnings []string
}

func (c *warningCollector) HandleWarningHeader(_ int, _ string, text string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.warnings = append(c.warnings, text)
}

func (c *warningCollector) take() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	w := c.warnings
	c.warnings = nil
	return w
}

// newClient returns a direct client and the collector of the warnings its requests get.
func newClient(t testing.TB) (client.Client, *warningCollector) {
	t.Helper()
	collector := &warningCollector{}
	cfg := rest.CopyConfig(env.Config)
	cfg.WarningHandler = collector
	c, err := client.New(cfg, client.Options{Scheme: scheme.Scheme, Mapper: env.Client.RESTMapper()})
	if err != nil {
		t.Fatal(err)
	}
	return c, collector
}

// create sends a manifest to the API server in namespace ns, as kubectl does (strict field
// validation), and returns the object as the server answered, the warnings and the error.
func create(t testing.TB, ns, manifest string, opts ...client.CreateOption) (*unstructured.Unstructured, []string, error) {
	t.Helper()
	c, warnings := newClient(t)
	obj := parse(t, manifest)
	obj.SetNamespace(ns)
	err := c.Create(context.Background(), obj, append([]client.CreateOption{client.FieldValidation("Strict")}, opts...)...)
	return obj, warnings.take(), err
}

// mustCreate creates a manifest that must be admitted, and waits until the webhooks' cache
// has it, so that the next request is checked against it.
func mustCreate(t testing.TB, ns, manifest string) *unstructured.Unstructured {
	t.Helper()
	obj, _, err := create(t, ns, manifest)
	if err != nil {
		t.Fatalf("create %s %s: %v", obj.GetKind(), obj.GetName(), err)
	}
	waitCached(t, obj)
	return obj
}

// waitCached waits until the webhooks' cache has obj at its resourceVersion. (It reads typed
// objects: an unstructured read would start an informer of its own.)
func waitCached(t testing.TB, obj *unstructured.Unstructured) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		typed, err := scheme.Scheme.New(obj.GroupVersionKind())
		if err != nil {
			t.Fatal(err)
		}
		got := typed.(client.Object)
		if err := cache.Get(context.Background(), client.ObjectKeyFromObject(obj), got); err == nil && got.GetResourceVersion() == obj.GetResourceVersion() {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("the webhooks' cache did not get %s %s/%s", obj.GetKind(), obj.GetNamespace(), obj.GetName())
}

func parse(t testing.TB, manifest string) *unstructured.Unstructured {
	t.Helper()
	obj := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(manifest), &obj.Object); err != nil {
		t.Fatalf("bad test manifest: %v", err)
	}
	return obj
}

func newNamespace(t testing.TB) string {
	t.Helper()
	ns := &unstructured.Unstructured{}
	ns.SetAPIVersion("v1")
	ns.SetKind("Namespace")
	ns.SetGenerateName("webhooks-")
	if err := env.Client.Create(context.Background(), ns); err != nil {
		t.Fatal(err)
	}
	return ns.GetName()
}

// causes returns the causes of a 422 Invalid error, or fails the test.
func causes(t testing.TB, err error) []metav1.StatusCause {
	t.Helper()
	var status apierrors.APIStatus
	if !errors.As(err, &status) || !apierrors.IsInvalid(err) {
		t.Fatalf("want a 422 Invalid, got %v", err)
	}
	return status.Status().Details.Causes
}

// setClock moves the webhooks' clock for the rest of the test.
func setClock(t testing.TB, to time.Time) {
	t.Helper()
	clk.SetTime(to)
	t.Cleanup(func() { clk.SetTime(now) })
}

func fieldOf(obj *unstructured.Unstructured, path string) any {
	v, _, _ := unstructured.NestedFieldNoCopy(obj.Object, strings.Split(path, ".")...)
	return v
}

const jobTemplate = `
  jobTemplate: {spec: {template: {spec: {containers: [{name: c, image: busybox}], restartPolicy: Never}}}}`
