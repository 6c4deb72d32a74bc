package install

import (
	"context"
	"testing"
	"time"
)

// BenchmarkAdmission measures what almanac's webhooks add to a write: a server-side dry-run
// create through the API server, with a mutating and a validating webhook served by a
// replica with self-managed certificates (a TLS handshake per call, as in the rotation
// test), against the same request with no webhook in its path.
//
//	flock /tmp/almanac-bench.lock go test -run '^$' -bench Admission -benchtime 3s ./test/install
func BenchmarkAdmission(b *testing.B) {
	b.Run("no webhook", func(b *testing.B) {
		ctx := context.Background()
		for i := 0; b.Loop(); i++ {
			if err := admit(ctx, "bench-none", int64(i)); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("mutating and validating webhook", func(b *testing.B) {
		const id = "bench"
		r := startReplica(b, "a", replicaConfig{id: id, webhooks: []string{"/mutate", "/validate"}})
		webhookConfigurations(b, id, r.url("/mutate"), r.url("/validate"), configMapRule, configMapSelector(id))
		eventually(b, 30*time.Second, "replica ready", func() error { return r.provider.ReadyzCheck(nil) })
		ctx := context.Background()
		// The API server picks up the configurations shortly after they are created.
		eventually(b, 30*time.Second, "webhooks in the path", func() error {
			if err := admit(ctx, id, 0); err != nil {
				return err
			}
			if r.calls.Load() == 0 {
				return context.DeadlineExceeded
			}
			return nil
		})
		before := r.calls.Load()
		for i := 0; b.Loop(); i++ {
			if err := admit(ctx, id, int64(i)); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(r.calls.Load()-before)/float64(b.N), "webhook-calls/op")
	})
}
