package bench_test

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// noopWebhooksLabel on a namespace puts the no-op webhooks in the path of its Schedules;
// patchingWebhooksLabel puts the no-op pair in whose mutating webhook answers with a fixed
// patch.
const (
	noopWebhooksLabel     = "bench.almanac.dev/noop-webhooks"
	patchingWebhooksLabel = "bench.almanac.dev/patching-noop-webhooks"
)

// serveNoopEnv, set to a JSON patch, makes the test binary serve the no-op webhooks
// (serveNoopWebhooks) instead of running the benchmarks.
const serveNoopEnv = "ALMANAC_BENCH_SERVE_NOOP_WEBHOOKS"

// noopWebhooks is the process that serves the no-op webhooks.
type noopWebhooks struct {
	pid    int
	url    string
	client *http.Client
}

// startNoopWebhooks serves two pairs of a mutating and a validating webhook that decode the
// AdmissionReview and its object and admit it, from a process of their own (the test binary,
// serveNoopWebhooks) over TLS and HTTP/1.1, as the manager serves its webhooks, and registers
// them for Schedules: the pair in namespaces labelled noopWebhooksLabel changes nothing, what
// any pair of webhooks costs a create on this API server; the pair in namespaces labelled
// patchingWebhooksLabel answers every create with patch (a JSON patch), what any pair costs
// whose mutating webhook changes the object: the API server then applies the patch and runs
// its mutating admission plugins again. These are the floors under what almanac's webhooks
// add. Served from the harness's own process instead, whose threads are awake because it has
// just sent the create, they answered sooner than any webhook in a process of its own can.
func startNoopWebhooks(tb testing.TB, patch []byte) *noopWebhooks {
	tb.Helper()
	cmd := exec.Command(os.Args[0]) // the test binary itself
	cmd.Env = append(os.Environ(), serveNoopEnv+"="+string(patch))
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		tb.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		tb.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		_ = stdin.Close() // the process stops when its stdin closes
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	})
	var served struct{ URL, CABundle string }
	line, err := bufio.NewReader(stdout).ReadBytes('\n')
	if err == nil {
		err = json.Unmarshal(line, &served)
	}
	if err != nil {
		tb.Fatalf("the no-op webhooks' process did not say where it serves: %v (%q)", err, line)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM([]byte(served.CABundle)) {
		tb.Fatal("the no-op webhooks' CA bundle holds no certificate")
	}
	n := &noopWebhooks{pid: cmd.Process.Pid, url: served.URL, client: &http.Client{
		Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}},
		Timeout:   10 * time.Second,
	}}

	selector := func(label string) *metav1.LabelSelector {
		return &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: label, Operator: metav1.LabelSelectorOpExists}}}
	}
	rules := []admissionregistrationv1.RuleWithOperations{{
		Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update},
		Rule: admissionregistrationv1.Rule{
			APIGroups: []string{"autoscaling.almanac.dev"}, APIVersions: []string{"v1alpha1"}, Resources: []string{"schedules"},
		},
	}}
	clientConfig := func(path string) admissionregistrationv1.WebhookClientConfig {
		return admissionregistrationv1.WebhookClientConfig{URL: ptr.To(served.URL + path), CABundle: []byte(served.CABundle)}
	}
	none := admissionregistrationv1.SideEffectClassNone
	fail := admissionregistrationv1.Fail
	ctx := context.Background()
	mutating := &admissionregistrationv1.MutatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: "bench-noop"},
		Webhooks: []admissionregistrationv1.MutatingWebhook{{
			Name: "mutate.noop.bench.almanac.dev", ClientConfig: clientConfig("/mutate"), Rules: rules,
			NamespaceSelector: selector(noopWebhooksLabel), SideEffects: &none, FailurePolicy: &fail, AdmissionReviewVersions: []string{"v1"},
		}, {
			Name: "mutate.patching.bench.almanac.dev", ClientConfig: clientConfig("/mutate-patch"), Rules: rules,
			NamespaceSelector: selector(patchingWebhooksLabel), SideEffects: &none, FailurePolicy: &fail, AdmissionReviewVersions: []string{"v1"},
		}},
	}
	validating := &admissionregistrationv1.ValidatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: "bench-noop"},
		Webhooks: []admissionregistrationv1.ValidatingWebhook{{
			Name: "validate.noop.bench.almanac.dev", ClientConfig: clientConfig("/validate"), Rules: rules,
			NamespaceSelector: selector(noopWebhooksLabel), SideEffects: &none, FailurePolicy: &fail, AdmissionReviewVersions: []string{"v1"},
		}, {
			Name: "validate.patching.bench.almanac.dev", ClientConfig: clientConfig("/validate"), Rules: rules,
			NamespaceSelector: selector(patchingWebhooksLabel), SideEffects: &none, FailurePolicy: &fail, AdmissionReviewVersions: []string{"v1"},
		}},
	}
	if err := env.Client.Create(ctx, mutating); err != nil {
		tb.Fatal(err)
	}
	if err := env.Client.Create(ctx, validating); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		_ = env.Client.Delete(ctx, mutating)
		_ = env.Client.Delete(ctx, validating)
	})
	return n
}

// answered returns the number of reviews the no-op webhooks have answered.
func (n *noopWebhooks) answered() (int64, error) {
	resp, err := n.client.Get(n.url + "/answered") //nolint:noctx // a local URL, with the client's timeout
	if err != nil {
		return 0, err
	}
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, err
	}
	return strconv.ParseInt(string(body), 10, 64)
}

// serveNoopWebhooks is the no-op webhooks' process (startNoopWebhooks): it serves them on a
// loopback port, writes where (the URL and the CA bundle, as one JSON line) to stdout, and
// serves until its stdin closes. It returns the exit code.
func serveNoopWebhooks(patch []byte) int {
	var answered atomic.Int64
	admit := func(patch []byte) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			var review admissionv1.AdmissionReview
			if err := json.NewDecoder(r.Body).Decode(&review); err != nil || review.Request == nil {
				http.Error(w, "not an AdmissionReview", http.StatusBadRequest)
				return
			}
			var obj map[string]any
			if err := json.Unmarshal(review.Request.Object.Raw, &obj); err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			review.Response = &admissionv1.AdmissionResponse{UID: review.Request.UID, Allowed: true}
			if patch != nil {
				review.Response.Patch, review.Response.PatchType = patch, ptr.To(admissionv1.PatchTypeJSONPatch)
			}
			review.Request = nil
			w.Header().Set("Content-Type", "application/json")
			_ = json.NewEncoder(w).Encode(&review)
			answered.Add(1)
		}
	}
	if len(patch) == 0 {
		fmt.Fprintln(os.Stderr, serveNoopEnv+" holds no patch")
		return 1
	}
	mux := http.NewServeMux()
	mux.Handle("/mutate", admit(nil))
	mux.Handle("/mutate-patch", admit(patch))
	mux.Handle("/validate", admit(nil))
	mux.HandleFunc("/answered", func(w http.ResponseWriter, _ *http.Request) {
		_, _ = fmt.Fprint(w, answered.Load())
	})
	srv := httptest.NewUnstartedServer(mux)
	srv.EnableHTTP2 = false
	srv.StartTLS()
	defer srv.Close()
	where, err := json.Marshal(struct{ URL, CABundle string }{
		URL: srv.URL, CABundle: string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})),
	})
	if err == nil {
		_, err = fmt.Printf("%s\n", where)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if _, err := io.Copy(io.Discard, os.Stdin); err != nil && !errors.Is(err, os.ErrClosed) {
		fmt.Fprintln(os.Stderr, err)
	}
	return 0
}
