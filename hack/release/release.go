package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/krew/pkg/index"
	"sigs.k8s.io/yaml"
)

// Platform is an operating system and architecture the CLI is built for.
type Platform struct{ OS, Arch string }

func (p Platform) String() string { return p.OS + "/" + p.Arch }

// ParsePlatforms reads "linux/amd64,darwin/arm64".
func ParsePlatforms(s string) ([]Platform, error) {
	var out []Platform
	for _, f := range strings.Split(s, ",") {
		os, arch, ok := strings.Cut(strings.TrimSpace(f), "/")
		if !ok || os == "" || arch == "" || strings.Contains(arch, "/") {
			return nil, fmt.Errorf("--platforms: %q is not os/arch (e.g. linux/amd64)", f)
		}
		out = append(out, Platform{OS: os, Arch: arch})
	}
	return out, nil
}

// BuildFunc compiles the CLI for p into the file dst.
type BuildFunc func(ctx context.Context, p Platform, dst string) error

// Config is what one release is made of. Everything it writes goes into Out, which is
// emptied first.
type Config struct {
	// Root is the almanac checkout.
	Root string
	// Out is the release folder (dist/release).
	Out string
	// Version is the release's version without a "v" (Chart.yaml's appVersion).
	Version string
	// Platforms are the CLI's targets, one archive and one krew platform each.
	Platforms []Platform
	// Build compiles the CLI (GoBuild in a release, a fake in tests).
	Build BuildFunc
	// Helm is the Helm CLI that packages the chart; empty skips the chart.
	Helm string
	// ImageArchive is the OCI archive `make image` wrote; empty skips the image.
	ImageArchive string
	// SBOMDir holds the SPDX documents ko wrote for the image (*.spdx.json).
	SBOMDir string
	// RepoURL is the GitHub repository whose releases host the archives.
	RepoURL string
	// Epoch is every file time in the archives (the commit's time), so that the same
	// source gives the same archives.
	Epoch time.Time
}

// Names of what a release holds.
const (
	binaryName     = "almanac"
	pluginName     = "almanac"
	checksumsFile  = "checksums.txt"
	krewPluginFile = pluginName + ".yaml" // krew requires <plugin name>.yaml
)

// ArchiveName is the CLI archive for p.
func ArchiveName(version string, p Platform) string {
	return fmt.Sprintf("%s_%s_%s_%s.tar.gz", binaryName, version, p.OS, p.Arch)
}

// ImageArchiveName is the image's OCI archive in a release.
func ImageArchiveName(version string) string {
	return fmt.Sprintf("%s_%s_image.oci.tar", binaryName, version)
}

// archiveDocs are the checkout's files that go into every CLI archive beside the binary,
// when they exist (krew's index wants a LICENSE in the archive).
var archiveDocs = []string{"LICENSE", "README.md"}

