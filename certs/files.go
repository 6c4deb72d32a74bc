package certs

import (
	"context"
	"crypto/tls"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"sigs.k8s.io/controller-runtime/pkg/certwatcher"
)

// fileSource serves tls.crt and tls.key from a folder (a mounted Secret, written by
// cert-manager or by the user) and reloads them when they change. It waits for the files
// instead of failing, so that a manager started before its certificate was issued becomes
// ready once it is.
type fileSource struct {
	dir string
	log logr.Logger

	mu      sync.Mutex
	watcher *certwatcher.CertWatcher
}

func newFileSource(dir string, log logr.Logger) *fileSource {
	if dir == "" {
		// controller-runtime's default webhook certificate folder.
		dir = filepath.Join(os.TempDir(), "k8s-webhook-server", "serving-certs")
	}
	return &fileSource{dir: dir, log: log}
}

func (f *fileSource) NeedLeaderElection() bool { return false }

func (f *fileSource) Start(ctx context.Context) error {
	crt, key := filepath.Join(f.dir, "tls.crt"), filepath.Join(f.dir, "tls.key")
	waiting := false
	for {
		w, err := certwatcher.New(crt, key)
		if err == nil {
			f.mu.Lock()
			f.watcher = w
			f.mu.Unlock()
			f.log.Info("Serving the webhook certificate from files, reloading them when they change", "cert", crt)
			return w.Start(ctx)
		}
		if !waiting {
			f.log.Info("Waiting for the webhook certificate files", "cert", crt, "key", key, "reason", err.Error())
			waiting = true
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(2 * time.Second):
		}
	}
}

func (f *fileSource) GetCertificate(hello *tls.ClientHelloInfo) (*tls.Certificate, error) {
	f.mu.Lock()
	w := f.watcher
	f.mu.Unlock()
	if w == nil {
		return nil, errors.New("the webhook certificate files are not there yet")
	}
	return w.GetCertificate(hello)
}
