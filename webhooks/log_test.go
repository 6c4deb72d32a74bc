package webhooks

import (
	"errors"
	"strings"
	"testing"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	admissionv1 "k8s.io/api/admission/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
)

// countingSink counts the values added to it and the Init calls, and passes everything on.
type countingSink struct {
	logr.LogSink
	withValues, inits *int
}

func (s countingSink) Init(info logr.RuntimeInfo) { *s.inits++; s.LogSink.Init(info) }

func (s countingSink) WithValues(kv ...any) logr.LogSink {
	*s.withValues++
	return countingSink{LogSink: s.LogSink.WithValues(kv...), withValues: s.withValues, inits: s.inits}
}

func (s countingSink) WithName(name string) logr.LogSink {
	return countingSink{LogSink: s.LogSink.WithName(name), withValues: s.withValues, inits: s.inits}
}

func TestRequestLogger(t *testing.T) {
	var lines []string
	var withValues, inits int
	out := funcr.New(func(prefix, args string) { lines = append(lines, prefix+" "+args) }, funcr.Options{Verbosity: 1})
	base := logr.New(countingSink{LogSink: out.GetSink(), withValues: &withValues, inits: &inits}).WithName("admission")
	inits = 0
	req := &admission.Request{AdmissionRequest: admissionv1.AdmissionRequest{
		UID: "uid-1", Namespace: "ns", Name: "a",
		Resource: metav1.GroupVersionResource{Group: "autoscaling.almanac.dev", Version: "v1alpha1", Resource: "schedules"},
		UserInfo: authenticationv1.UserInfo{Username: "alice"},
	}}

	log := requestLogger(base, req)
	log.V(5).Info("received request") // not written: controller-runtime's per-request message
	if withValues != 0 || inits != 0 || len(lines) != 0 {
		t.Fatalf("a request's logger that wrote nothing added values %d times, initialized the sink %d times and wrote %q", withValues, inits, lines)
	}

	log.WithName("handler").WithValues("k", "v").V(1).Info("written")
	log.Error(errors.New("boom"), "failed")
	if len(lines) != 2 {
		t.Fatalf("want 2 lines, got %q", lines)
	}
	for _, want := range []string{`"object"={"name"="a" "namespace"="ns"}`, `"namespace"="ns"`, `"name"="a"`, `"user"="alice"`, `"requestID"="uid-1"`, `"resource"=`} {
		for _, line := range lines {
			if !strings.Contains(line, want) {
				t.Errorf("line %q lacks %s", line, want)
			}
		}
	}
	if !strings.Contains(lines[0], "admission/handler") || !strings.Contains(lines[0], `"k"="v"`) || !strings.Contains(lines[0], `"msg"="written"`) {
		t.Errorf("name and values added to the request's logger are lost: %q", lines[0])
	}
	if !strings.Contains(lines[1], `"error"="boom"`) {
		t.Errorf("error line: %q", lines[1])
	}
	if inits != 0 {
		t.Errorf("the base sink was initialized again %d times", inits)
	}

	if got := requestLogger(base, nil); got != base {
		t.Error("the logger of no request is not the base logger")
	}
}