// Release writes the release into c.Out and returns the names of the files it wrote.
func Release(ctx context.Context, c Config) ([]string, error) {
	if c.Version == "" || strings.HasPrefix(c.Version, "v") {
		return nil, fmt.Errorf("version %q: give the chart's appVersion, without a leading v (e.g. 0.1.0)", c.Version)
	}
	if len(c.Platforms) == 0 {
		return nil, errors.New("no platforms to build the CLI for")
	}
	if err := os.RemoveAll(c.Out); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(c.Out, 0o755); err != nil { //nolint:gosec // a release folder
		return nil, err
	}
	tmp, err := os.MkdirTemp("", "almanac-release-")
	if err != nil {
		return nil, err
	}
	defer func() { _ = os.RemoveAll(tmp) }()

	var docs []string
	for _, d := range archiveDocs {
		if _, err := os.Stat(filepath.Join(c.Root, d)); err == nil {
			docs = append(docs, d)
		}
	}
	archives := map[Platform]string{} // sha256 of each CLI archive
	for _, p := range c.Platforms {
		bin := filepath.Join(tmp, p.OS+"_"+p.Arch, binaryName)
		if err := os.MkdirAll(filepath.Dir(bin), 0o755); err != nil { //nolint:gosec // a temporary folder
			return nil, err
		}
		fmt.Fprintf(os.Stderr, ">> building %s for %s\n", binaryName, p)
		if err := c.Build(ctx, p, bin); err != nil {
			return nil, fmt.Errorf("building the CLI for %s: %w", p, err)
		}
		files := []archiveFile{{name: binaryName, path: bin, mode: 0o755}}
		for _, d := range docs {
			files = append(files, archiveFile{name: d, path: filepath.Join(c.Root, d), mode: 0o644})
		}
		path := filepath.Join(c.Out, ArchiveName(c.Version, p))
		if err := writeTarGz(path, files, c.Epoch); err != nil {
			return nil, fmt.Errorf("writing %s: %w", path, err)
		}
		sum, err := sha256File(path)
		if err != nil {
			return nil, err
		}
		archives[p] = sum
	}

	plugin := KrewPlugin(c.Version, c.RepoURL, c.Platforms, archives, docs)
	manifest, err := yaml.Marshal(plugin)
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(c.Out, krewPluginFile), manifest, 0o644); err != nil { //nolint:gosec // a published file
		return nil, err
	}

	if c.Helm != "" {
		fmt.Fprintln(os.Stderr, ">> packaging the chart")
		cmd := exec.CommandContext(ctx, c.Helm, "package", filepath.Join(c.Root, "charts", "almanac"), "--destination", c.Out) //nolint:gosec // the Helm the Makefile names
		cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
		if err := cmd.Run(); err != nil {
			return nil, fmt.Errorf("helm package: %w", err)
		}
	}

	if c.ImageArchive != "" {
		if err := copyFile(c.ImageArchive, filepath.Join(c.Out, ImageArchiveName(c.Version))); err != nil {
			return nil, fmt.Errorf("the image archive (make image): %w", err)
		}
		sboms, err := filepath.Glob(filepath.Join(c.SBOMDir, "*.spdx.json"))
		if err != nil {
			return nil, err
		}
		if len(sboms) == 0 {
			return nil, fmt.Errorf("no SPDX SBOM (*.spdx.json) in %q; build the image with --sbom-dir", c.SBOMDir)
		}
		for _, s := range sboms {
			if err := copyFile(s, filepath.Join(c.Out, SBOMName(c.Version, filepath.Base(s)))); err != nil {
				return nil, err
			}
		}
	}

	names, err := WriteChecksums(c.Out)
	if err != nil {
		return nil, err
	}
	return append(names, checksumsFile), nil
}

// SBOMName renames the SBOM ko wrote (almanac-index.spdx.json for the image index,
// almanac-linux-amd64.spdx.json for one platform's image) for a release:
// almanac_0.1.0_image.spdx.json, almanac_0.1.0_image_linux_amd64.spdx.json.
func SBOMName(version, koName string) string {
	rest := strings.TrimSuffix(koName, ".spdx.json")
	_, rest, _ = strings.Cut(rest, "-") // ko's file name starts with the binary's
	suffix := ""
	if rest != "index" && rest != "" {
		suffix = "_" + strings.ReplaceAll(rest, "-", "_")
	}
	return fmt.Sprintf("%s_%s_image%s.spdx.json", binaryName, version, suffix)
}

