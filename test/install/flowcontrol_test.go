package install

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/almanac-dev/almanac/test/testenv"
)

// TestPriorityAndFairnessClassifiesTheManager renders the chart's FlowSchema and
// PriorityLevelConfiguration with helm template, creates them in a real API server, and checks
// that the API server classifies a request of the manager's ServiceAccount (authenticated by a
// token, as the manager's Pod is) into them, and a request of another ServiceAccount of the
// same namespace into the suggested "service-accounts" FlowSchema, as before.
func TestPriorityAndFairnessClassifiesTheManager(t *testing.T) {
	cfg, c, _ := chartEnv(t)
	ctx := context.Background()
	const rel, namespace = "apf", "apf-test"
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	objs, err := testenv.RenderChart(rel, namespace, []string{"templates/flowcontrol.yaml", "templates/serviceaccount.yaml"})
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]string{}
	for _, o := range objs {
		kinds[o.GetKind()] = o.GetName()
		if err := c.Create(ctx, o); err != nil {
			t.Fatalf("creating %s %s: %v", o.GetKind(), o.GetName(), err)
		}
	}
	flowSchema := kinds["FlowSchema"]
	if flowSchema == "" || kinds["PriorityLevelConfiguration"] == "" || kinds["ServiceAccount"] == "" {
		t.Fatalf("the chart rendered %v, want a FlowSchema, a PriorityLevelConfiguration and the ServiceAccount", kinds)
	}
	want, err := testenv.FlowSchemaUIDs(ctx, cfg, flowSchema)
	if err != nil {
		t.Fatal(err)
	}
	suggested, err := testenv.FlowSchemaUIDs(ctx, cfg, "service-accounts")
	if err != nil {
		t.Fatal(err)
	}
	manager, err := testenv.ServiceAccountConfig(ctx, cfg, namespace, kinds["ServiceAccount"])
	if err != nil {
		t.Fatal(err)
	}
	other, err := testenv.ServiceAccountConfig(ctx, cfg, namespace, "someone-else")
	if err != nil {
		t.Fatal(err)
	}
	// The API server's flow-control configuration follows new objects within seconds.
	eventually(t, 30*time.Second, "the manager's requests classified by the chart's FlowSchema", func() error {
		got, err := testenv.Classify(ctx, manager)
		if err != nil {
			return err
		}
		if got != want {
			return fmt.Errorf("a request of ServiceAccount %s/%s was classified as %+v, want FlowSchema %s %+v",
				namespace, kinds["ServiceAccount"], got, flowSchema, want)
		}
		return nil
	})
	got, err := testenv.Classify(ctx, other)
	if err != nil {
		t.Fatal(err)
	}
	if got != suggested {
		t.Errorf("a request of another ServiceAccount was classified as %+v, want the suggested service-accounts FlowSchema %+v", got, suggested)
	}
}
