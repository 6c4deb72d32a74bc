// Package release implements `almanac release`: what must happen before almanac goes, so that
// nothing of it outlives it. Every Job almanac creates carries the finalizer
// batch.almanac.dev/outcome until the manager records its run (docs/jobs.md); once the
// manager is gone nothing removes it, and deleting such a Job, its TTL cleanup or the
// deletion of its namespace would wait forever. `almanac release` stops the manager (its
// Deployment scaled to 0, its Pods waited for, so that it starts no Job after the pass), then
// removes the finalizer from every Job that carries it. Every ScheduledPodAutoscaler attached to
// an existing object (spec.targetRef) carries the finalizer autoscaling.almanac.dev/release-target
// until the reconciler lets go of its target; `almanac release` lets go of each as the
// reconciler does (the target left at the baseline, owned by no almanac field manager), then
// removes that finalizer. Last, every workload a Sleep or ClusterSleep holds asleep wakes, at once,
// to what its record says (api/sleeping.Wake, as the reconciler wakes it), and the sleeps lose
// their finalizer almanac.dev/wake. The chart runs it as a pre-delete hook; after `helm uninstall --no-hooks`, or to stop using almanac without Helm, run it by
// hand.
package release

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	autoscalingv1alpha1 "github.com/almanac-dev/almanac/api/autoscaling/v1alpha1"
	batchv1alpha1 "github.com/almanac-dev/almanac/api/batch/v1alpha1"
	"github.com/almanac-dev/almanac/api/index"
	"github.com/almanac-dev/almanac/api/scheme"
	sleepv1alpha1 "github.com/almanac-dev/almanac/api/sleep/v1alpha1"
	"github.com/almanac-dev/almanac/api/sleeping"
)

// Options are the flags of `almanac release`.
type Options struct {
	Kubeconfig string
	Context    string
	// Namespaces are where to release Jobs and ScheduledPodAutoscalers; empty: every
	// namespace.
	Namespaces []string
	// StopManager is the manager's Deployment, "namespace/name": scaled to 0 and waited for
	// before the Jobs are released. Empty: the manager is not touched.
	StopManager string
	// Timeout bounds the whole command.
	Timeout time.Duration
}

// NewCommand returns the `almanac release` command.
func NewCommand() *cobra.Command {
	opts := Options{}
	cmd := &cobra.Command{
		Use:   "release",
		Short: "Remove almanac's finalizers from its Jobs and autoscalers and wake what it put to sleep, before uninstalling almanac",
		Long: `Prepare the cluster for almanac to go: every Job almanac creates keeps the finalizer
batch.almanac.dev/outcome until the manager records its run, and without the manager
nothing removes it, so that deleting the Job, its TTL cleanup or the deletion of its
namespace would wait forever.

With --stop-manager, the manager's Deployment is scaled to 0 first and its Pods are waited
for, so that it starts no Job after the pass. Then the finalizer is removed from every Job
that carries it, in every namespace (or those of --namespace). Last, every
ScheduledPodAutoscaler attached to an existing object (spec.targetRef) lets go of its target
as almanac does when one is deleted: the target (an HPA, a ScaledObject, a workload's scale)
is left at the autoscaler's baseline and owned by no almanac field manager; then the finalizer
autoscaling.almanac.dev/release-target is removed. Then every workload that a Sleep or
ClusterSleep put to sleep wakes at once (no tiers, no pace), to exactly what its record
(annotation almanac.dev/asleep) says, the record is removed, and almanac owns none of its
fields any more; then the finalizer almanac.dev/wake is removed from every Sleep and
ClusterSleep. Nothing else is changed: the Jobs, their Pods, the targets, the workloads and
almanac's objects stay.

The Helm chart runs this as a pre-delete hook. After 'helm uninstall --no-hooks', run it by
hand (it is safe to run more than once).

When something cannot be released (a target its user may not read, say), the command says
which and why and, with --stop-manager, scales the manager's Deployment back to the replicas
it had, so that almanac keeps working until it is run again (Helm stops an uninstall whose
hook fails). Removing a finalizer needs no webhook: almanac's webhooks are not sent an update
that only removes finalizers, so it works while no replica answers them.

Exit status: 0 when every Job, autoscaler and sleeping workload was released, 1 otherwise, 2 on a usage
or kubeconfig error.`,
		Example: `  # What the chart's pre-delete hook runs:
  almanac release --stop-manager almanac-system/almanac

  # After 'helm uninstall --no-hooks':
  almanac release`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return Run(cmd.Context(), opts, cmd.OutOrStdout())
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.Kubeconfig, "kubeconfig", "", "Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config, then the in-cluster service account).")
	f.StringVar(&opts.Context, "context", "", "The kubeconfig context to use.")
	f.StringSliceVarP(&opts.Namespaces, "namespace", "n", nil, "Release the Jobs and ScheduledPodAutoscalers of these namespaces only (repeat or separate with commas; default: every namespace).")
	f.StringVar(&opts.StopManager, "stop-manager", "", "The manager's Deployment, NAMESPACE/NAME: scaled to 0, and its Pods waited for, before the Jobs are released.")
	f.DurationVar(&opts.Timeout, "timeout", 5*time.Minute, "How long the whole command may take.")
	return cmd
}

