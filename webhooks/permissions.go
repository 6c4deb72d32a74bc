package webhooks

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	apiadmission "github.com/almanac-dev/almanac/api/admission"
	autoscalingv1alpha1 "github.com/almanac-dev/almanac/api/autoscaling/v1alpha1"
	batchv1alpha1 "github.com/almanac-dev/almanac/api/batch/v1alpha1"
	sleepv1alpha1 "github.com/almanac-dev/almanac/api/sleep/v1alpha1"
)

// The permission check keeps almanac from being a confused deputy. The manager may create
// Jobs and HorizontalPodAutoscalers in every namespace, and patch the targets of attached
// autoscalers; a ScheduledJob, EventJob or ScheduledPodAutoscaler asks it to do so with a Pod
// template, an autoscaler spec or a target chosen by whoever wrote the object. So the validating webhook admits that content only from a user
// who may do the same thing directly: it asks the API server with a SubjectAccessReview for
// the request's user, groups, UID and extra, exactly as the API server authenticated them.
//
// +kubebuilder:rbac:groups=authorization.k8s.io,resources=subjectaccessreviews,verbs=create

// PermissionCheckTimeout bounds the SubjectAccessReviews of one admission request. It is well
// inside the webhooks' 5 s timeout, so that a slow authorizer gives the user almanac's
// message rather than the API server's "context deadline exceeded".
const PermissionCheckTimeout = 2 * time.Second

// Delegated is something almanac does in an object's namespace on behalf of whoever wrote
// the object.
type Delegated struct {
	// Verb, Group, Version and Resource are the SubjectAccessReview's resource attributes.
	// Resource is empty when DelegatedActions cannot know it: a workload's, which the
	// permission check finds from Kind with the cluster's RESTMapper.
	Verb, Group, Version, Resource string
	// Subresource is the SubjectAccessReview's subresource: "scale" for the replicas of a
	// workload; empty for the resource itself.
	Subresource string
	// Kind names the resource in messages.
	Kind string
	// KindPath is the field that names Kind, for the refusal of a kind the cluster does not
	// serve; nil: spec.targetRef.kind.
	KindPath *field.Path
}

// what names the resource in messages: "Deployments", or "the scale subresource of
// Deployments".
func (d Delegated) what() string {
	if d.Subresource != "" {
		return "the " + d.Subresource + " subresource of " + pluralKind(d.Kind)
	}
	return pluralKind(d.Kind)
}

// resourceText is the resource as the message's "(group/version resource)": "apps/v1
// deployments/scale".
func (d Delegated) resourceText() string {
	gv := schema.GroupVersion{Group: d.Group, Version: d.Version}.String()
	if d.Subresource != "" {
		return gv + " " + d.Resource + "/" + d.Subresource
	}
	return gv + " " + d.Resource
}

// grantText is what an RBAC rule names: "jobs.batch", or `deployments/scale in API group
// "apps"`.
func (d Delegated) grantText() string {
	if d.Subresource != "" || d.Group == "" {
		r := d.Resource
		if d.Subresource != "" {
			r += "/" + d.Subresource
		}
		return fmt.Sprintf("%s in API group %q", r, d.Group)
	}
	return d.Resource + "." + d.Group
}

var (
	createJobs = Delegated{Verb: "create", Group: "batch", Version: "v1", Resource: "jobs", Kind: "Job"}
	createHPAs = Delegated{Verb: "create", Group: "autoscaling", Version: "v2", Resource: "horizontalpodautoscalers", Kind: "HorizontalPodAutoscaler"}
	patchHPAs  = Delegated{Verb: "patch", Group: "autoscaling", Version: "v2", Resource: "horizontalpodautoscalers", Kind: "HorizontalPodAutoscaler"}

	hpaSpecPath   = field.NewPath("spec", "horizontalPodAutoscalerSpec")
	targetRefPath = field.NewPath("spec", "targetRef")
)

// patchTarget is what almanac does to the target of an attached autoscaler: patch a
// HorizontalPodAutoscaler or a KEDA ScaledObject, or the scale subresource of anything else
// (whose Resource the permission check finds).
func patchTarget(ref autoscalingv1alpha1.TargetReference) Delegated {
	gvk := ref.GroupVersionKind()
	switch ref.TargetKind() {
	case autoscalingv1alpha1.TargetHPA:
		return Delegated{Verb: "patch", Group: gvk.Group, Version: gvk.Version, Resource: "horizontalpodautoscalers", Kind: "HorizontalPodAutoscaler"}
	case autoscalingv1alpha1.TargetScaledObject:
		return Delegated{Verb: "patch", Group: gvk.Group, Version: gvk.Version, Resource: "scaledobjects", Kind: "ScaledObject"}
	default:
		return Delegated{Verb: "patch", Group: gvk.Group, Version: gvk.Version, Subresource: "scale", Kind: gvk.Kind}
	}
}

