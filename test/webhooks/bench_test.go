package webhooks_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"slices"
	"strconv"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	autoscalingv1alpha1 "github.com/almanac-dev/almanac/api/autoscaling/v1alpha1"
)

const siblings = 100

// BenchmarkAdmissionSchedule measures the admission of a Schedule whose autoscaler has
// overlapPolicy Forbid and 100 other Schedules in the webhooks' cache (one-hour Weekly windows
// that the new Schedule does not overlap, so that every sibling is checked over the whole
// 366-day horizon):
//
//   - APIServerDryRun: a server-side dry-run create through kube-apiserver, which calls the
//     mutating and the validating webhook over HTTPS (what `kubectl apply --dry-run=server`
//     costs);
//   - ValidatingWebhookHTTPS: one AdmissionReview POSTed straight to the validating webhook's
//     HTTPS endpoint (the webhook's own share).
//
// Each reports ns/op and the p50 and p99 latency.
func BenchmarkAdmissionSchedule(b *testing.B) {
	ns := newNamespace(b)
	mustCreate(b, ns, `
apiVersion: autoscaling.almanac.dev/v1alpha1
kind: ScheduledPodAutoscaler
metadata: {name: web}
spec: {overlapPolicy: Forbid, horizontalPodAutoscalerSpec: {scaleTargetRef: {kind: Deployment, name: web}, maxReplicas: 10}}`)
	monday := time.Date(2027, time.January, 18, 0, 0, 0, 0, time.UTC)
	for i := range siblings {
		start, end := monday.Add(time.Duration(i)*time.Hour), monday.Add(time.Duration(i+1)*time.Hour)
		if _, _, err := create(b, ns, fmt.Sprintf(`
apiVersion: autoscaling.almanac.dev/v1alpha1
kind: Schedule
metadata: {name: sibling-%03d}
spec: {scaleTargetRef: {name: web}, minReplicas: 2, type: Weekly, startDayOfWeek: %s, startTime: "%s", endDayOfWeek: %s, endTime: "%s", timeZone: Europe/Berlin}`,
			i, start.Weekday(), start.Format("15:04"), end.Weekday(), end.Format("15:04"))); err != nil {
			b.Fatal(err)
		}
	}
	waitForSchedules(b, ns, siblings)
	// Sunday 10:00 to 11:00 is free: the siblings fill Monday 00:00 to Friday 04:00.
	const manifest = `
apiVersion: autoscaling.almanac.dev/v1alpha1
kind: Schedule
metadata: {name: sunday}
spec: {scaleTargetRef: {name: web}, minReplicas: 3, type: Weekly, startDayOfWeek: sun, startTime: "10:00", endDayOfWeek: sun, endTime: "11:00", timeZone: europe/berlin}`

	b.Run("APIServerDryRun", func(b *testing.B) {
		c, _ := newClient(b)
		template := parse(b, manifest)
		template.SetNamespace(ns)
		var latencies []time.Duration
		for b.Loop() {
			obj := template.DeepCopy()
			start := time.Now()
			if err := c.Create(context.Background(), obj, client.DryRunAll); err != nil {
				b.Fatal(err)
			}
			latencies = append(latencies, time.Since(start))
		}
		reportPercentiles(b, latencies)
	})

	b.Run("ValidatingWebhookHTTPS", func(b *testing.B) {
		// The validating webhook sees the object as the mutating webhook left it.
		obj := parse(b, manifest)
		obj.SetNamespace(ns)
		if err := env.Client.Create(context.Background(), obj, client.DryRunAll); err != nil {
			b.Fatal(err)
		}
		raw, err := json.Marshal(obj)
		if err != nil {
			b.Fatal(err)
		}
		review, err := json.Marshal(admissionv1.AdmissionReview{
			TypeMeta: metav1.TypeMeta{APIVersion: "admission.k8s.io/v1", Kind: "AdmissionReview"},
			Request: &admissionv1.AdmissionRequest{
				UID: types.UID("bench"), Operation: admissionv1.Create, Name: "sunday", Namespace: ns,
				Kind:     metav1.GroupVersionKind{Group: autoscalingv1alpha1.GroupVersion.Group, Version: "v1alpha1", Kind: "Schedule"},
				Resource: metav1.GroupVersionResource{Group: autoscalingv1alpha1.GroupVersion.Group, Version: "v1alpha1", Resource: "schedules"},
				Object:   runtime.RawExtension{Raw: raw},
			},
		})
		if err != nil {
			b.Fatal(err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(env.WebhookCAData) {
			b.Fatal("no CA for the webhook server")
		}
		httpClient := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}}
		url := "https://" + net.JoinHostPort(env.Webhook.Host, strconv.Itoa(env.Webhook.Port)) + "/validate-autoscaling-almanac-dev-v1alpha1-schedule"
		var latencies []time.Duration
		for b.Loop() {
			start := time.Now()
			resp, err := httpClient.Post(url, "application/json", bytes.NewReader(review))
			if err != nil {
				b.Fatal(err)
			}
			var answer admissionv1.AdmissionReview
			err = json.NewDecoder(resp.Body).Decode(&answer)
			_ = resp.Body.Close()
			if err != nil {
				b.Fatal(err)
			}
			latencies = append(latencies, time.Since(start))
			if answer.Response == nil || !answer.Response.Allowed {
				b.Fatalf("the webhook did not admit the Schedule: %+v", answer.Response)
			}
		}
		reportPercentiles(b, latencies)
	})
}

func waitForSchedules(b *testing.B, ns string, n int) {
	b.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		list := &autoscalingv1alpha1.ScheduleList{}
		if err := cache.List(context.Background(), list, client.InNamespace(ns)); err == nil && len(list.Items) == n {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	b.Fatalf("the webhooks' cache did not get %d Schedules", n)
}

func reportPercentiles(b *testing.B, latencies []time.Duration) {
	if len(latencies) == 0 {
		return
	}
	slices.Sort(latencies)
	at := func(p float64) time.Duration { return latencies[min(len(latencies)-1, int(p*float64(len(latencies))))] }
	b.ReportMetric(float64(at(0.50).Microseconds()), "p50-µs")
	b.ReportMetric(float64(at(0.99).Microseconds()), "p99-µs")
}
