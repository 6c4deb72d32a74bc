package webhooks

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	admissionv1 "k8s.io/api/admission/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	apiadmission "github.com/almanac-dev/almanac/api/admission"
	autoscalingv1alpha1 "github.com/almanac-dev/almanac/api/autoscaling/v1alpha1"
	batchv1alpha1 "github.com/almanac-dev/almanac/api/batch/v1alpha1"
	calendarv1alpha1 "github.com/almanac-dev/almanac/api/calendar/v1alpha1"
)

// The webhooks only see almanac's own groups (autoscaling.almanac.dev, batch.almanac.dev and
// the calendars' almanac.dev), on create and update, so that an unreachable
// webhook never blocks anything else in the cluster. Objects being deleted are admitted
// without checks (a finalizer can always be removed).
//
// +kubebuilder:webhook:path=/mutate-autoscaling-almanac-dev-v1alpha1-scheduledpodautoscaler,mutating=true,failurePolicy=fail,sideEffects=None,groups=autoscaling.almanac.dev,resources=scheduledpodautoscalers,verbs=create;update,versions=v1alpha1,name=mscheduledpodautoscaler.autoscaling.almanac.dev,admissionReviewVersions=v1,matchPolicy=Equivalent
// +kubebuilder:webhook:path=/validate-autoscaling-almanac-dev-v1alpha1-scheduledpodautoscaler,mutating=false,failurePolicy=fail,sideEffects=None,groups=autoscaling.almanac.dev,resources=scheduledpodautoscalers,verbs=create;update,versions=v1alpha1,name=vscheduledpodautoscaler.autoscaling.almanac.dev,admissionReviewVersions=v1,matchPolicy=Equivalent
// +kubebuilder:webhook:path=/mutate-autoscaling-almanac-dev-v1alpha1-schedule,mutating=true,failurePolicy=fail,sideEffects=None,groups=autoscaling.almanac.dev,resources=schedules,verbs=create;update,versions=v1alpha1,name=mschedule.autoscaling.almanac.dev,admissionReviewVersions=v1,matchPolicy=Equivalent
// +kubebuilder:webhook:path=/validate-autoscaling-almanac-dev-v1alpha1-schedule,mutating=false,failurePolicy=fail,sideEffects=None,groups=autoscaling.almanac.dev,resources=schedules,verbs=create;update,versions=v1alpha1,name=vschedule.autoscaling.almanac.dev,admissionReviewVersions=v1,matchPolicy=Equivalent
// +kubebuilder:webhook:path=/mutate-batch-almanac-dev-v1alpha1-scheduledjob,mutating=true,failurePolicy=fail,sideEffects=None,groups=batch.almanac.dev,resources=scheduledjobs,verbs=create;update,versions=v1alpha1,name=mscheduledjob.batch.almanac.dev,admissionReviewVersions=v1,matchPolicy=Equivalent
// +kubebuilder:webhook:path=/validate-batch-almanac-dev-v1alpha1-scheduledjob,mutating=false,failurePolicy=fail,sideEffects=None,groups=batch.almanac.dev,resources=scheduledjobs,verbs=create;update,versions=v1alpha1,name=vscheduledjob.batch.almanac.dev,admissionReviewVersions=v1,matchPolicy=Equivalent
// +kubebuilder:webhook:path=/mutate-batch-almanac-dev-v1alpha1-eventjob,mutating=true,failurePolicy=fail,sideEffects=None,groups=batch.almanac.dev,resources=eventjobs,verbs=create;update,versions=v1alpha1,name=meventjob.batch.almanac.dev,admissionReviewVersions=v1,matchPolicy=Equivalent
// +kubebuilder:webhook:path=/validate-batch-almanac-dev-v1alpha1-eventjob,mutating=false,failurePolicy=fail,sideEffects=None,groups=batch.almanac.dev,resources=eventjobs,verbs=create;update,versions=v1alpha1,name=veventjob.batch.almanac.dev,admissionReviewVersions=v1,matchPolicy=Equivalent
// +kubebuilder:webhook:path=/mutate-almanac-dev-v1alpha1-calendar,mutating=true,failurePolicy=fail,sideEffects=None,groups=almanac.dev,resources=calendars,verbs=create;update,versions=v1alpha1,name=mcalendar.almanac.dev,admissionReviewVersions=v1,matchPolicy=Equivalent
// +kubebuilder:webhook:path=/validate-almanac-dev-v1alpha1-calendar,mutating=false,failurePolicy=fail,sideEffects=None,groups=almanac.dev,resources=calendars,verbs=create;update,versions=v1alpha1,name=vcalendar.almanac.dev,admissionReviewVersions=v1,matchPolicy=Equivalent
// +kubebuilder:webhook:path=/mutate-almanac-dev-v1alpha1-clustercalendar,mutating=true,failurePolicy=fail,sideEffects=None,groups=almanac.dev,resources=clustercalendars,verbs=create;update,versions=v1alpha1,name=mclustercalendar.almanac.dev,admissionReviewVersions=v1,matchPolicy=Equivalent
// +kubebuilder:webhook:path=/mutate-almanac-dev-v1alpha1-sleep,mutating=true,failurePolicy=fail,sideEffects=None,groups=almanac.dev,resources=sleeps,verbs=create;update,versions=v1alpha1,name=msleep.almanac.dev,admissionReviewVersions=v1,matchPolicy=Equivalent
// +kubebuilder:webhook:path=/validate-almanac-dev-v1alpha1-sleep,mutating=false,failurePolicy=fail,sideEffects=None,groups=almanac.dev,resources=sleeps,verbs=create;update,versions=v1alpha1,name=vsleep.almanac.dev,admissionReviewVersions=v1,matchPolicy=Equivalent
// +kubebuilder:webhook:path=/mutate-almanac-dev-v1alpha1-clustersleep,mutating=true,failurePolicy=fail,sideEffects=None,groups=almanac.dev,resources=clustersleeps,verbs=create;update,versions=v1alpha1,name=mclustersleep.almanac.dev,admissionReviewVersions=v1,matchPolicy=Equivalent
// +kubebuilder:webhook:path=/validate-almanac-dev-v1alpha1-clustersleep,mutating=false,failurePolicy=fail,sideEffects=None,groups=almanac.dev,resources=clustersleeps,verbs=create;update,versions=v1alpha1,name=vclustersleep.almanac.dev,admissionReviewVersions=v1,matchPolicy=Equivalent
// +kubebuilder:webhook:path=/validate-almanac-dev-v1alpha1-clustercalendar,mutating=false,failurePolicy=fail,sideEffects=None,groups=almanac.dev,resources=clustercalendars,verbs=create;update,versions=v1alpha1,name=vclustercalendar.almanac.dev,admissionReviewVersions=v1,matchPolicy=Equivalent

