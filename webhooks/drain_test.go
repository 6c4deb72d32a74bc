package webhooks

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/healthz"
)

// fakeServer is the webhook server under Draining: it records the handlers and the context
// it was started with, and runs until that context is done.
type fakeServer struct {
	handlers map[string]http.Handler
	started  chan context.Context
}

func (f *fakeServer) NeedLeaderElection() bool                { return false }
func (f *fakeServer) Register(path string, hook http.Handler) { f.handlers[path] = hook }
func (f *fakeServer) StartedChecker() healthz.Checker         { return healthz.Ping }
func (f *fakeServer) WebhookMux() *http.ServeMux              { return nil }
func (f *fakeServer) Start(ctx context.Context) error {
	f.started <- ctx
	<-ctx.Done()
	return nil
}

// TestDraining: while the manager runs, admission responses keep the connection alive; once it
// stops, they say "Connection: close" for the drain, and only then does the server stop.
func TestDraining(t *testing.T) {
	inner := &fakeServer{handlers: map[string]http.Handler{}, started: make(chan context.Context, 1)}
	const drain = 300 * time.Millisecond
	s := Draining(inner, drain)
	s.Register("/validate", http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) }))
	call := func() string {
		rec := httptest.NewRecorder()
		inner.handlers["/validate"].ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/validate", nil))
		return rec.Header().Get("Connection")
	}

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Start(ctx) }()
	serving := <-inner.started
	if got := call(); got != "" {
		t.Errorf("while running: Connection %q, want the connection kept alive", got)
	}

	cancel()
	stopped := time.Now()
	// The fence: the drain shows (responses say "Connection: close"); the server must still
	// be serving then.
	for call() != "close" {
		if time.Since(stopped) > 10*drain {
			t.Fatal("no response says Connection: close after the manager stopped")
		}
		time.Sleep(time.Millisecond)
	}
	if serving.Err() != nil {
		t.Fatal("the server stopped as soon as the manager did, with no drain")
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
		if waited := time.Since(stopped); waited < drain {
			t.Errorf("the server stopped %s after the manager, before the drain of %s", waited, drain)
		}
	case <-time.After(10 * drain):
		t.Fatal("the server did not stop after the drain")
	}
}