// DelegatedActions returns what admitting obj lets almanac do on its writer's behalf, and the
// field whose content almanac acts on; nothing when there is nothing to check.
//
// The rule: a ScheduledJob or EventJob makes almanac create batch/v1 Jobs, from
// spec.jobTemplate at the times its other fields say; which writes those are is
// batchv1alpha1's one rule (ScheduledJob.StartsJobs, EventJob.StartsJobs): the create, and
// every update that can start a Job sooner or that the stored object would not have started
// (the template, at, schedule, timeZone, startingDeadlineSeconds, spread, calendars, the
// trigger, a resume, concurrencyPolicy Allow or Replace, a new run-now token). A
// ScheduledPodAutoscaler makes it create and patch an autoscaling HorizontalPodAutoscaler from
// spec.horizontalPodAutoscalerSpec (its scaleTargetRef, bounds, metrics and behavior); an
// attached one (spec.targetRef) makes it patch the target: a HorizontalPodAutoscaler
// (autoscaling horizontalpodautoscalers), a KEDA ScaledObject (keda.sh scaledobjects), or the
// scale subresource of any other kind (its Resource left for the permission check to find),
// checked on create and when that field changed (compared after defaulting with
// apimachinery's semantic equality). Labels, suspend: true, the history limits, an
// autoscaler's suspend and overlap policy never make almanac create or write more, so users
// without those rights can still change them. Schedules only move the bounds of an autoscaler
// whose spec passed this check, and objects being deleted are never checked. old is nil on
// create.
func DelegatedActions(obj, old client.Object) (*field.Path, []Delegated) {
	if obj.GetDeletionTimestamp() != nil {
		return nil, nil
	}
	switch o := obj.(type) {
	case *batchv1alpha1.ScheduledJob:
		prev, _ := old.(*batchv1alpha1.ScheduledJob)
		if path := o.StartsJobs(prev); path != nil {
			return path, []Delegated{createJobs}
		}
		return nil, nil
	case *batchv1alpha1.EventJob:
		prev, _ := old.(*batchv1alpha1.EventJob)
		if path := o.StartsJobs(prev); path != nil {
			return path, []Delegated{createJobs}
		}
		return nil, nil
	case *autoscalingv1alpha1.ScheduledPodAutoscaler:
		if o.Attached() {
			// The bounds (minReplicas, maxReplicas) are not checked: the writer may patch
			// the target, and so set them directly.
			if prev, ok := old.(*autoscalingv1alpha1.ScheduledPodAutoscaler); ok && prev != nil && equality.Semantic.DeepEqual(prev.Spec.TargetRef, o.Spec.TargetRef) {
				return nil, nil
			}
			return targetRefPath, []Delegated{patchTarget(*o.Spec.TargetRef)}
		}
		if prev, ok := old.(*autoscalingv1alpha1.ScheduledPodAutoscaler); ok && prev != nil &&
			equality.Semantic.DeepEqual(prev.Spec.HorizontalPodAutoscalerSpec, o.Spec.HorizontalPodAutoscalerSpec) {
			return nil, nil
		}
		return hpaSpecPath, []Delegated{createHPAs, patchHPAs}
	case *sleepv1alpha1.Sleep:
		// A Sleep makes almanac patch (and scale) the workloads of spec.kinds in its
		// namespace, when and as its spec says: checked on create and on every change of the
		// spec but one that only suspends it (which only wakes what it holds).
		if prev, ok := old.(*sleepv1alpha1.Sleep); ok && prev != nil {
			a, b := prev.Spec, o.Spec
			a.Suspend, b.Suspend = false, false
			if equality.Semantic.DeepEqual(a, b) && (o.Spec.Suspend || !prev.Spec.Suspend) {
				return nil, nil
			}
		}
		return sleepKindsPath, SleepActions(o.Spec.Kinds)
	}
	return nil, nil
}

var sleepKindsPath = field.NewPath("spec", "kinds")