// The validating webhooks read almanac's kinds (the calendars that Schedules and ScheduledJobs
// name among them) and the CronJobs' metadata from the manager's
// cache, and get a trigger Job's metadata from the API server, and an attached autoscaler's
// HorizontalPodAutoscaler or ScaledObject target's, and list the HorizontalPodAutoscalers of
// a namespace where an autoscaler attaches to a workload.
//
// +kubebuilder:rbac:groups=autoscaling.almanac.dev,resources=scheduledpodautoscalers;schedules,verbs=get;list;watch
// +kubebuilder:rbac:groups=batch.almanac.dev,resources=scheduledjobs;eventjobs,verbs=get;list;watch
// +kubebuilder:rbac:groups=almanac.dev,resources=calendars;clustercalendars,verbs=get;list;watch
// +kubebuilder:rbac:groups=batch,resources=cronjobs,verbs=get;list;watch
// +kubebuilder:rbac:groups=batch,resources=jobs,verbs=get
// +kubebuilder:rbac:groups=autoscaling,resources=horizontalpodautoscalers,verbs=get;list
// +kubebuilder:rbac:groups=keda.sh,resources=scaledobjects,verbs=get
//
// A Sleep's selector that selects nothing is a warning: the webhooks list, with a limit of one
// and the selector, the workloads of its kinds (apps, batch, batch.almanac.dev and keda.sh:
// the reconcilers' list rights).