// Error is returned when the command could not do all of its work; its ExitCode is the
// process's exit status.
type Error struct {
	Code int
	Msg  string
}

func (e *Error) Error() string { return e.Msg }

// ExitCode is 1 (not everything released) or 2 (usage or kubeconfig).
func (e *Error) ExitCode() int { return e.Code }

// pageSize is how many Jobs one list request returns: a cluster may have many.
const pageSize = 500

// Run releases the Jobs as opts say and prints what it did to out.
func Run(ctx context.Context, opts Options, out io.Writer) error {
	if opts.Timeout <= 0 {
		return &Error{Code: 2, Msg: fmt.Sprintf("--timeout: %s is not a positive duration", opts.Timeout)}
	}
	var stop types.NamespacedName
	if opts.StopManager != "" {
		ns, name, ok := strings.Cut(opts.StopManager, "/")
		if !ok || ns == "" || name == "" || strings.Contains(name, "/") {
			return &Error{Code: 2, Msg: fmt.Sprintf("--stop-manager: %q is not NAMESPACE/NAME, e.g. almanac-system/almanac", opts.StopManager)}
		}
		stop = types.NamespacedName{Namespace: ns, Name: name}
	}
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = opts.Kubeconfig
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{CurrentContext: opts.Context}).ClientConfig()
	if err != nil {
		return &Error{Code: 2, Msg: fmt.Sprintf("failed to load the kubeconfig: %v (set --kubeconfig or --context)", err)}
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme.Scheme})
	if err != nil {
		return &Error{Code: 2, Msg: fmt.Sprintf("failed to build a client: %v", err)}
	}
	outer := ctx
	ctx, cancel := context.WithTimeout(ctx, opts.Timeout)
	defer cancel()
	// failed is how the command fails: once it has stopped the manager, it starts it again
	// first, so that a failed uninstall (Helm stops when its hook fails) leaves almanac
	// working, not installed with no replica to reconcile or to answer its webhooks.
	failed := func(msg string) error { return &Error{Code: 1, Msg: msg} }
	if stop.Name != "" {
		replicas, stopped, err := stopManager(ctx, c, stop, out)
		if stopped {
			failed = func(msg string) error {
				return &Error{Code: 1, Msg: msg + restartManager(outer, c, stop, replicas)}
			}
		}
		if err != nil {
			return failed(err.Error())
		}
	}
	namespaces := opts.Namespaces
	if len(namespaces) == 0 {
		namespaces = []string{metav1.NamespaceAll}
	}
	var released []string
	var jobsFailed []string
	for _, ns := range namespaces {
		r, f, err := releaseJobs(ctx, c, ns)
		released, jobsFailed = append(released, r...), append(jobsFailed, f...)
		if err != nil {
			return failed(err.Error())
		}
	}
	fmt.Fprintf(out, "Released %d Jobs (removed the finalizer %s)%s\n", len(released), batchv1alpha1.FinalizerOutcome, listed(released))
	var spaReleased, spaFailed []string
	for _, ns := range namespaces {
		r, f, err := releaseAutoscalers(ctx, c, ns)
		spaReleased, spaFailed = append(spaReleased, r...), append(spaFailed, f...)
		if err != nil {
			return failed(failures(jobsFailed, nil) + err.Error())
		}
	}
	fmt.Fprintf(out, "Released %d ScheduledPodAutoscalers (left their targets at the baseline, owned by no almanac field manager; removed the finalizer %s)%s\n",
		len(spaReleased), autoscalingv1alpha1.ReleaseFinalizer, listed(spaReleased))
	woken, left, wakeFailed, err := wakeSleeping(ctx, c, namespaces)
	if err != nil {
		return failed(failures(jobsFailed, spaFailed) + err.Error())
	}
	fmt.Fprintf(out, "Woke %d workloads that sleeps held (put back what each recorded, owned by no almanac field manager; removed the finalizer %s from the sleeps)%s\n",
		len(woken), sleepv1alpha1.Finalizer, listed(woken))
	if len(left) > 0 {
		fmt.Fprintf(out, "Left %d ScheduledJobs and EventJobs suspended by sleeps, with their record: almanac's webhooks are stopped, and without almanac they start no Job; "+
			"the sleeps that hold them wake them if almanac is installed again (docs/sleep.md)%s\n", len(left), listed(left))
	}
	if len(jobsFailed)+len(spaFailed)+len(wakeFailed) > 0 {
		return failed(failures(jobsFailed, spaFailed) + wakeFailures(wakeFailed) + "run almanac release again")
	}
	return nil
}

