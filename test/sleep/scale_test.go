package sleep_test

import (
	"fmt"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"

	sleepv1alpha1 "github.com/almanac-dev/almanac/api/sleep/v1alpha1"
)

// widgets installs a CustomResourceDefinition, widgets.example.almanac.dev, with a scale
// subresource (as an Argo Rollout has), once.
func widgets(t *testing.T) {
	t.Helper()
	crd := &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "widgets.example.almanac.dev"},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: "example.almanac.dev", Scope: apiextensionsv1.NamespaceScoped,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "widgets", Singular: "widget", Kind: "Widget", ListKind: "WidgetList"},
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
				Name: "v1", Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
					Type: "object", XPreserveUnknownFields: ptr.To(true)}},
				Subresources: &apiextensionsv1.CustomResourceSubresources{
					Status: &apiextensionsv1.CustomResourceSubresourceStatus{},
					Scale:  &apiextensionsv1.CustomResourceSubresourceScale{SpecReplicasPath: ".spec.replicas", StatusReplicasPath: ".status.replicas"},
				},
			}},
		},
	}
	if err := env.Client.Create(bg, crd); err != nil && !isAlreadyExists(err) {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, func() error {
		list := &unstructured.UnstructuredList{}
		list.SetAPIVersion("example.almanac.dev/v1")
		list.SetKind("WidgetList")
		return env.Client.List(bg, list)
	})
}

// TestAnyKindWithAScaleSubresource: a kind named in spec.kinds that has a scale subresource
// sleeps through it (the record first, then 0 replicas) and wakes to exactly its replicas.
func TestAnyKindWithAScaleSubresource(t *testing.T) {
	t.Parallel()
	widgets(t)
	ns := newNamespace(t, nil)
	w := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "example.almanac.dev/v1", "kind": "Widget",
		"metadata": map[string]any{"namespace": ns, "name": "gadget"},
		"spec":     map[string]any{"replicas": int64(4)},
	}}
	create(t, w)
	nights := newSleep(ns, "nights", sleepv1alpha1.SleepSpec{Asleep: []sleepv1alpha1.Window{window(monday, monday.Add(time.Hour))},
		Kinds: []sleepv1alpha1.WorkloadKind{{APIVersion: "example.almanac.dev/v1", Kind: "Widget"}},
		Wake:  sleepv1alpha1.Wake{Lead: sleepv1alpha1.Lead{Mode: sleepv1alpha1.LeadOff}}})
	create(t, nights)
	clk := newOffsetClock(monday.Add(time.Minute))
	startSleeper(t, clk, sleeperOpts{}, ns)
	eventually(t, 10*time.Second, func() error {
		if r := replicas(t, "example.almanac.dev/v1/Widget", ns, "gadget"); r != 0 {
			return fmt.Errorf("gadget has %d replicas", r)
		}
		if rec := record(t, get(t, "example.almanac.dev/v1/Widget", ns, "gadget")); rec == nil || *rec.Replicas != 4 {
			return fmt.Errorf("gadget's record %+v", rec)
		}
		return nil
	})
	clk.set(monday.Add(time.Hour + time.Second))
	poke(t, nights)
	eventually(t, 10*time.Second, func() error {
		u := get(t, "example.almanac.dev/v1/Widget", ns, "gadget")
		if r := replicas(t, "example.almanac.dev/v1/Widget", ns, "gadget"); r != 4 || record(t, u) != nil {
			return fmt.Errorf("gadget has %d replicas, record %+v", r, record(t, u))
		}
		if e := almanacEntries(u); len(e) > 0 {
			return fmt.Errorf("almanac still owns fields of gadget: %v", e)
		}
		return nil
	})
}
