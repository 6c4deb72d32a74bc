//go:build e2e

package e2e

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"debug/elf"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"log"
	"math/big"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/registry"
)

// ociArchive is an OCI image-layout archive read into memory.
type ociArchive map[string][]byte

func readArchive(t *testing.T, path string) ociArchive {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	a := ociArchive{}
	tr := tar.NewReader(f)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return a
		}
		if err != nil {
			t.Fatal(err)
		}
		if a[h.Name], err = io.ReadAll(tr); err != nil {
			t.Fatal(err)
		}
	}
}

type descriptor struct {
	MediaType   string            `json:"mediaType"`
	Digest      string            `json:"digest"`
	Annotations map[string]string `json:"annotations"`
	Platform    *struct {
		OS           string `json:"os"`
		Architecture string `json:"architecture"`
	} `json:"platform"`
}

type manifestOrIndex struct {
	Manifests []descriptor `json:"manifests"`
	Config    descriptor   `json:"config"`
	Layers    []descriptor `json:"layers"`
}

func (a ociArchive) json(t *testing.T, name string, v any) {
	t.Helper()
	data, ok := a[name]
	if !ok {
		t.Fatalf("the archive has no %s", name)
	}
	if err := json.Unmarshal(data, v); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
}

func (a ociArchive) blob(t *testing.T, digest string, v any) {
	t.Helper()
	a.json(t, "blobs/"+strings.Replace(digest, ":", "/", 1), v)
}

// archiveIndexDigest is the digest of the image (or image index) an archive names.
func archiveIndexDigest(t *testing.T, path string) string {
	t.Helper()
	var index manifestOrIndex
	readArchive(t, path).json(t, "index.json", &index)
	if len(index.Manifests) != 1 {
		t.Fatalf("%s names %d images, want 1", path, len(index.Manifests))
	}
	return index.Manifests[0].Digest
}