// SetupWithManager registers the mutating and validating webhooks of almanac's kinds with the
// manager's webhook server. The validating webhooks read other objects through the manager's
// cache, which must have the indexes autoscalingv1alpha1.ScheduleTargetField,
// autoscalingv1alpha1.TargetField and batchv1alpha1.EventJobTriggerField (api/index), take
// the current time from clk, and, unless WithPermissionCheck(false) is given, check the
// requester's permissions (permissions.go).
//
// Every replica serves the webhooks, so every replica caches what they read: almanac's
// kinds and the CronJobs' metadata, no more. Jobs, which a cluster may hold by the
// thousand, are cached only where the reconcilers run (the leader, main.go); the one
// question the webhooks ask about a Job (does an EventJob's trigger exist?) is a GET of its
// metadata.
func SetupWithManager(mgr ctrl.Manager, clk clock.PassiveClock, opts ...Option) error {
	o := newSetupOptions(opts)
	ctx := context.Background()
	// Start the informers the webhooks read together with the cache, so that the first
	// request does not wait for a list.
	for _, obj := range []client.Object{
		&autoscalingv1alpha1.ScheduledPodAutoscaler{}, &autoscalingv1alpha1.Schedule{},
		&batchv1alpha1.ScheduledJob{}, &batchv1alpha1.EventJob{},
		&calendarv1alpha1.Calendar{}, &calendarv1alpha1.ClusterCalendar{},
		metadataOf(batchv1.SchemeGroupVersion.WithKind("CronJob")),
	} {
		if _, err := mgr.GetCache().GetInformer(ctx, obj); err != nil {
			return fmt.Errorf("failed to set up the webhooks' informer for %T: %w", obj, err)
		}
	}
	lookup := &CacheLookup{Reader: mgr.GetClient(), APIReader: mgr.GetAPIReader()}
	permissions := newPermissionCheck(o, mgr.GetClient())
	served := newServedNamespaces(o.namespaces)
	server := mgr.GetWebhookServer()
	for _, gvk := range apiadmission.Kinds() {
		r := apiadmission.RulesFor(gvk)
		server.Register(mutatePath(gvk), &webhook.Admission{Handler: &mutator{rules: r, served: served}, LogConstructor: requestLogger})
		server.Register(validatePath(gvk), &webhook.Admission{
			Handler:        &validator{rules: r, clock: clk, objects: lookup, permissions: permissions, served: served},
			LogConstructor: requestLogger,
		})
	}
	return nil
}

// mutator is the mutating webhook of one kind.
type mutator struct {
	rules apiadmission.Rules
	// served refuses objects in namespaces the manager does not serve; nil serves all.
	served *servedNamespaces
}

func (m *mutator) Handle(_ context.Context, req admission.Request) admission.Response {
	if req.Operation != admissionv1.Create && req.Operation != admissionv1.Update {
		return admission.Allowed("")
	}
	// Refused before it is changed; the validating webhook refuses it too (it is the one
	// that decides, should the mutating webhook be missing).
	if refused := m.served.refuse(req); refused != nil {
		return *refused
	}
	ops, warnings, skip, err := m.rules.Patch(req.Object.Raw)
	if err != nil {
		return admission.Errored(http.StatusBadRequest, err)
	}
	if skip {
		return admission.Allowed("")
	}
	return admission.Patched("", ops...).WithWarnings(warnings...)
}

