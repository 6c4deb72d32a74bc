package main

import (
	"archive/tar"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/krew/pkg/index"
	"sigs.k8s.io/yaml"
)

// fakeBuild writes, instead of compiling almanac, a shell script that prints the name it was
// run as and the platform it was "built" for.
func fakeBuild(_ context.Context, p Platform, dst string) error {
	return os.WriteFile(dst, fmt.Appendf(nil, "#!/bin/sh\necho \"$(basename \"$0\") %s\"\n", p), 0o755)
}

// fakeCheckout is a checkout with a README and a chart whose appVersion is 1.2.3.
func fakeCheckout(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "README.md"), []byte("# almanac\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return root
}

var testPlatforms = []Platform{{"linux", "amd64"}, {"linux", "arm64"}, {"darwin", "amd64"}, {"darwin", "arm64"}}

func fakeRelease(t *testing.T, mutate func(*Config)) (Config, []string) {
	t.Helper()
	c := Config{
		Root: fakeCheckout(t), Out: filepath.Join(t.TempDir(), "release"), Version: "1.2.3",
		Platforms: testPlatforms, Build: fakeBuild, RepoURL: "https://github.com/almanac-dev/almanac",
		Epoch: time.Unix(1700000000, 0),
	}
	if mutate != nil {
		mutate(&c)
	}
	names, err := Release(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	return c, names
}

// TestReleaseFiles: one archive per platform holding the binary and the README, a krew
// manifest, and checksums that sha256sum verifies.
func TestReleaseFiles(t *testing.T) {
	c, names := fakeRelease(t, nil)
	want := []string{
		"almanac.yaml",
		"almanac_1.2.3_darwin_amd64.tar.gz", "almanac_1.2.3_darwin_arm64.tar.gz",
		"almanac_1.2.3_linux_amd64.tar.gz", "almanac_1.2.3_linux_arm64.tar.gz",
		"checksums.txt",
	}
	slices.Sort(names)
	if !slices.Equal(names, want) {
		t.Errorf("release files %v, want %v", names, want)
	}
	for _, p := range testPlatforms {
		files := readTarGz(t, filepath.Join(c.Out, ArchiveName("1.2.3", p)))
		if got := slices.Sorted(maps.Keys(files)); !slices.Equal(got, []string{"README.md", "almanac"}) {
			t.Errorf("%s holds %v, want almanac and README.md", p, got)
		}
		if !strings.Contains(files["almanac"].data, p.String()) {
			t.Errorf("%s holds the binary of another platform: %q", p, files["almanac"].data)
		}
		if files["almanac"].mode&0o111 == 0 {
			t.Errorf("%s: almanac is not executable (mode %o)", p, files["almanac"].mode)
		}
	}
	if _, err := exec.LookPath("sha256sum"); err == nil {
		cmd := exec.Command("sha256sum", "-c", "checksums.txt")
		cmd.Dir = c.Out
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("sha256sum -c checksums.txt: %v\n%s", err, out)
		}
	}
	sums, err := os.ReadFile(filepath.Join(c.Out, "checksums.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(sums), "\n"); n != len(want)-1 {
		t.Errorf("checksums.txt has %d lines, want one per other file (%d):\n%s", n, len(want)-1, sums)
	}
}

// TestReleaseReproducible: the same input gives the same archives, byte for byte.
func TestReleaseReproducible(t *testing.T) {
	a, _ := fakeRelease(t, nil)
	b, _ := fakeRelease(t, nil)
	for _, f := range []string{"checksums.txt", "almanac.yaml"} {
		x, _ := os.ReadFile(filepath.Join(a.Out, f))
		y, _ := os.ReadFile(filepath.Join(b.Out, f))
		if string(x) != string(y) || len(x) == 0 {
			t.Errorf("%s differs between two releases of the same input:\n%s\n---\n%s", f, x, y)
		}
	}
}

// TestKrewManifest: the manifest has one platform per archive, pointing at the GitHub
// release v<version> with the archive's sha256, and krew's own validator accepts it.
func TestKrewManifest(t *testing.T) {
	c, _ := fakeRelease(t, nil)
	manifest := filepath.Join(c.Out, "almanac.yaml")
	data, err := os.ReadFile(manifest)
	if err != nil {
		t.Fatal(err)
	}
	var plugin index.Plugin
	if err := yaml.UnmarshalStrict(data, &plugin); err != nil {
		t.Fatal(err)
	}
	sums, err := os.ReadFile(filepath.Join(c.Out, "checksums.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if len(plugin.Spec.Platforms) != len(testPlatforms) {
		t.Fatalf("%d platforms, want %d", len(plugin.Spec.Platforms), len(testPlatforms))
	}
	for i, p := range testPlatforms {
		got := plugin.Spec.Platforms[i]
		archive := ArchiveName("1.2.3", p)
		if want := "https://github.com/almanac-dev/almanac/releases/download/v1.2.3/" + archive; got.URI != want {
			t.Errorf("%s: uri %s, want %s", p, got.URI, want)
		}
		if !strings.Contains(string(sums), got.Sha256+"  "+archive+"\n") {
			t.Errorf("%s: sha256 %s is not the archive's (checksums.txt:\n%s)", p, got.Sha256, sums)
		}
		if got.Selector.MatchLabels["os"] != p.OS || got.Selector.MatchLabels["arch"] != p.Arch || got.Bin != "almanac" {
			t.Errorf("%s: selector %v, bin %q", p, got.Selector.MatchLabels, got.Bin)
		}
	}
	if plugin.Spec.Version != "v1.2.3" {
		t.Errorf("version %q, want v1.2.3", plugin.Spec.Version)
	}
	if out, err := validateKrew(t, manifest); err != nil {
		t.Errorf("krew's validate-krew-manifest refused the manifest: %v\n%s", err, out)
	}
}

// TestKrewValidatorRefuses shows that the validation above can fail: krew refuses a
// manifest with a bad sha256, one without a platform selector, and two platforms that
// select the same os/arch.
func TestKrewValidatorRefuses(t *testing.T) {
	c, _ := fakeRelease(t, nil)
	data, err := os.ReadFile(filepath.Join(c.Out, "almanac.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for name, edit := range map[string]func(*index.Plugin){
		"bad sha256":  func(p *index.Plugin) { p.Spec.Platforms[0].Sha256 = "abc" },
		"no selector": func(p *index.Plugin) { p.Spec.Platforms[1].Selector = nil },
		"overlap":     func(p *index.Plugin) { p.Spec.Platforms[1].Selector = p.Spec.Platforms[0].Selector },
		"no version":  func(p *index.Plugin) { p.Spec.Version = "" },
	} {
		var p index.Plugin
		if err := yaml.Unmarshal(data, &p); err != nil {
			t.Fatal(err)
		}
		edit(&p)
		b, err := yaml.Marshal(p)
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(t.TempDir(), "almanac.yaml")
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		if out, err := validateKrew(t, path); err == nil {
			t.Errorf("%s: krew accepted the manifest:\n%s", name, out)
		}
	}
}

// TestKrewInstall installs the plugin for this machine's platform with krew itself, from
// the manifest and the archive (krew checks the archive's sha256): kubectl-almanac runs
// almanac under the plugin's name.
func TestKrewInstall(t *testing.T) {
	c, _ := fakeRelease(t, nil)
	host := Platform{runtime.GOOS, runtime.GOARCH}
	if !slices.Contains(testPlatforms, host) {
		t.Skipf("no archive for %s", host)
	}
	krewRoot := t.TempDir()
	cmd := exec.Command("go", "tool", "krew", "install", "--manifest", filepath.Join(c.Out, "almanac.yaml"),
		"--archive", filepath.Join(c.Out, ArchiveName("1.2.3", host)))
	cmd.Env = append(os.Environ(), "KREW_ROOT="+krewRoot, "KREW_NO_UPGRADE_CHECK=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("krew install: %v\n%s", err, out)
	}
	out, err := exec.Command(filepath.Join(krewRoot, "bin", "kubectl-almanac")).CombinedOutput()
	if err != nil {
		t.Fatalf("kubectl-almanac: %v\n%s", err, out)
	}
	if want := "kubectl-almanac " + host.String(); strings.TrimSpace(string(out)) != want {
		t.Errorf("kubectl-almanac printed %q, want %q", out, want)
	}

	// An archive that is not the one the manifest names is refused.
	other := Platform{"linux", "arm64"}
	if host == other {
		other = Platform{"linux", "amd64"}
	}
	cmd = exec.Command("go", "tool", "krew", "install", "--manifest", filepath.Join(c.Out, "almanac.yaml"),
		"--archive", filepath.Join(c.Out, ArchiveName("1.2.3", other)))
	cmd.Env = append(os.Environ(), "KREW_ROOT="+t.TempDir(), "KREW_NO_UPGRADE_CHECK=1")
	if out, err := cmd.CombinedOutput(); err == nil {
		t.Errorf("krew installed the %s archive as the %s platform's:\n%s", other, host, out)
	}
}

// TestReleaseImageAndSBOM: the image archive and ko's SBOMs are published under release
// names, and a missing SBOM is refused.
func TestReleaseImageAndSBOM(t *testing.T) {
	dir := t.TempDir()
	img := filepath.Join(dir, "almanac-image.tar")
	sboms := filepath.Join(dir, "sbom")
	if err := os.MkdirAll(sboms, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, content := range map[string]string{
		img: "oci", filepath.Join(sboms, "almanac-index.spdx.json"): "{}",
		filepath.Join(sboms, "almanac-linux-amd64.spdx.json"): "{}",
	} {
		if err := os.WriteFile(name, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	_, names := fakeRelease(t, func(c *Config) { c.ImageArchive, c.SBOMDir = img, sboms })
	for _, want := range []string{"almanac_1.2.3_image.oci.tar", "almanac_1.2.3_image.spdx.json", "almanac_1.2.3_image_linux_amd64.spdx.json"} {
		if !slices.Contains(names, want) {
			t.Errorf("release lacks %s: %v", want, names)
		}
	}
	c := Config{Root: fakeCheckout(t), Out: filepath.Join(dir, "out"), Version: "1.2.3", Platforms: testPlatforms[:1],
		Build: fakeBuild, ImageArchive: img, SBOMDir: t.TempDir()}
	if _, err := Release(context.Background(), c); err == nil || !strings.Contains(err.Error(), "SBOM") {
		t.Errorf("a release without an SBOM: %v, want a refusal", err)
	}
}

// TestGoBuildStampsVersion compiles a small stand-in for almanac's main package (the real
// cross-compilation is `make release`'s) and runs it: the version and revision are stamped
// and the build is static and path-free.
func TestGoBuildStampsVersion(t *testing.T) {
	root := t.TempDir()
	for name, content := range map[string]string{
		"go.mod":  "module example.com/fake\n\ngo 1.22\n",
		"main.go": "package main\n\nimport \"fmt\"\n\nvar (\n\tversion = \"devel\"\n\trevision = \"\"\n)\n\nfunc main() { fmt.Println(version, revision) }\n",
	} {
		if err := os.WriteFile(filepath.Join(root, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	bin := filepath.Join(t.TempDir(), "almanac")
	if err := GoBuild(root, "1.2.3", "abc123")(context.Background(), Platform{runtime.GOOS, runtime.GOARCH}, bin); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(bin).Output()
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(string(out)); got != "1.2.3 abc123" {
		t.Errorf("the binary says %q, want the stamped \"1.2.3 abc123\"", got)
	}
	info, err := exec.Command("go", "version", "-m", bin).Output()
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"CGO_ENABLED=0", "-trimpath=true"} {
		if !strings.Contains(string(info), want) {
			t.Errorf("go version -m lacks %s:\n%s", want, info)
		}
	}
	if strings.Contains(string(info), root) {
		t.Errorf("the binary names the build folder %s:\n%s", root, info)
	}
}

// TestReleaseRefuses: a version with a v, and no platforms.
func TestReleaseRefuses(t *testing.T) {
	for name, c := range map[string]Config{
		"v prefix":     {Version: "v1.2.3", Platforms: testPlatforms},
		"no platforms": {Version: "1.2.3"},
	} {
		c.Root, c.Out, c.Build = t.TempDir(), filepath.Join(t.TempDir(), "out"), fakeBuild
		if _, err := Release(context.Background(), c); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	if _, err := ParsePlatforms("linux"); err == nil {
		t.Error(`ParsePlatforms("linux") accepted`)
	}
}

// TestChartPackage packages the real chart with Helm (HELM, as `make release-test` sets it)
// and checks that the package carries the Artifact Hub annotations.
func TestChartPackage(t *testing.T) {
	helm := os.Getenv("HELM")
	if helm == "" {
		t.Skip("HELM is not set; run `make release-test`")
	}
	c, names := fakeRelease(t, func(c *Config) {
		c.Helm = helm
		c.Platforms = testPlatforms[:1]
		root, err := filepath.Abs("../..")
		if err != nil {
			t.Fatal(err)
		}
		c.Root = root
	})
	var pkg string
	for _, n := range names {
		if strings.HasPrefix(n, "almanac-") && strings.HasSuffix(n, ".tgz") {
			pkg = n
		}
	}
	if pkg == "" {
		t.Fatalf("no chart package among %v", names)
	}
	files := readTarGz(t, filepath.Join(c.Out, pkg))
	chart, ok := files["almanac/Chart.yaml"]
	if !ok {
		t.Fatalf("%s has no almanac/Chart.yaml", pkg)
	}
	for _, key := range []string{"artifacthub.io/crds", "artifacthub.io/crdsExamples", "artifacthub.io/images", "artifacthub.io/license", "artifacthub.io/links"} {
		if !strings.Contains(chart.data, key+":") {
			t.Errorf("the packaged Chart.yaml lacks %s", key)
		}
	}
	out, err := exec.Command(helm, "lint", "--strict", filepath.Join(c.Out, pkg)).CombinedOutput()
	if err != nil {
		t.Errorf("helm lint --strict %s: %v\n%s", pkg, err, out)
	}
}

func validateKrew(t *testing.T, manifest string) (string, error) {
	t.Helper()
	out, err := exec.Command("go", "tool", "validate-krew-manifest", "-manifest", manifest, "-skip-install").CombinedOutput()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatal(err)
	}
	return string(out), err
}

type tarFile struct {
	data string
	mode int64
}

func readTarGz(t *testing.T, path string) map[string]tarFile {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	gz, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(gz)
	files := map[string]tarFile{}
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return files
		}
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		files[h.Name] = tarFile{data: string(b), mode: h.Mode}
	}
}
