// Command release packages an almanac release into one folder (`make release`, see
// docs/release.md):
//
//   - almanac_<version>_<os>_<arch>.tar.gz: the CLI for each platform (static, -trimpath,
//     the version and revision stamped), with LICENSE and README.md;
//   - almanac.yaml: the krew plugin manifest (kubectl almanac) pointing at those archives in
//     the GitHub release v<version>, with their sha256;
//   - almanac-<chart version>.tgz: the Helm chart (`helm package`);
//   - almanac_<version>_image.oci.tar and almanac_<version>_image*.spdx.json: the container
//     image that `make image` built, as an OCI archive, and ko's SPDX SBOMs of it;
//   - checksums.txt: the sha256 of every other file, for `sha256sum -c`.
//
// It lives in its own Go module because krew's module requires client-go v11, which the
// controller's module must not see.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"sigs.k8s.io/yaml"
)

func main() {
	var (
		c         Config
		revision  string
		platforms string
		epoch     int64
	)
	flag.StringVar(&c.Root, "root", "../..", "The almanac checkout.")
	flag.StringVar(&c.Out, "out", "../../dist/release", "The release folder (emptied first).")
	flag.StringVar(&c.Version, "version", "", "The version, without a v; it must be charts/almanac/Chart.yaml's appVersion (default: that appVersion).")
	flag.StringVar(&revision, "revision", "", "The source revision (a git commit) stamped into the CLI (required).")
	flag.StringVar(&platforms, "platforms", "linux/amd64,linux/arm64,darwin/amd64,darwin/arm64", "The CLI's platforms, os/arch, comma-separated.")
	flag.StringVar(&c.Helm, "helm", os.Getenv("HELM"), "The Helm CLI that packages the chart (required).")
	flag.StringVar(&c.ImageArchive, "image-archive", "", "The OCI archive of the image (make image) to publish (required).")
	flag.StringVar(&c.SBOMDir, "sbom-dir", "", "The folder with ko's SPDX SBOMs of that image (required with --image-archive).")
	flag.StringVar(&c.RepoURL, "repo-url", "https://github.com/almanac-dev/almanac", "The GitHub repository whose releases host the archives (the krew manifest's download URLs).")
	flag.Int64Var(&epoch, "created", 0, "Every file time in the archives, in Unix seconds (the commit's time keeps them reproducible).")
	flag.Parse()
	c.Epoch = time.Unix(epoch, 0)
	if err := run(context.Background(), c, revision, platforms); err != nil {
		fmt.Fprintln(os.Stderr, "release:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, c Config, revision, platforms string) error {
	appVersion, err := chartAppVersion(c.Root)
	if err != nil {
		return err
	}
	switch {
	case c.Version == "":
		c.Version = appVersion
	case c.Version != appVersion:
		return fmt.Errorf("--version %s is not charts/almanac/Chart.yaml's appVersion %s: the chart would deploy another image; set appVersion and run `make chart`", c.Version, appVersion)
	}
	if revision == "" {
		return errors.New("--revision is required (a git commit)")
	}
	if c.Helm == "" {
		return errors.New("--helm (or HELM) is required: the release carries the packaged chart")
	}
	if c.ImageArchive == "" || c.SBOMDir == "" {
		return errors.New("--image-archive and --sbom-dir are required: the release carries the image and its SBOM (make image)")
	}
	if c.Platforms, err = ParsePlatforms(platforms); err != nil {
		return err
	}
	if c.Root, err = filepath.Abs(c.Root); err != nil {
		return err
	}
	c.Build = GoBuild(c.Root, c.Version, revision)
	names, err := Release(ctx, c)
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, ">> wrote %s (CLI for %s):\n   %s\n", c.Out, strings.Join(sortedPlatforms(c.Platforms), ", "), strings.Join(names, "\n   "))
	return nil
}

// chartAppVersion reads appVersion from the chart: a release's version.
func chartAppVersion(root string) (string, error) {
	path := filepath.Join(root, "charts", "almanac", "Chart.yaml")
	data, err := os.ReadFile(path) //nolint:gosec // the chart in the checkout
	if err != nil {
		return "", err
	}
	var chart struct {
		AppVersion string `json:"appVersion"`
	}
	if err := yaml.Unmarshal(data, &chart); err != nil {
		return "", fmt.Errorf("%s: %w", path, err)
	}
	if chart.AppVersion == "" {
		return "", fmt.Errorf("%s has no appVersion", path)
	}
	return chart.AppVersion, nil
}