// validator is the validating webhook of one kind.
type validator struct {
	rules   apiadmission.Rules
	clock   clock.PassiveClock
	objects apiadmission.Lookup
	// permissions refuses a valid object whose writer may not do what almanac will do for
	// them; nil checks nothing.
	permissions *permissionCheck
	// served refuses objects in namespaces the manager does not serve; nil serves all.
	served *servedNamespaces
}

func (v *validator) Handle(ctx context.Context, req admission.Request) admission.Response {
	var oldRaw []byte
	switch req.Operation {
	case admissionv1.Create:
	case admissionv1.Update:
		oldRaw = req.OldObject.Raw
	default:
		return admission.Allowed("")
	}
	if refused := v.served.refuse(req); refused != nil {
		return *refused
	}
	errs, warnings, err := v.rules.Validate(ctx, req.Object.Raw, oldRaw, apiadmission.Env{Now: v.clock.Now(), Objects: v.objects})
	if err != nil {
		return admission.Errored(http.StatusInternalServerError, err)
	}
	if len(errs) > 0 {
		status := apierrors.NewInvalid(v.rules.GroupVersionKind().GroupKind(), req.Name, errs).ErrStatus
		return admission.Response{AdmissionResponse: admissionv1.AdmissionResponse{Allowed: false, Result: &status}}.WithWarnings(warnings...)
	}
	if denied := v.permissions.check(ctx, req, v.rules); denied != nil {
		return admission.Response{AdmissionResponse: admissionv1.AdmissionResponse{Allowed: false, Result: denied}}.WithWarnings(warnings...)
	}
	return admission.Allowed("").WithWarnings(warnings...)
}

// mutatePath and validatePath are the webhook server paths of a kind, as kubebuilder names
// them: /mutate-<group with dashes>-<version>-<lower-case kind>.
func mutatePath(gvk schema.GroupVersionKind) string { return "/mutate-" + pathSuffix(gvk) }

func validatePath(gvk schema.GroupVersionKind) string { return "/validate-" + pathSuffix(gvk) }

func pathSuffix(gvk schema.GroupVersionKind) string {
	return strings.ReplaceAll(gvk.Group, ".", "-") + "-" + gvk.Version + "-" + strings.ToLower(gvk.Kind)
}

// CacheLookup is the Lookup of the webhooks: it reads a controller-runtime client, normally
// the manager's cached client (whose cache must have the indexes
// autoscalingv1alpha1.ScheduleTargetField, autoscalingv1alpha1.TargetField and
// batchv1alpha1.EventJobTriggerField), and Jobs, attached autoscalers' HorizontalPodAutoscaler
// and ScaledObject targets and the HorizontalPodAutoscalers of a namespace through APIReader.
type CacheLookup struct {
	Reader client.Reader
	// APIReader reads around the cache: a trigger Job's metadata. Jobs are cached only on
	// the leader (where the reconcilers run), and the webhooks run on every replica.
	APIReader client.Reader
}

var _ apiadmission.Lookup = (*CacheLookup)(nil)

func (l *CacheLookup) ScheduledPodAutoscaler(ctx context.Context, namespace, name string) (*autoscalingv1alpha1.ScheduledPodAutoscaler, error) {
	spa := &autoscalingv1alpha1.ScheduledPodAutoscaler{}
	if found, err := l.get(ctx, namespace, name, spa); !found {
		return nil, err
	}
	return spa, nil
}

func (l *CacheLookup) Schedules(ctx context.Context, namespace, autoscaler string) ([]autoscalingv1alpha1.Schedule, error) {
	list := &autoscalingv1alpha1.ScheduleList{}
	// Without a deep copy of each: the validating webhook lists the 100 siblings of a Schedule
	// on every create and only reads them.
	if err := l.Reader.List(ctx, list, client.InNamespace(namespace), client.MatchingFields{autoscalingv1alpha1.ScheduleTargetField: autoscaler},
		client.UnsafeDisableDeepCopy); err != nil {
		return nil, fmt.Errorf("failed to list the Schedules of ScheduledPodAutoscaler %s/%s: %w", namespace, autoscaler, err)
	}
	return list.Items, nil
}