// sleepResources are the resources of the kinds a sleep knows how to put to sleep.
var sleepResources = map[schema.GroupKind]string{
	{Group: "apps", Kind: "Deployment"}:                             "deployments",
	{Group: "apps", Kind: "StatefulSet"}:                            "statefulsets",
	{Group: "apps", Kind: "ReplicaSet"}:                             "replicasets",
	{Group: "batch", Kind: "CronJob"}:                               "cronjobs",
	{Group: batchv1alpha1.GroupVersion.Group, Kind: "ScheduledJob"}: "scheduledjobs",
	{Group: batchv1alpha1.GroupVersion.Group, Kind: "EventJob"}:     "eventjobs",
	{Group: autoscalingv1alpha1.KEDAGroup, Kind: "ScaledObject"}:    "scaledobjects",
}

// SleepActions is what a Sleep with these kinds (none: sleepv1alpha1.DefaultKinds) makes
// almanac do in its namespace: patch each kind (the record, and replicas, suspend or KEDA's
// pause, in one write), and for a kind that sleeps through its scale subresource, patch that
// too (its Resource left for the permission check to find). Waking a ScheduledJob or an
// EventJob resumes it, which starts Jobs (batchv1alpha1's rule of which writes start Jobs): a
// Sleep of those kinds needs create on Jobs too.
func SleepActions(kinds []sleepv1alpha1.WorkloadKind) []Delegated {
	if len(kinds) == 0 {
		kinds = sleepv1alpha1.DefaultKinds()
	}
	var out []Delegated
	jobs := false
	for i, k := range kinds {
		if g := k.GroupVersionKind().Group; g == batchv1alpha1.GroupVersion.Group && !jobs {
			jobs = true
			out = append(out, createJobs)
		}
		gvk := k.GroupVersionKind()
		d := Delegated{Verb: "patch", Group: gvk.Group, Version: gvk.Version, Resource: sleepResources[gvk.GroupKind()], Kind: gvk.Kind,
			KindPath: sleepKindsPath.Index(i).Child("kind")}
		out = append(out, d)
		if sleepv1alpha1.HandlingOf(gvk.GroupKind()) == sleepv1alpha1.HandleScale {
			d.Subresource = "scale"
			out = append(out, d)
		}
	}
	return out
}

// SubjectAccessReview is the question "may user do d in namespace?", with the user's name,
// UID, groups and extra copied exactly as the API server authenticated them (service
// accounts, their groups and impersonated users included).
func SubjectAccessReview(user authenticationv1.UserInfo, namespace string, d Delegated) *authorizationv1.SubjectAccessReview {
	var extra map[string]authorizationv1.ExtraValue
	if user.Extra != nil {
		extra = make(map[string]authorizationv1.ExtraValue, len(user.Extra))
		for k, v := range user.Extra {
			extra[k] = authorizationv1.ExtraValue(v)
		}
	}
	return &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
		User: user.Username, UID: user.UID, Groups: user.Groups, Extra: extra,
		ResourceAttributes: &authorizationv1.ResourceAttributes{
			Namespace: namespace, Verb: d.Verb, Group: d.Group, Version: d.Version, Resource: d.Resource, Subresource: d.Subresource,
		},
	}}
}

// ReviewFunc creates a SubjectAccessReview and fills in its status (a client's Create).
type ReviewFunc func(ctx context.Context, sar *authorizationv1.SubjectAccessReview) error

// permissionCheck is the validating webhooks' permission check; a nil *permissionCheck checks
// nothing (the manager's --permission-check=false).
type permissionCheck struct {
	review  ReviewFunc
	timeout time.Duration
	// mapper finds the resource of a workload's kind (the manager's RESTMapper).
	mapper meta.RESTMapper
}

// Option changes what SetupWithManager sets up.
type Option func(*setupOptions)

type setupOptions struct {
	permissionCheck bool
	// namespaces are the namespaces served (WithNamespaces); none: every namespace.
	namespaces []string
}

// WithPermissionCheck turns the validating webhooks' permission check on (the default) or
// off (for clusters that control who may create ScheduledJobs, EventJobs and
// ScheduledPodAutoscalers in another way).
func WithPermissionCheck(on bool) Option {
	return func(o *setupOptions) { o.permissionCheck = on }
}

func newSetupOptions(opts []Option) setupOptions {
	o := setupOptions{permissionCheck: true}
	for _, opt := range opts {
		opt(&o)
	}
	return o
}

