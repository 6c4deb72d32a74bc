// Command image builds almanac's container image without a Docker engine: ko (used as a
// library, pinned in this module's go.mod) compiles the binary and lays it on a small static
// base that this program builds itself, byte for byte the same on every machine. `make image`
// runs it; see the Makefile for the variables.
//
// The image:
//   - is static: the binary is built with CGO_ENABLED=0, -trimpath, and carries the IANA time
//     zone database (api/timing's own copy, and time/tzdata for libraries), so nothing is read
//     from the image at run time;
//   - runs as nonroot (65532:65532) and writes nothing outside the folders mounted for it, so
//     a read-only root filesystem is fine (the chart mounts an emptyDir at /tmp);
//   - has the binary as its entrypoint (`almanac manager` in the chart, `almanac check` in its
//     hook);
//   - carries the OCI labels source, version, revision, created, title and description;
//   - is reproducible: the same source gives the same digest (every timestamp is --created,
//     every file's owner and mode is fixed, the build has no VCS stamp).
//
// It writes an OCI image-layout archive (--oci-archive; `ctr images import` and `crane push`
// read it) and/or pushes the image to its repository (--push), and prints the reference
// with its digest. With --sbom-dir it also writes ko's SPDX SBOMs of the image (one for the
// index, one for each platform's image: the Go modules linked into the binary) into that
// folder, for a release to publish beside the archive (`make release`).
package main

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"log"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"github.com/google/ko/pkg/build"
	specsv1 "github.com/opencontainers/image-spec/specs-go/v1"
)

// nonroot is the user and group the image runs as (the chart's runAsUser).
const nonroot = 65532

// baseName names the static base in the image's annotations. It is built here, from the
// files in baseFiles, and is not pulled from any registry.
const baseName = "almanac.local/static-base:nonroot"

type options struct {
	root        string
	importPath  string
	repository  string
	version     string
	revision    string
	source      string
	created     int64
	platforms   string
	ociArchive  string
	push        bool
	sbomDir     string
	description string
	title       string
}

func main() {
	var o options
	flag.StringVar(&o.root, "root", "../..", "The almanac checkout (the Go module to build).")
	flag.StringVar(&o.importPath, "import-path", "github.com/almanac-dev/almanac", "The main package to build.")
	flag.StringVar(&o.repository, "repository", "ghcr.io/almanac-dev/almanac", "The image repository (what the chart's image.repository names).")
	flag.StringVar(&o.version, "version", "", "The version: the image tag, the org.opencontainers.image.version label and `almanac --version` (required).")
	flag.StringVar(&o.revision, "revision", "", "The source revision (a git commit): the org.opencontainers.image.revision label (required).")
	flag.StringVar(&o.source, "source", "https://github.com/almanac-dev/almanac", "The org.opencontainers.image.source label.")
	flag.Int64Var(&o.created, "created", 0, "Every timestamp in the image, in Unix seconds (the commit's time keeps builds reproducible).")
	flag.StringVar(&o.platforms, "platforms", "linux/amd64,linux/arm64", "Comma-separated platforms; more than one gives an image index.")
	flag.StringVar(&o.ociArchive, "oci-archive", "", "Write the image as an OCI image-layout archive to this file.")
	flag.BoolVar(&o.push, "push", false, "Push the image to REPOSITORY:VERSION (credentials from the Docker config; loopback and private-address registries over plain HTTP).")
	flag.StringVar(&o.sbomDir, "sbom-dir", "", "Also write the image's SPDX SBOMs (JSON) into this folder.")
	flag.StringVar(&o.title, "title", "almanac", "The org.opencontainers.image.title label.")
	flag.StringVar(&o.description, "description", "Time-aware scaling and Jobs for Kubernetes", "The org.opencontainers.image.description label.")
	flag.Parse()
	// ko logs what it does with the standard logger; keep that, but not its notes on git
	// (it reads the repository for ldflags templates, which this build does not use).
	log.SetOutput(quietGit{os.Stderr})
	if err := run(context.Background(), o); err != nil {
		fmt.Fprintln(os.Stderr, "Error:", err)
		os.Exit(1)
	}
}

// koVersion is the version of ko linked into this program ("v0.19.1"; ko writes "Tool: ko
// v0.19.1" into the SBOM).
func koVersion() string {
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, d := range info.Deps {
			if d.Path == "github.com/google/ko" {
				return d.Version
			}
		}
	}
	return "(unknown)"
}

// quietGit drops ko's log entries about the git repository.
type quietGit struct{ w io.Writer }

func (q quietGit) Write(b []byte) (int, error) {
	if bytes.Contains(b, []byte("git doesn't contain any tags")) || bytes.Contains(b, []byte("git is in a dirty state")) ||
		bytes.Contains(b, []byte("is not a git repository")) {
		return len(b), nil
	}
	return q.w.Write(b)
}