func (l *CacheLookup) EventJob(ctx context.Context, namespace, name string) (*batchv1alpha1.EventJob, error) {
	ej := &batchv1alpha1.EventJob{}
	if found, err := l.get(ctx, namespace, name, ej); !found {
		return nil, err
	}
	return ej, nil
}

func (l *CacheLookup) EventJobFollowers(ctx context.Context, namespace, name string) ([]*batchv1alpha1.EventJob, error) {
	list := &batchv1alpha1.EventJobList{}
	key := batchv1alpha1.ControllerKey(batchv1alpha1.GroupVersion.Group, string(batchv1alpha1.TriggerKindEventJob), name)
	// Read only: up to MaxFollowerReads lists per admission, no deep copies.
	if err := l.Reader.List(ctx, list, client.InNamespace(namespace), client.MatchingFields{batchv1alpha1.EventJobTriggerField: key},
		client.UnsafeDisableDeepCopy); err != nil {
		return nil, fmt.Errorf("failed to list the EventJobs that trigger on EventJob %s/%s: %w", namespace, name, err)
	}
	out := make([]*batchv1alpha1.EventJob, len(list.Items))
	for i := range list.Items {
		out[i] = &list.Items[i]
	}
	return out, nil
}

func (l *CacheLookup) Exists(ctx context.Context, gvk schema.GroupVersionKind, namespace, name string) (bool, error) {
	var obj client.Object
	switch gvk {
	case batchv1alpha1.GroupVersion.WithKind("ScheduledJob"):
		obj = &batchv1alpha1.ScheduledJob{}
	case batchv1alpha1.GroupVersion.WithKind("EventJob"):
		obj = &batchv1alpha1.EventJob{}
	case batchv1.SchemeGroupVersion.WithKind("Job"):
		// A GET of its metadata (no Pod template) from the API server: only the leader
		// caches Jobs.
		return l.getFrom(ctx, l.APIReader, namespace, name, metadataOf(gvk))
	case batchv1.SchemeGroupVersion.WithKind("CronJob"):
		// Only the metadata: the cache keeps no Pod templates for this.
		obj = metadataOf(gvk)
	default:
		switch gvk.GroupKind() {
		case hpaGroupKind, scaledObjectGroupKind:
			return l.targetExists(ctx, gvk, namespace, name)
		}
		// Not a trigger kind (the schema rejects it), or a workload target of an attached
		// autoscaler: the manager may not read those.
		return true, nil
	}
	return l.get(ctx, namespace, name, obj)
}

var (
	hpaGroupKind          = schema.GroupKind{Group: "autoscaling", Kind: "HorizontalPodAutoscaler"}
	scaledObjectGroupKind = schema.GroupKind{Group: autoscalingv1alpha1.KEDAGroup, Kind: "ScaledObject"}
)

// targetExists reports whether the HorizontalPodAutoscaler or ScaledObject that an attached
// autoscaler names exists: a GET of its metadata from the API server, since the webhooks
// cache neither. A kind that the cluster does not serve (KEDA not installed, a version it
// no longer serves) does not exist; one the manager may not read is taken to exist, so
// that a missing permission costs a warning, not the request.
func (l *CacheLookup) targetExists(ctx context.Context, gvk schema.GroupVersionKind, namespace, name string) (bool, error) {
	found, err := l.getFrom(ctx, l.APIReader, namespace, name, metadataOf(gvk))
	switch {
	case err == nil:
		return found, nil
	case meta.IsNoMatchError(err):
		return false, nil
	case apierrors.IsForbidden(err):
		ctrl.LoggerFrom(ctx).V(1).Info("Could not check that the target exists", "kind", gvk.Kind, "name", name, "error", err.Error())
		return true, nil
	}
	return false, err
}