func wakeFailures(failed []string) string {
	if len(failed) == 0 {
		return ""
	}
	return fmt.Sprintf("failed to wake %d workloads: %s; ", len(failed), strings.Join(failed, "; "))
}

// wakeSleeping wakes every workload in namespaces (every namespace for "") that carries a
// sleep's record (sleepv1alpha1.RecordAnnotation), whoever holds it, as the reconciler wakes
// one (sleeping.Wake: what the record says, the record removed, almanac's field ownership
// dropped), then removes the finalizer sleepv1alpha1.Finalizer from every Sleep and
// ClusterSleep. The kinds it reads are sleepv1alpha1.DefaultKinds and those that any sleep
// names; a kind the cluster does not serve has nothing asleep. It reads workloads a page of
// metadata at a time: the record is an annotation. It returns the workloads woken and those
// that could not be.
//
// almanac's own ScheduledJobs and EventJobs are left as they sleep, suspended with their
// record: with the manager stopped, almanac's webhooks (which admit every change of them but a
// finalizer's removal) no longer answer, so they cannot be changed; and without almanac they
// start no Job, suspended or not. Kept with almanac's CRDs (the chart's default), they wake
// with the Sleep that holds it, which is kept too, once almanac is installed again; with the
// CRDs, they go.
func wakeSleeping(ctx context.Context, c client.Client, namespaces []string) (woken, left, failed []string, err error) {
	kinds, sleeps, clusterSleeps, err := sleepKinds(ctx, c, namespaces)
	if err != nil {
		return nil, nil, nil, err
	}
	for _, ns := range namespaces {
		for _, gvk := range kinds {
			opts := []client.ListOption{client.Limit(pageSize)}
			if ns != "" {
				opts = append(opts, client.InNamespace(ns))
			}
			for cont := ""; ; {
				list := &metav1.PartialObjectMetadataList{}
				list.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
				if err := c.List(ctx, list, append(opts, client.Continue(cont))...); err != nil {
					if meta.IsNoMatchError(err) {
						break // not served: nothing of it sleeps
					}
					failed = append(failed, fmt.Sprintf("%s: failed to list them (%v): wake them by hand, or give almanac release list and patch on them", gvk.Kind, err))
					break
				}
				for i := range list.Items {
					item := &list.Items[i]
					rec, err := sleepv1alpha1.DecodeRecord(item.Annotations)
					if rec == nil && err == nil {
						continue
					}
					name := gvk.Kind + " " + item.Namespace + "/" + item.Name
					if err != nil {
						failed = append(failed, fmt.Sprintf("%s: %v", name, err))
						continue
					}
					if gvk.Group == batchv1alpha1.GroupVersion.Group {
						left = append(left, name) // almanac's own kinds: see above
						continue
					}
					w := sleeping.FromObject(item, gvk)
					if err := sleeping.Wake(ctx, targets{c}, &w, rec, index.FieldManager); err != nil {
						failed = append(failed, fmt.Sprintf("%s: %v", name, err))
						continue
					}
					woken = append(woken, name)
				}
				if cont = list.Continue; cont == "" {
					break
				}
			}
		}
	}
	if len(failed) > 0 {
		return woken, left, failed, nil // the sleeps keep their finalizers until everything woke
	}
	for _, obj := range append(sleeps, clusterSleeps...) {
		patch, ok := sleepv1alpha1.FinalizerRemoval(obj.GetFinalizers())
		if !ok {
			continue
		}
		if err := c.Patch(ctx, obj, client.RawPatch(types.JSONPatchType, patch)); err != nil && !apierrors.IsNotFound(err) {
			failed = append(failed, fmt.Sprintf("%s: failed to remove the finalizer: %v", client.ObjectKeyFromObject(obj), err))
		}
	}
	return woken, left, failed, nil
}

