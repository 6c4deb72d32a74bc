package testenv

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strings"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"
)

// RenderChart renders charts/almanac's templates in show (e.g. "templates/flowcontrol.yaml")
// with `helm template release --namespace namespace` and the extra arguments (--set …),
// using the Helm of $HELM, and returns the objects.
func RenderChart(release, namespace string, show []string, extra ...string) ([]*unstructured.Unstructured, error) {
	helm := os.Getenv("HELM")
	if helm == "" {
		return nil, errors.New("HELM is not set: run through make (which installs the pinned Helm and exports HELM), or set HELM to a Helm 4 binary")
	}
	args := []string{"template", release, "charts/almanac", "--namespace", namespace}
	for _, s := range show {
		args = append(args, "--show-only", s)
	}
	cmd := exec.Command(helm, append(args, extra...)...) //nolint:gosec // the pinned Helm of $HELM, as the Makefile exports it
	cmd.Dir = RepoRoot()
	home, err := os.MkdirTemp("", "almanac-helm-")
	if err != nil {
		return nil, err
	}
	defer func() { _ = os.RemoveAll(home) }()
	cmd.Env = append(os.Environ(), "HELM_CACHE_HOME="+home, "HELM_CONFIG_HOME="+home, "HELM_DATA_HOME="+home)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("helm %s: %w\n%s", strings.Join(args, " "), err, stderr.String())
	}
	var objs []*unstructured.Unstructured
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(out)))
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			return objs, nil
		}
		if err != nil {
			return nil, err
		}
		u := &unstructured.Unstructured{}
		if err := yaml.Unmarshal(doc, &u.Object); err != nil {
			return nil, err
		}
		if len(u.Object) > 0 {
			objs = append(objs, u)
		}
	}
}

// ServiceAccountConfig returns a config that authenticates as the ServiceAccount
// namespace/name with a token from the TokenRequest API, as a Pod of it would (user
// system:serviceaccount:namespace:name, groups system:serviceaccounts and
// system:serviceaccounts:namespace), creating the ServiceAccount if it does not exist. The
// ServiceAccount may do only what RBAC grants it.
func ServiceAccountConfig(ctx context.Context, admin *rest.Config, namespace, name string) (*rest.Config, error) {
	cs, err := kubernetes.NewForConfig(admin)
	if err != nil {
		return nil, err
	}
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace}}
	if _, err := cs.CoreV1().ServiceAccounts(namespace).Create(ctx, sa, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return nil, err
	}
	tr, err := cs.CoreV1().ServiceAccounts(namespace).CreateToken(ctx, name, &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](4 * 3600)},
	}, metav1.CreateOptions{})
	if err != nil {
		return nil, fmt.Errorf("failed to request a token of ServiceAccount %s/%s: %w", namespace, name, err)
	}
	cfg := rest.AnonymousClientConfig(admin)
	cfg.BearerToken = tr.Status.Token
	return cfg, nil
}

// Classification is what API Priority and Fairness did with a request: the UIDs of the
// FlowSchema that matched it and of its priority level (the response headers
// X-Kubernetes-PF-FlowSchema-UID and X-Kubernetes-PF-PriorityLevel-UID).
type Classification struct{ FlowSchemaUID, PriorityLevelUID string }

// Classify sends GET /version as cfg's user and returns how the API server classified it.
func Classify(ctx context.Context, cfg *rest.Config) (Classification, error) {
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return Classification{}, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimSuffix(cfg.Host, "/")+"/version", nil)
	if err != nil {
		return Classification{}, err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return Classification{}, err
	}
	defer func() { _ = resp.Body.Close() }()
	_, _ = io.Copy(io.Discard, resp.Body)
	if resp.StatusCode != http.StatusOK {
		return Classification{}, fmt.Errorf("GET /version: %s", resp.Status)
	}
	return Classification{
		FlowSchemaUID:    resp.Header.Get(flowcontrolv1.ResponseHeaderMatchedFlowSchemaUID),
		PriorityLevelUID: resp.Header.Get(flowcontrolv1.ResponseHeaderMatchedPriorityLevelConfigurationUID),
	}, nil
}

// FlowSchemaUIDs returns the UIDs of a FlowSchema and of its priority level.
func FlowSchemaUIDs(ctx context.Context, admin *rest.Config, name string) (Classification, error) {
	cs, err := kubernetes.NewForConfig(admin)
	if err != nil {
		return Classification{}, err
	}
	fs, err := cs.FlowcontrolV1().FlowSchemas().Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return Classification{}, err
	}
	pl, err := cs.FlowcontrolV1().PriorityLevelConfigurations().Get(ctx, fs.Spec.PriorityLevelConfiguration.Name, metav1.GetOptions{})
	if err != nil {
		return Classification{}, err
	}
	return Classification{FlowSchemaUID: string(fs.UID), PriorityLevelUID: string(pl.UID)}, nil
}