func (l *CacheLookup) AttachedAutoscalers(ctx context.Context, namespace, group, kind, name string) ([]autoscalingv1alpha1.ScheduledPodAutoscaler, error) {
	list := &autoscalingv1alpha1.ScheduledPodAutoscalerList{}
	value := autoscalingv1alpha1.TargetIndexValue(group, kind, name)
	if err := l.Reader.List(ctx, list, client.InNamespace(namespace), client.MatchingFields{autoscalingv1alpha1.TargetField: value},
		client.UnsafeDisableDeepCopy); err != nil {
		return nil, fmt.Errorf("failed to list the ScheduledPodAutoscalers attached to %s %s/%s: %w", kind, namespace, name, err)
	}
	return list.Items, nil
}

// HorizontalPodAutoscalers lists them from the API server: only the leader caches them, and
// only an autoscaler attached to a workload asks.
func (l *CacheLookup) HorizontalPodAutoscalers(ctx context.Context, namespace string) ([]autoscalingv2.HorizontalPodAutoscaler, error) {
	list := &autoscalingv2.HorizontalPodAutoscalerList{}
	if err := l.APIReader.List(ctx, list, client.InNamespace(namespace)); err != nil {
		return nil, fmt.Errorf("failed to list the HorizontalPodAutoscalers in namespace %s: %w", namespace, err)
	}
	return list.Items, nil
}

// Selects lists, from the API server, one object of gvk's group and kind (in the version the
// RESTMapper prefers) in namespace that selector matches: the webhooks cache no workloads. A
// kind the cluster does not serve has none; one the manager may not list is taken to have
// one, so that a missing permission costs no false warning.
func (l *CacheLookup) Selects(ctx context.Context, gvk schema.GroupVersionKind, namespace string, selector labels.Selector) (bool, error) {
	list := &metav1.PartialObjectMetadataList{}
	list.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
	opts := []client.ListOption{client.Limit(1), client.MatchingLabelsSelector{Selector: selector}}
	if namespace != "" {
		opts = append(opts, client.InNamespace(namespace))
	}
	err := l.APIReader.List(ctx, list, opts...)
	switch {
	case err == nil:
		return len(list.Items) > 0, nil
	case meta.IsNoMatchError(err):
		return false, nil
	case apierrors.IsForbidden(err):
		return true, nil
	}
	return false, fmt.Errorf("failed to list %s: %w", gvk.Kind, err)
}

func (l *CacheLookup) Calendar(ctx context.Context, namespace, name string) (*calendarv1alpha1.Calendar, error) {
	c := &calendarv1alpha1.Calendar{}
	if found, err := l.get(ctx, namespace, name, c); !found {
		return nil, err
	}
	return c, nil
}

func (l *CacheLookup) ClusterCalendar(ctx context.Context, name string) (*calendarv1alpha1.ClusterCalendar, error) {
	c := &calendarv1alpha1.ClusterCalendar{}
	if found, err := l.get(ctx, "", name, c); !found {
		return nil, err
	}
	return c, nil
}

func (l *CacheLookup) get(ctx context.Context, namespace, name string, obj client.Object) (bool, error) {
	return l.getFrom(ctx, l.Reader, namespace, name, obj)
}

func (l *CacheLookup) getFrom(ctx context.Context, r client.Reader, namespace, name string, obj client.Object) (bool, error) {
	err := r.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, obj)
	switch {
	case err == nil:
		return true, nil
	case apierrors.IsNotFound(err):
		return false, nil
	default:
		return false, fmt.Errorf("failed to read %T %s/%s: %w", obj, namespace, name, err)
	}
}

func metadataOf(gvk schema.GroupVersionKind) *metav1.PartialObjectMetadata {
	m := &metav1.PartialObjectMetadata{}
	m.SetGroupVersionKind(gvk)
	return m
}