// sleepKinds returns the kinds to wake (the default kinds, and every other kind a sleep names)
// and the Sleeps of namespaces and the ClusterSleeps. Where almanac's sleep CRDs are not
// served, there is none.
func sleepKinds(ctx context.Context, c client.Client, namespaces []string) (kinds []schema.GroupVersionKind, sleeps, clusterSleeps []client.Object, err error) {
	seen := map[schema.GroupKind]bool{}
	add := func(list []sleepv1alpha1.WorkloadKind) {
		for _, k := range list {
			gvk := k.GroupVersionKind()
			if !seen[gvk.GroupKind()] {
				seen[gvk.GroupKind()] = true
				kinds = append(kinds, gvk)
			}
		}
	}
	add(sleepv1alpha1.DefaultKinds())
	for _, ns := range namespaces {
		list := &sleepv1alpha1.SleepList{}
		if err := c.List(ctx, list, client.InNamespace(ns)); err != nil {
			if meta.IsNoMatchError(err) {
				return kinds, nil, nil, nil
			}
			return nil, nil, nil, fmt.Errorf("failed to list the Sleeps: %w", err)
		}
		for i := range list.Items {
			add(list.Items[i].Spec.Kinds)
			sleeps = append(sleeps, &list.Items[i])
		}
	}
	list := &sleepv1alpha1.ClusterSleepList{}
	if err := c.List(ctx, list); err != nil && !meta.IsNoMatchError(err) {
		return nil, nil, nil, fmt.Errorf("failed to list the ClusterSleeps: %w", err)
	}
	for i := range list.Items {
		add(list.Items[i].Spec.Kinds)
		clusterSleeps = append(clusterSleeps, &list.Items[i])
	}
	return kinds, sleeps, clusterSleeps, nil
}

// restartTimeout bounds the restart of the manager after a failure, which may come after
// --timeout has passed.
const restartTimeout = 30 * time.Second

// restartManager scales the manager's Deployment back to replicas after the command failed,
// and says so, to be appended to the failure's message.
func restartManager(ctx context.Context, c client.Client, key types.NamespacedName, replicas int32) string {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), restartTimeout)
	defer cancel()
	dep := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name}}
	if err := c.Patch(ctx, dep, client.RawPatch(types.MergePatchType, fmt.Appendf(nil, `{"spec":{"replicas":%d}}`, replicas))); err != nil {
		return fmt.Sprintf("; scaling the manager's Deployment %s back to %d replicas failed too (%v): almanac is stopped: "+
			"run kubectl scale deployment -n %s %s --replicas=%d, or finish with almanac release", key, replicas, err, key.Namespace, key.Name, replicas)
	}
	return fmt.Sprintf("; the manager's Deployment %s is scaled back to %d replicas, so that almanac keeps working until then", key, replicas)
}