// newPermissionCheck returns the check that asks through c, or nil when it is turned off.
func newPermissionCheck(o setupOptions, c client.Client) *permissionCheck {
	if !o.permissionCheck {
		return nil
	}
	p := &permissionCheck{
		review:  func(ctx context.Context, sar *authorizationv1.SubjectAccessReview) error { return c.Create(ctx, sar) },
		timeout: PermissionCheckTimeout,
	}
	if c != nil {
		p.mapper = c.RESTMapper()
	}
	return p
}

// check returns the refusal of req, or nil when its user may do what admitting it lets
// almanac do. A review that fails (an error, or no answer within the timeout) refuses the
// request too: the check fails closed, like the webhooks' failurePolicy.
func (p *permissionCheck) check(ctx context.Context, req admission.Request, r apiadmission.Rules) *metav1.Status {
	if p == nil {
		return nil
	}
	obj, err := r.Decode(req.Object.Raw)
	if err != nil {
		return &apierrors.NewInternalError(err).ErrStatus
	}
	var old client.Object
	if req.OldObject.Raw != nil {
		if old, err = r.Decode(req.OldObject.Raw); err != nil {
			return &apierrors.NewInternalError(err).ErrStatus
		}
	}
	path, actions := DelegatedActions(obj, old)
	if len(actions) == 0 {
		return nil
	}
	for i := range actions {
		if actions[i].Resource != "" {
			continue
		}
		if refused := p.resolve(&actions[i], req.Name, r); refused != nil {
			return refused
		}
	}
	ctx, cancel := context.WithTimeout(ctx, p.timeout)
	defer cancel()
	var missing []Delegated
	for _, d := range actions {
		sar := SubjectAccessReview(req.UserInfo, req.Namespace, d)
		if err := p.review(ctx, sar); err != nil {
			if errors.Is(ctx.Err(), context.DeadlineExceeded) {
				err = fmt.Errorf("no answer within %s: %w", p.timeout, err)
			}
			return &apierrors.NewInternalError(fmt.Errorf(
				"almanac could not check whether %s may %s %s in namespace %q (SubjectAccessReview: %w), so it refuses the %s: nothing was changed; "+
					"try again, and if this persists, check the manager's logs and its permission to create subjectaccessreviews",
				subjectText(req.UserInfo), d.Verb, d.what(), req.Namespace, err, r.GroupVersionKind().Kind)).ErrStatus
		}
		if !sar.Status.Allowed || sar.Status.Denied {
			missing = append(missing, d)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	msg := deniedMessage(req.UserInfo, req.Namespace, r.GroupVersionKind().Kind, path, missing)
	status := apierrors.NewForbidden(schema.GroupResource{Group: r.GroupVersionKind().Group, Resource: r.Resource()}, req.Name,
		errors.New(path.String()+": "+msg)).ErrStatus
	status.Details.Causes = []metav1.StatusCause{{Type: metav1.CauseType(field.ErrorTypeForbidden), Field: path.String(), Message: msg}}
	return &status
}

// resolve fills in the resource of d, a workload's scale subresource, from its kind with the
// RESTMapper; a kind that the cluster does not serve refuses the request, since almanac
// cannot check what it would patch.
func (p *permissionCheck) resolve(d *Delegated, name string, r apiadmission.Rules) *metav1.Status {
	gk := schema.GroupKind{Group: d.Group, Kind: d.Kind}
	if p.mapper == nil {
		return &apierrors.NewInternalError(fmt.Errorf("almanac has no RESTMapper to find the resource of kind %s", gk)).ErrStatus
	}
	mapping, err := p.mapper.RESTMapping(gk, d.Version)
	switch {
	case meta.IsNoMatchError(err):
		gv := schema.GroupVersion{Group: d.Group, Version: d.Version}
		kindPath, fix := targetRefPath.Child("kind"), "spec.targetRef.apiVersion and kind"
		if d.KindPath != nil {
			kindPath, fix = d.KindPath, d.KindPath.String()+" and the apiVersion beside it"
		}
		status := apierrors.NewInvalid(r.GroupVersionKind().GroupKind(), name, field.ErrorList{field.Invalid(kindPath, d.Kind, fmt.Sprintf(
			"kind %s has no resource on this cluster (the API server serves no %s in %s), so almanac cannot tell what it would patch, nor check that you may: "+
				"install the kind's CustomResourceDefinition first, or correct %s (kubectl api-resources lists what the cluster serves)",
			d.Kind, d.Kind, gv, fix))}).ErrStatus
		return &status
	case err != nil:
		return &apierrors.NewInternalError(fmt.Errorf("almanac could not find the resource of kind %s %s: %w", gk, d.Version, err)).ErrStatus
	}
	d.Resource = mapping.Resource.Resource
	return nil
}

// deniedMessage says which permission user lacks, why almanac needs it, and how to grant it.
func deniedMessage(user authenticationv1.UserInfo, namespace, kind string, path *field.Path, missing []Delegated) string {
	var verbs []string
	for _, d := range missing {
		verbs = append(verbs, d.Verb)
	}
	d := missing[0]
	does := "creates this ScheduledJob's Jobs"
	switch {
	case kind == "EventJob":
		does = "creates this EventJob's Jobs"
	case kind == "ScheduledPodAutoscaler" && path == targetRefPath:
		does = "patches this ScheduledPodAutoscaler's target"
	case kind == "ScheduledPodAutoscaler":
		does = "creates and patches this ScheduledPodAutoscaler's HorizontalPodAutoscaler"
	case kind == sleepv1alpha1.KindSleep:
		return sleepDeniedMessage(user, namespace, missing)
	}
	return fmt.Sprintf("%s may not %s %s (%s) in namespace %q, and almanac %s on behalf of whoever writes %s, "+
		"so it accepts it only from users who may do that themselves: grant %s on %s in namespace %q, "+
		"e.g. bind the edit ClusterRole: kubectl create rolebinding %s --clusterrole=edit %s --namespace=%s",
		subjectText(user), strings.Join(verbs, " or "), d.what(), d.resourceText(), namespace,
		does, path, quoteAll(verbs), d.grantText(), namespace,
		bindingName(user.Username), subjectFlag(user.Username), namespace)
}

func pluralKind(kind string) string { return kind + "s" }

func quoteAll(words []string) string {
	q := make([]string, len(words))
	for i, w := range words {
		q[i] = fmt.Sprintf("%q", w)
	}
	return strings.Join(q, " and ")
}

const serviceAccountPrefix = "system:serviceaccount:"

// subjectText names the requester as RBAC would: a ServiceAccount by namespace and name.
func subjectText(user authenticationv1.UserInfo) string {
	if ns, name, ok := serviceAccount(user.Username); ok {
		return fmt.Sprintf("ServiceAccount %s/%s", ns, name)
	}
	return fmt.Sprintf("user %q", user.Username)
}

func serviceAccount(username string) (namespace, name string, ok bool) {
	rest, found := strings.CutPrefix(username, serviceAccountPrefix)
	if !found {
		return "", "", false
	}
	namespace, name, ok = strings.Cut(rest, ":")
	return namespace, name, ok && namespace != "" && name != ""
}

// subjectFlag is the `kubectl create rolebinding` flag that names the requester.
func subjectFlag(username string) string {
	if ns, name, ok := serviceAccount(username); ok {
		return "--serviceaccount=" + ns + ":" + name
	}
	if strings.ContainsAny(username, " '\"") {
		return fmt.Sprintf("--user=%q", username)
	}
	return "--user=" + username
}

var notInName = regexp.MustCompile(`[^a-z0-9.-]+`)

// bindingName is a RoleBinding name for the hint: "<subject>-edit", within the rules of
// object names.
func bindingName(username string) string {
	if _, name, ok := serviceAccount(username); ok {
		username = name
	}
	s := strings.Trim(notInName.ReplaceAllString(strings.ToLower(username), "-"), "-.")
	if len(s) > 48 {
		s = strings.Trim(s[:48], "-.")
	}
	if s == "" {
		return "almanac-edit"
	}
	return s + "-edit"
}

// sleepDeniedMessage says which of a Sleep's kinds its writer may not patch, and the fixes:
// grant them, or name fewer kinds.
func sleepDeniedMessage(user authenticationv1.UserInfo, namespace string, missing []Delegated) string {
	var what []string
	for _, d := range missing {
		what = append(what, fmt.Sprintf("%q on %s", d.Verb, d.grantText()))
	}
	return fmt.Sprintf("%s may not patch %s (%s) in namespace %q, and almanac puts this Sleep's workloads to sleep and wakes them (patching them) on behalf of whoever writes spec, "+
		"so it accepts it only from users who may do that themselves: grant %s in namespace %q (e.g. bind the edit ClusterRole: kubectl create rolebinding %s --clusterrole=edit %s --namespace=%s), "+
		"or list in spec.kinds only the kinds you may patch",
		subjectText(user), missing[0].what(), missing[0].resourceText(), namespace, strings.Join(what, ", "), namespace,
		bindingName(user.Username), subjectFlag(user.Username), namespace)
}