func run(ctx context.Context, o options) error {
	switch {
	case o.version == "":
		return errors.New("--version is required")
	case o.revision == "":
		return errors.New("--revision is required")
	case o.ociArchive == "" && !o.push:
		return errors.New("nothing to do: give --oci-archive FILE and/or --push")
	}
	ref, err := name.NewTag(o.repository + ":" + o.version)
	if err != nil {
		return fmt.Errorf("--repository %q with --version %q is not an image reference: %w", o.repository, o.version, err)
	}
	root, err := filepath.Abs(o.root)
	if err != nil {
		return err
	}
	created := v1.Time{Time: time.Unix(o.created, 0).UTC()}
	platforms := strings.Split(o.platforms, ",")

	base, err := baseIndex(platforms, created)
	if err != nil {
		return fmt.Errorf("building the base image: %w", err)
	}
	baseRef := name.MustParseReference(baseName)
	ldflags := []string{"-s", "-w", "-X", "main.version=" + o.version, "-X", "main.revision=" + o.revision}
	sbom := []build.Option{build.WithDisabledSBOM()}
	if o.sbomDir != "" {
		// ko names itself, with its version, as the SBOM's creator; every other field comes
		// from the image, so the SBOM is as reproducible as the image.
		if err := os.MkdirAll(o.sbomDir, 0o755); err != nil { //nolint:gosec // the folder the user asked for
			return err
		}
		sbom = []build.Option{build.WithSPDX(koVersion()), build.WithSBOMDir(o.sbomDir)}
	}
	builder, err := build.NewGo(ctx, root, append(sbom,
		build.WithBaseImages(func(context.Context, string) (name.Reference, build.Result, error) {
			return baseRef, base, nil
		}),
		build.WithPlatforms(platforms...),
		build.WithCreationTime(created),
		build.WithKoDataCreationTime(created),
		build.WithTrimpath(true),
		build.WithDefaultEnv([]string{"CGO_ENABLED=0"}),
		build.WithDefaultFlags([]string{"-buildvcs=false"}),
		build.WithDefaultLdflags(ldflags),
		build.WithUser(fmt.Sprintf("%d:%d", nonroot, nonroot)),
		build.WithLabel(specsv1.AnnotationSource, o.source),
		build.WithLabel(specsv1.AnnotationVersion, o.version),
		build.WithLabel(specsv1.AnnotationRevision, o.revision),
		build.WithLabel(specsv1.AnnotationCreated, created.Format(time.RFC3339)),
		build.WithLabel(specsv1.AnnotationTitle, o.title),
		build.WithLabel(specsv1.AnnotationDescription, o.description),
	)...)
	if err != nil {
		return err
	}
	importPath, err := builder.QualifyImport(o.importPath)
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, ">> building %s for %s with ko\n", importPath, o.platforms)
	result, err := builder.Build(ctx, importPath)
	if err != nil {
		return err
	}
	digest, err := result.Digest()
	if err != nil {
		return err
	}

	if o.ociArchive != "" {
		if err := writeArchive(o.ociArchive, result, ref); err != nil {
			return fmt.Errorf("writing %s: %w", o.ociArchive, err)
		}
		fmt.Fprintf(os.Stderr, ">> wrote %s\n", o.ociArchive)
	}
	if o.push {
		if err := push(ctx, ref, result); err != nil {
			return fmt.Errorf("pushing %s: %w", ref, err)
		}
		fmt.Fprintf(os.Stderr, ">> pushed %s\n", ref)
	}
	fmt.Printf("%s@%s\n", ref.Name(), digest)
	return nil
}

// baseFiles are the static base's files: who nonroot is (so that tools and Go's os/user
// see a name), a home, and a world-writable /tmp for anyone who runs the image without the
// chart's emptyDir. No shell, no package manager, no CA bundle: almanac only talks to the API
// server, with the cluster's CA.
func baseFiles() []tarEntry {
	return []tarEntry{
		{name: "etc/", mode: 0o755},
		{name: "etc/group", mode: 0o644, data: fmt.Sprintf("root:x:0:\nnonroot:x:%d:\n", nonroot)},
		{name: "etc/passwd", mode: 0o644, data: fmt.Sprintf("root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:%d:%d:nonroot:/home/nonroot:/sbin/nologin\n", nonroot, nonroot)},
		{name: "home/", mode: 0o755},
		{name: "home/nonroot/", mode: 0o700, uid: nonroot},
		{name: "root/", mode: 0o700},
		{name: "tmp/", mode: 0o1777},
	}
}

type tarEntry struct {
	name string
	mode int64
	uid  int
	data string
}