// testImage checks the image that `make image` built, which the rest of the suite runs:
// named as the chart's default, reproducible, non-root, labelled, static, with the time zone
// database inside, and working from a read-only root.
func testImage(t *testing.T) {
	path := os.Getenv("ALMANAC_IMAGE_ARCHIVE")
	a := readArchive(t, path)
	var index manifestOrIndex
	a.json(t, "index.json", &index)
	if len(index.Manifests) != 1 {
		t.Fatalf("index.json names %d images, want 1", len(index.Manifests))
	}
	top := index.Manifests[0]
	wantRef := "ghcr.io/almanac-dev/almanac:" + chartAppVersion(t)
	if got := top.Annotations["org.opencontainers.image.ref.name"]; got != wantRef {
		t.Errorf("the archive names the image %q, want the chart's default %q", got, wantRef)
	}

	// The same source gives the same digest.
	again := filepath.Join(t.TempDir(), "again.tar")
	start := time.Now()
	if r := exe(t, "", "make", "-s", "image", "IMAGE_ARCHIVE="+again); r.code != 0 {
		t.Fatalf("make image: %s", r)
	}
	if d := archiveIndexDigest(t, again); d != top.Digest {
		t.Errorf("a second make image gave %s, the first %s: the build is not reproducible", d, top.Digest)
	}
	t.Logf("make image again (%s): the same digest %s", time.Since(start).Round(time.Second), top.Digest)

	// The image for this machine's platform.
	manifest := top
	if strings.Contains(top.MediaType, "index") {
		var idx manifestOrIndex
		a.blob(t, top.Digest, &idx)
		var platforms []string
		manifest = descriptor{}
		for _, m := range idx.Manifests {
			platforms = append(platforms, m.Platform.OS+"/"+m.Platform.Architecture)
			if m.Platform.OS == "linux" && m.Platform.Architecture == "amd64" {
				manifest = m
			}
		}
		t.Logf("an image index for %s", strings.Join(platforms, ", "))
		if manifest.Digest == "" {
			t.Fatal("no linux/amd64 image in the index")
		}
	}
	var m manifestOrIndex
	a.blob(t, manifest.Digest, &m)
	var cfg struct {
		Config struct {
			User       string            `json:"User"`
			Entrypoint []string          `json:"Entrypoint"`
			Labels     map[string]string `json:"Labels"`
		} `json:"config"`
	}
	a.blob(t, m.Config.Digest, &cfg)
	if cfg.Config.User != "65532:65532" {
		t.Errorf("the image runs as %q, want 65532:65532 (nonroot)", cfg.Config.User)
	}
	if len(cfg.Config.Entrypoint) != 1 || filepath.Base(cfg.Config.Entrypoint[0]) != "almanac" {
		t.Errorf("entrypoint %v, want the almanac binary", cfg.Config.Entrypoint)
	}
	revision := strings.TrimSpace(exe(t, "", "git", "rev-parse", "HEAD").stdout)
	for label, want := range map[string]string{
		"org.opencontainers.image.source":  "https://github.com/almanac-dev/almanac",
		"org.opencontainers.image.version": chartAppVersion(t),
	} {
		if got := cfg.Config.Labels[label]; got != want {
			t.Errorf("label %s = %q, want %q", label, got, want)
		}
	}
	if got := cfg.Config.Labels["org.opencontainers.image.revision"]; !strings.HasPrefix(got, revision) {
		t.Errorf("label org.opencontainers.image.revision = %q, want the commit %s", got, revision)
	}

	// Unpack it and run it as the chart does: as 65532, from a read-only root that has no
	// shell, no C library and no /usr/share/zoneinfo.
	root := t.TempDir()
	for _, l := range m.Layers {
		unpackLayer(t, a["blobs/"+strings.Replace(l.Digest, ":", "/", 1)], root)
	}
	bin := filepath.Join(root, cfg.Config.Entrypoint[0])
	f, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			t.Error("the binary is dynamically linked (it has an ELF interpreter)")
		}
	}
	_ = f.Close()
	for _, absent := range []string{"bin/sh", "usr/share/zoneinfo", "lib"} {
		if _, err := os.Stat(filepath.Join(root, absent)); err == nil {
			t.Errorf("the image has /%s", absent)
		}
	}
	if fi, err := os.Stat(filepath.Join(root, "tmp")); err != nil || fi.Mode()&os.ModeSticky == 0 || fi.Mode().Perm() != 0o777 {
		t.Errorf("/tmp: %v %v, want drwxrwxrwt", fi.Mode(), err)
	}
	if passwd, err := os.ReadFile(filepath.Join(root, "etc", "passwd")); err != nil || !strings.Contains(string(passwd), "nonroot:x:65532:65532:") {
		t.Errorf("/etc/passwd has no nonroot 65532: %q %v", passwd, err)
	}
	for _, f := range []string{"scheduledpodautoscaler.yaml", "schedule.yaml"} {
		data, err := os.ReadFile(filepath.Join(repoRoot(), "examples", f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, f), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	inImage := func(args ...string) result {
		t.Helper()
		script := `mount --make-rprivate / && mount --bind "$0" "$0" && mount -o remount,bind,ro "$0" && exec chroot --userspec=65532:65532 "$0" "$@"`
		return exe(t, "", "unshare", append([]string{"--mount", "sh", "-c", script, root, cfg.Config.Entrypoint[0]}, args...)...)
	}
	r := inImage("--version")
	if want := "almanac " + chartAppVersion(t) + " (revision " + revision; r.code != 0 || !strings.HasPrefix(r.stdout, want) {
		t.Errorf("almanac --version in the image: want %q…, got %s", want, r)
	}
	r = inImage("preview", "-f", "/scheduledpodautoscaler.yaml", "-f", "/schedule.yaml", "--from", "2036-08-31T00:00:00Z", "--for", "2d")
	if r.code != 0 || !strings.Contains(r.stdout, "JST") || !strings.Contains(r.stdout, "EDT") {
		t.Errorf("almanac preview in the image (time zones from the embedded database): %s", r)
	}
	t.Logf("the image runs as 65532 from a read-only root without a shell, a C library or zoneinfo: %s", strings.TrimSpace(inImage("--version").stdout))
}

// unpackLayer extracts a gzip'd tar layer into root (regular files, folders and links).
func unpackLayer(t *testing.T, data []byte, root string) {
	t.Helper()
	gz, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(gz)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		target := filepath.Join(root, filepath.Clean("/"+h.Name))
		switch h.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(target, os.FileMode(h.Mode)&os.ModePerm); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(target, os.FileMode(h.Mode)&os.ModePerm|modeBits(h.Mode)); err != nil {
				t.Fatal(err)
			}
			_ = os.Lchown(target, h.Uid, h.Gid)
		case tar.TypeReg:
			if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
				t.Fatal(err)
			}
			w, err := os.OpenFile(target, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, os.FileMode(h.Mode)&os.ModePerm)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := io.Copy(w, tr); err != nil {
				t.Fatal(err)
			}
			_ = w.Close()
			_ = os.Lchown(target, h.Uid, h.Gid)
		case tar.TypeSymlink:
			_ = os.Symlink(h.Linkname, target)
		}
	}
}

// modeBits turns a tar header's setuid, setgid and sticky bits into os.FileMode bits.
func modeBits(mode int64) os.FileMode {
	var m os.FileMode
	if mode&0o4000 != 0 {
		m |= os.ModeSetuid
	}
	if mode&0o2000 != 0 {
		m |= os.ModeSetgid
	}
	if mode&0o1000 != 0 {
		m |= os.ModeSticky
	}
	return m
}

// startRegistry serves an OCI registry on loopback for the test's duration; containerd
// pulls from loopback registries over plain HTTP.
func startRegistry(t *testing.T) string {
	t.Helper()
	srv := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	t.Cleanup(srv.Close)
	return strings.TrimPrefix(srv.URL, "http://")
}

// serviceCertificate makes a CA and a serving certificate for a Service, as a user who
// brings their own certificate would.
func serviceCertificate(t *testing.T, service, namespace string) (caPEM, certPEM, keyPEM []byte) {
	t.Helper()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	ca := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "almanac e2e external CA"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, ca, ca, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	leaf := &x509.Certificate{
		SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: fmt.Sprintf("%s.%s.svc", service, namespace)},
		DNSNames:  []string{fmt.Sprintf("%s.%s.svc", service, namespace), fmt.Sprintf("%s.%s.svc.cluster.local", service, namespace)},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	leafDER, err := x509.CreateCertificate(rand.Reader, leaf, ca, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}),
		pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: leafDER}),
		pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER})
}
