package webhooks

import (
	"context"
	"net/http"
	"sync/atomic"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/webhook"
)

// DefaultDrain is how long a stopping manager keeps serving admission requests with
// "Connection: close" before its webhook server shuts down (Draining).
const DefaultDrain = 2 * time.Second

// Draining returns server, which closes the API server's kept-alive connections to it
// cleanly before it stops: once the manager stops (its context is done), every admission
// response says "Connection: close" for drain, then the server shuts down.
//
// The API server keeps its connections to a webhook Service alive, each pinned to the replica
// it was opened to. When a replica's server shuts down, it closes the connections that are
// idle at that moment; one the API server picks for a request at that very moment gets the
// request written and an EOF back, and the API server does not retry a POST: one admission
// request fails (`failed calling webhook ...: EOF`, seen in about one rolling upgrade under
// load in five, test/e2e). A response with "Connection: close" tells the API server not to
// reuse the connection, with no race: the connections it uses during the drain move to
// other replicas (the Service no longer sends new ones here: the Pod has been terminating for
// the chart's preStop drain already), and those it did not use in the drain are unlikely to
// be picked at the shutdown, since Go's transport reuses the most recently used connection
// first.
func Draining(server webhook.Server, drain time.Duration) webhook.Server {
	return &drainingServer{Server: server, drain: drain}
}

type drainingServer struct {
	webhook.Server
	drain    time.Duration
	draining atomic.Bool
}

func (s *drainingServer) Register(path string, hook http.Handler) {
	s.Server.Register(path, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.draining.Load() {
			w.Header().Set("Connection", "close")
		}
		hook.ServeHTTP(w, r)
	}))
}

// Start runs the server until ctx is done and drain has passed since.
func (s *drainingServer) Start(ctx context.Context) error {
	serving, stop := context.WithCancel(context.WithoutCancel(ctx))
	defer stop()
	go func() {
		select {
		case <-ctx.Done():
		case <-serving.Done():
			return
		}
		s.draining.Store(true)
		t := time.NewTimer(s.drain)
		defer t.Stop()
		select {
		case <-t.C:
		case <-serving.Done():
		}
		stop()
	}()
	return s.Server.Start(serving)
}
