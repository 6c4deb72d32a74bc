package testenv

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/almanac-dev/almanac/api/admission/match"
)

// InstallWebhookConfigurations installs config/webhook's configurations as the chart does
// (both named name, failurePolicy Fail, 5s, match.Conditions, no caBundle: the
// manager writes it), but calling the local webhook server https://localhost:port by URL,
// since there is no Service. It returns the number of webhooks.
func InstallWebhookConfigurations(ctx context.Context, c client.Client, root, name string, port int) (int, error) {
	data, err := os.ReadFile(filepath.Join(root, "config", "webhook", "manifests.yaml")) //nolint:gosec // the checkout's own file
	if errors.Is(err, os.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	cc := func(old admissionregistrationv1.WebhookClientConfig) admissionregistrationv1.WebhookClientConfig {
		path := ""
		if old.Service != nil && old.Service.Path != nil {
			path = *old.Service.Path
		}
		return admissionregistrationv1.WebhookClientConfig{URL: ptr.To(fmt.Sprintf("https://localhost:%d%s", port, path))}
	}
	n := 0
	for _, doc := range strings.Split(string(data), "\n---") {
		var meta metav1.TypeMeta
		if err := yaml.Unmarshal([]byte(doc), &meta); err != nil {
			return 0, err
		}
		switch meta.Kind {
		case "MutatingWebhookConfiguration":
			m := &admissionregistrationv1.MutatingWebhookConfiguration{}
			if err := yaml.Unmarshal([]byte(doc), m); err != nil {
				return 0, err
			}
			m.ObjectMeta = metav1.ObjectMeta{Name: name}
			for i := range m.Webhooks {
				w := &m.Webhooks[i]
				w.ClientConfig = cc(w.ClientConfig)
				w.FailurePolicy, w.TimeoutSeconds = ptr.To(admissionregistrationv1.Fail), ptr.To[int32](5)
				w.MatchConditions = append(w.MatchConditions, match.Conditions...)
			}
			n += len(m.Webhooks)
			if err := c.Create(ctx, m); err != nil {
				return 0, err
			}
		case "ValidatingWebhookConfiguration":
			v := &admissionregistrationv1.ValidatingWebhookConfiguration{}
			if err := yaml.Unmarshal([]byte(doc), v); err != nil {
				return 0, err
			}
			v.ObjectMeta = metav1.ObjectMeta{Name: name}
			for i := range v.Webhooks {
				w := &v.Webhooks[i]
				w.ClientConfig = cc(w.ClientConfig)
				w.FailurePolicy, w.TimeoutSeconds = ptr.To(admissionregistrationv1.Fail), ptr.To[int32](5)
				w.MatchConditions = append(w.MatchConditions, match.Conditions...)
			}
			n += len(v.Webhooks)
			if err := c.Create(ctx, v); err != nil {
				return 0, err
			}
		}
	}
	return n, nil
}