// failures describes the Jobs and autoscalers that could not be released, ending in "; ".
func failures(jobs, autoscalers []string) string {
	var b strings.Builder
	if len(jobs) > 0 {
		fmt.Fprintf(&b, "failed to release %d Jobs: %s; ", len(jobs), strings.Join(jobs, "; "))
	}
	if len(autoscalers) > 0 {
		fmt.Fprintf(&b, "failed to release %d ScheduledPodAutoscalers: %s; ", len(autoscalers), strings.Join(autoscalers, "; "))
	}
	return b.String()
}

// stopManager scales the Deployment to 0 and waits until none of its Pods is left. It
// returns the replicas the Deployment had, and whether it scaled it.
func stopManager(ctx context.Context, c client.Client, key types.NamespacedName, out io.Writer) (replicas int32, stopped bool, err error) {
	dep := &appsv1.Deployment{}
	switch err := c.Get(ctx, key, dep); {
	case apierrors.IsNotFound(err):
		fmt.Fprintf(out, "The manager's Deployment %s is gone already\n", key)
		return 0, false, nil
	case err != nil:
		return 0, false, fmt.Errorf("failed to get the manager's Deployment %s: %w", key, err)
	}
	replicas = ptr.Deref(dep.Spec.Replicas, 1)
	if err := c.Patch(ctx, dep, client.RawPatch(types.MergePatchType, []byte(`{"spec":{"replicas":0}}`))); err != nil {
		return 0, false, fmt.Errorf("failed to scale the manager's Deployment %s to 0: %w", key, err)
	}
	return replicas, true, waitStopped(ctx, c, key, dep, out)
}

// waitStopped waits until none of the Pods of dep is left.
func waitStopped(ctx context.Context, c client.Client, key types.NamespacedName, dep *appsv1.Deployment, out io.Writer) error {
	selector, err := metav1.LabelSelectorAsSelector(dep.Spec.Selector)
	if err != nil {
		return fmt.Errorf("the manager's Deployment %s has a selector that cannot be read: %w", key, err)
	}
	for {
		pods := &corev1.PodList{}
		if err := c.List(ctx, pods, client.InNamespace(key.Namespace), client.MatchingLabelsSelector{Selector: selector}); err != nil {
			return fmt.Errorf("failed to list the manager's Pods in %s: %w", key.Namespace, err)
		}
		// Only the Deployment's own Pods (those of its ReplicaSets): a hook's Pod, such as
		// this command's, may carry the release's labels too.
		pods.Items = slices.DeleteFunc(pods.Items, func(p corev1.Pod) bool {
			ref := metav1.GetControllerOfNoCopy(&p)
			return ref == nil || ref.Kind != "ReplicaSet"
		})
		if len(pods.Items) == 0 {
			fmt.Fprintf(out, "Stopped the manager: Deployment %s scaled to 0, its Pods gone\n", key)
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("the manager's Pods in %s were still there when --timeout passed (%d left, e.g. %s): "+
				"the manager could still create Jobs; run almanac release again once they are gone", key.Namespace, len(pods.Items), pods.Items[0].Name)
		case <-time.After(time.Second):
		}
	}
}

// releaseJobs removes the finalizer from every Job in namespace (every namespace for "") that
// carries it, a page at a time. It returns the Jobs released and those that could not be.
func releaseJobs(ctx context.Context, c client.Client, namespace string) (released, failed []string, err error) {
	opts := []client.ListOption{client.Limit(pageSize)}
	if namespace != "" {
		opts = append(opts, client.InNamespace(namespace))
	}
	for cont := ""; ; {
		list := &batchv1.JobList{}
		if err := c.List(ctx, list, append(opts, client.Continue(cont))...); err != nil {
			where := "every namespace"
			if namespace != "" {
				where = "namespace " + namespace
			}
			return released, failed, fmt.Errorf("failed to list the Jobs of %s: %w", where, err)
		}
		for i := range list.Items {
			j := &list.Items[i]
			patch, ok := batchv1alpha1.FinalizerRemoval(j.Finalizers)
			if !ok {
				continue
			}
			name := j.Namespace + "/" + j.Name
			if err := c.Patch(ctx, j, client.RawPatch(types.JSONPatchType, patch)); err != nil && !apierrors.IsNotFound(err) {
				failed = append(failed, fmt.Sprintf("%s: %v", name, err))
				continue
			}
			released = append(released, name)
		}
		if cont = list.Continue; cont == "" {
			return released, failed, nil
		}
	}
}