// baseIndex is the static base for each platform: one layer, the same for all.
func baseIndex(platforms []string, created v1.Time) (v1.ImageIndex, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, e := range baseFiles() {
		h := &tar.Header{Name: e.name, Mode: e.mode, Uid: e.uid, Gid: e.uid, ModTime: created.Time, Format: tar.FormatPAX}
		if strings.HasSuffix(e.name, "/") {
			h.Typeflag = tar.TypeDir
		} else {
			h.Typeflag, h.Size = tar.TypeReg, int64(len(e.data))
		}
		if err := tw.WriteHeader(h); err != nil {
			return nil, err
		}
		if _, err := io.WriteString(tw, e.data); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(buf.Bytes())), nil
	}, tarball.WithMediaType(types.OCILayer))
	if err != nil {
		return nil, err
	}
	var index v1.ImageIndex = mutate.IndexMediaType(empty.Index, types.OCIImageIndex)
	for _, p := range platforms {
		platform, err := v1.ParsePlatform(p)
		if err != nil {
			return nil, fmt.Errorf("--platforms: %w", err)
		}
		img := mutate.MediaType(empty.Image, types.OCIManifestSchema1)
		img = mutate.ConfigMediaType(img, types.OCIConfigJSON)
		if img, err = mutate.Append(img, mutate.Addendum{Layer: layer, History: v1.History{
			Created:   created,
			CreatedBy: "almanac hack/image: static base (passwd and group with nonroot 65532, /tmp)",
		}}); err != nil {
			return nil, err
		}
		cfg, err := img.ConfigFile()
		if err != nil {
			return nil, err
		}
		cfg = cfg.DeepCopy()
		cfg.OS, cfg.Architecture, cfg.Variant = platform.OS, platform.Architecture, platform.Variant
		cfg.Created = created
		cfg.Config.Env = []string{"PATH=/usr/local/bin:/usr/bin:/bin"}
		cfg.Config.User = fmt.Sprintf("%d:%d", nonroot, nonroot)
		cfg.Config.WorkingDir = "/"
		if img, err = mutate.ConfigFile(img, cfg); err != nil {
			return nil, err
		}
		if img, err = mutate.CreatedAt(img, created); err != nil {
			return nil, err
		}
		index = mutate.AppendManifests(index, mutate.IndexAddendum{
			Add:        img,
			Descriptor: v1.Descriptor{Platform: platform},
		})
	}
	return index, nil
}

// writeArchive writes result as an OCI image-layout archive whose index names it ref (the
// annotations that `ctr images import` and other tools read), with fixed timestamps and
// owners so that the archive, too, is the same for the same source.
func writeArchive(path string, result build.Result, ref name.Tag) error {
	dir, err := os.MkdirTemp("", "almanac-image-")
	if err != nil {
		return err
	}
	defer func() { _ = os.RemoveAll(dir) }()
	p, err := layout.Write(dir, empty.Index)
	if err != nil {
		return err
	}
	annotations := layout.WithAnnotations(map[string]string{
		specsv1.AnnotationRefName:  ref.Name(),
		"io.containerd.image.name": ref.Name(),
	})
	switch r := result.(type) {
	case v1.ImageIndex:
		err = p.AppendIndex(r, annotations)
	case v1.Image:
		err = p.AppendImage(r, annotations)
	default:
		err = fmt.Errorf("ko built a %T, neither an image nor an index", result)
	}
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return tarFolder(dir, path)
}

// tarFolder writes the files below dir into a tar file, sorted, with fixed times and owners.
func tarFolder(dir, path string) (err error) {
	var files []string
	if err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			files = append(files, p)
		}
		return err
	}); err != nil {
		return err
	}
	slices.Sort(files)
	tmp := path + ".tmp"
	f, err := os.Create(tmp) //nolint:gosec // the path the user asked for
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			_ = os.Remove(tmp)
		}
	}()
	tw := tar.NewWriter(f)
	for _, file := range files {
		data, err := os.ReadFile(file) //nolint:gosec // our own temporary folder
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, file)
		if err != nil {
			return err
		}
		h := &tar.Header{Typeflag: tar.TypeReg, Name: filepath.ToSlash(rel), Mode: 0o644, Size: int64(len(data)), ModTime: time.Unix(0, 0), Format: tar.FormatPAX}
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
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

func push(ctx context.Context, ref name.Tag, result build.Result) error {
	opts := []remote.Option{remote.WithContext(ctx), remote.WithAuthFromKeychain(authn.DefaultKeychain)}
	switch r := result.(type) {
	case v1.ImageIndex:
		return remote.WriteIndex(ref, r, opts...)
	case v1.Image:
		return remote.Write(ref, r, opts...)
	default:
		return fmt.Errorf("ko built a %T, neither an image nor an index", result)
	}
}