// KrewPlugin is the krew plugin manifest of a release: one platform per CLI archive, each
// downloaded from the GitHub release v<version> and checked against its sha256. krew links
// kubectl-almanac to the almanac binary, and almanac acts as a kubectl plugin when it is
// run under that name.
func KrewPlugin(version, repoURL string, platforms []Platform, sha256s map[Platform]string, docs []string) index.Plugin {
	repoURL = strings.TrimRight(repoURL, "/")
	var out []index.Platform
	for _, p := range platforms {
		files := []index.FileOperation{{From: binaryName, To: "."}}
		for _, d := range docs {
			files = append(files, index.FileOperation{From: d, To: "."})
		}
		out = append(out, index.Platform{
			URI:    fmt.Sprintf("%s/releases/download/v%s/%s", repoURL, version, ArchiveName(version, p)),
			Sha256: sha256s[p],
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{
				"os": p.OS, "arch": p.Arch,
			}},
			Files: files,
			Bin:   binaryName,
		})
	}
	return index.Plugin{
		TypeMeta:   metav1.TypeMeta{APIVersion: "krew.googlecontainertools.github.com/v1alpha2", Kind: "Plugin"},
		ObjectMeta: metav1.ObjectMeta{Name: pluginName},
		Spec: index.PluginSpec{
			Version:          "v" + version,
			Homepage:         repoURL,
			ShortDescription: "Validate, preview and check almanac's time-aware schedules",
			Description: `almanac is the CLI of almanac, time-aware scaling and Jobs for Kubernetes
(ScheduledPodAutoscalers and Schedules, ScheduledJobs, EventJobs, Calendars).
As a kubectl plugin it validates manifests offline with the admission
webhooks' own rules, previews when each schedule opens and closes across
daylight-saving changes, checks an installation, and migrates the manifests
of the scheduling controllers almanac replaces.`,
			Platforms: out,
		},
	}
}

// WriteChecksums writes dir/checksums.txt, the sha256 of every other file in dir, sorted by
// name, in the format `sha256sum -c` reads. It returns the names.
func WriteChecksums(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var b strings.Builder
	var names []string
	for _, e := range entries {
		if e.IsDir() || e.Name() == checksumsFile {
			continue
		}
		sum, err := sha256File(filepath.Join(dir, e.Name()))
		if err != nil {
			return nil, err
		}
		fmt.Fprintf(&b, "%s  %s\n", sum, e.Name())
		names = append(names, e.Name())
	}
	return names, os.WriteFile(filepath.Join(dir, checksumsFile), []byte(b.String()), 0o644) //nolint:gosec // a published file
}

// GoBuild compiles the almanac CLI in root for p as a release build: static, without local
// paths, without VCS stamping (the revision is stamped instead), the version in
// `almanac --version`.
func GoBuild(root, version, revision string) BuildFunc {
	return func(ctx context.Context, p Platform, dst string) error {
		ldflags := fmt.Sprintf("-s -w -X main.version=%s -X main.revision=%s", version, revision)
		cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-buildvcs=false", "-ldflags", ldflags, "-o", dst, ".") //nolint:gosec // our own build of the checkout
		cmd.Dir = root
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS="+p.OS, "GOARCH="+p.Arch)
		cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
		return cmd.Run()
	}
}

type archiveFile struct {
	name, path string
	mode       int64
}

// writeTarGz writes files into a gzipped tar whose bytes depend only on their contents:
// fixed times, owners and order, no gzip timestamp.
func writeTarGz(path string, files []archiveFile, epoch time.Time) error {
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	for _, f := range files {
		data, err := os.ReadFile(f.path)
		if err != nil {
			return err
		}
		h := &tar.Header{Typeflag: tar.TypeReg, Name: f.name, Mode: f.mode, Size: int64(len(data)), ModTime: epoch.UTC().Truncate(time.Second), Format: tar.FormatUSTAR}
		if err := tw.WriteHeader(h); err != nil {
			return err
		}
		if _, err := tw.Write(data); err != nil {
			return err
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	if err := gz.Close(); err != nil {
		return err
	}
	return os.WriteFile(path, buf.Bytes(), 0o644) //nolint:gosec // a published file
}

func sha256File(path string) (string, error) {
	f, err := os.Open(path) //nolint:gosec // a file of the release
	if err != nil {
		return "", err
	}
	defer func() { _ = f.Close() }()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

func copyFile(src, dst string) error {
	in, err := os.Open(src) //nolint:gosec // an input the Makefile names
	if err != nil {
		return err
	}
	defer func() { _ = in.Close() }()
	out, err := os.Create(dst) //nolint:gosec // the release folder
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		_ = out.Close()
		return err
	}
	return out.Close()
}

// sortedPlatforms is for messages.
func sortedPlatforms(ps []Platform) []string {
	var out []string
	for _, p := range ps {
		out = append(out, p.String())
	}
	slices.Sort(out)
	return out
}