// releaseAutoscalers lets go of the targets of every ScheduledPodAutoscaler in namespace
// (every namespace for "") that carries autoscalingv1alpha1.ReleaseFinalizer and removes the
// finalizer, a page at a time. It returns the autoscalers released and those that could not
// be. Where almanac's CRDs are not served, there is none.
func releaseAutoscalers(ctx context.Context, c client.Client, namespace string) (released, failed []string, err error) {
	opts := []client.ListOption{client.Limit(pageSize)}
	if namespace != "" {
		opts = append(opts, client.InNamespace(namespace))
	}
	for cont := ""; ; {
		list := &autoscalingv1alpha1.ScheduledPodAutoscalerList{}
		if err := c.List(ctx, list, append(opts, client.Continue(cont))...); err != nil {
			if meta.IsNoMatchError(err) {
				return released, failed, nil
			}
			where := "every namespace"
			if namespace != "" {
				where = "namespace " + namespace
			}
			return released, failed, fmt.Errorf("failed to list the ScheduledPodAutoscalers of %s: %w", where, err)
		}
		for i := range list.Items {
			spa := &list.Items[i]
			patch, ok := autoscalingv1alpha1.ReleaseFinalizerRemoval(spa.Finalizers)
			if !ok {
				continue
			}
			name := spa.Namespace + "/" + spa.Name
			if err := letGoAll(ctx, c, spa); err != nil {
				failed = append(failed, fmt.Sprintf("%s: %v", name, err))
				continue
			}
			if err := c.Patch(ctx, spa, client.RawPatch(types.JSONPatchType, patch)); err != nil && !apierrors.IsNotFound(err) {
				failed = append(failed, fmt.Sprintf("%s: failed to remove the finalizer: %v", name, err))
				continue
			}
			released = append(released, name)
		}
		if cont = list.Continue; cont == "" {
			return released, failed, nil
		}
	}
}

// letGoAll lets go of every target that spa may hold (status.target and spec.targetRef), as
// the reconciler does when it is deleted: autoscalingv1alpha1.LetGo, the one implementation.
func letGoAll(ctx context.Context, c client.Client, spa *autoscalingv1alpha1.ScheduledPodAutoscaler) error {
	for _, ref := range spa.TargetsHeld() {
		if err := autoscalingv1alpha1.LetGo(ctx, targets{c}, spa.Namespace, ref, spa.Spec, index.FieldManager); err != nil {
			return err
		}
	}
	return nil
}

// targets adapts the command's client to autoscalingv1alpha1.TargetClient.
type targets struct{ c client.Client }

func (t targets) Get(ctx context.Context, obj *unstructured.Unstructured) error {
	return t.c.Get(ctx, client.ObjectKeyFromObject(obj), obj)
}

func (t targets) GetSubResource(ctx context.Context, obj *unstructured.Unstructured, subresource string, into *unstructured.Unstructured) error {
	return t.c.SubResource(subresource).Get(ctx, obj, into)
}

func (t targets) Patch(ctx context.Context, obj *unstructured.Unstructured, subresource string, pt types.PatchType, data []byte, opts metav1.PatchOptions) error {
	po := client.PatchOptions{FieldManager: opts.FieldManager, Force: opts.Force}
	if subresource == "" {
		return t.c.Patch(ctx, obj, client.RawPatch(pt, data), &po)
	}
	return t.c.SubResource(subresource).Patch(ctx, obj, client.RawPatch(pt, data), &client.SubResourcePatchOptions{PatchOptions: po})
}

// maxListed is how many names a summary line names.
const maxListed = 20

func listed(names []string) string {
	if len(names) == 0 {
		return ""
	}
	slices.Sort(names)
	shown := names[:min(len(names), maxListed)]
	more := ""
	if len(names) > maxListed {
		more = fmt.Sprintf(" and %d more", len(names)-maxListed)
	}
	return ": " + strings.Join(shown, ", ") + more
}
