// Command almanac is the almanac controller manager and its command-line tools, in one
// binary: `almanac manager` runs the reconcilers and admission webhooks in a cluster; the
// other subcommands work offline or against the current kubeconfig.
package main

import (
	"context"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"net"
	"os"
	pathpkg "path"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"time"

	// The time engine reads zones from a copy of its own (api/timing), whatever the host
	// has. The libraries linked into the binary that call time.LoadLocation (cel-go's
	// timestamp functions, cert-manager) find zones in an image without zoneinfo through this.
	_ "time/tzdata"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsfilters "sigs.k8s.io/controller-runtime/pkg/metrics/filters"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	"github.com/almanac-dev/almanac/api/index"
	"github.com/almanac-dev/almanac/api/scheme"
	"github.com/almanac-dev/almanac/api/timing"
	"github.com/almanac-dev/almanac/certs"
	"github.com/almanac-dev/almanac/commands/calendar"
	"github.com/almanac-dev/almanac/commands/check"
	"github.com/almanac-dev/almanac/commands/kube"
	"github.com/almanac-dev/almanac/commands/migrate"
	"github.com/almanac-dev/almanac/commands/next"
	"github.com/almanac-dev/almanac/commands/override"
	"github.com/almanac-dev/almanac/commands/preview"
	"github.com/almanac-dev/almanac/commands/release"
	"github.com/almanac-dev/almanac/commands/run"
	"github.com/almanac-dev/almanac/commands/suspend"
	"github.com/almanac-dev/almanac/commands/validate"
	"github.com/almanac-dev/almanac/reconcilers/base"
	"github.com/almanac-dev/almanac/reconcilers/eventjob"
	"github.com/almanac-dev/almanac/reconcilers/schedule"
	"github.com/almanac-dev/almanac/reconcilers/scheduledjob"
	"github.com/almanac-dev/almanac/reconcilers/scheduledpodautoscaler"
	"github.com/almanac-dev/almanac/reconcilers/sleep"
	"github.com/almanac-dev/almanac/webhooks"
)

// exitCoder is an error that chooses the process's exit status (`almanac validate` exits 1
// when an object is rejected, `almanac migrate` when an object cannot be converted, and both
// 2 for usage or input errors).
type exitCoder interface {
	error
	ExitCode() int
}

// version and revision name the build; the image build (`make image`, hack/image) sets them
// with -ldflags -X. `almanac --version` prints them, with the tz database release.
var (
	version  = "devel"
	revision = ""
)

// versionText is what `almanac --version` prints after "almanac ": the version, then the
// revision when it is known and the release of the tz database that every answer about time
// comes from, e.g. "0.1.0 (revision 0123abc, tz 2025c)" or "devel (tz 2025c)". Two binaries
// that answer differently for a zone can be told apart by it.
func versionText(version, revision, tzRelease string) string {
	details := []string{"tz " + tzRelease}
	if revision != "" {
		details = append([]string{"revision " + revision}, details...)
	}
	return version + " (" + strings.Join(details, ", ") + ")"
}

func main() {
	root := newRoot(os.Args[0])
	if err := root.ExecuteContext(ctrl.SetupSignalHandler()); err != nil {
		var coded exitCoder
		if errors.As(err, &coded) {
			if msg := coded.Error(); msg != "" {
				fmt.Fprintln(os.Stderr, "Error:", msg)
			}
			os.Exit(coded.ExitCode())
		}
		fmt.Fprintln(os.Stderr, "Error:", err)
		os.Exit(2)
	}
}

// newRoot returns the command tree. Run as kubectl's plugin (argv0's base name
// kubectl-almanac, as `kubectl almanac ...` runs it), its usage, help and examples say
// `kubectl almanac ...`.
func newRoot(argv0 string) *cobra.Command {
	root := &cobra.Command{
		Use:           "almanac",
		Short:         "Time-aware scaling and Jobs for Kubernetes",
		Version:       versionText(version, revision, timing.TZDataVersion),
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetVersionTemplate("almanac {{.Version}}\n")
	root.AddCommand(newManagerCommand())
	root.AddCommand(preview.NewCommand())
	root.AddCommand(validate.NewCommand())
	root.AddCommand(migrate.NewCommand())
	root.AddCommand(check.NewCommand())
	root.AddCommand(release.NewCommand())
	root.AddCommand(override.NewCommand())
	root.AddCommand(run.NewCommand())
	root.AddCommand(next.NewCommand())
	root.AddCommand(suspend.NewCommand(true))
	root.AddCommand(suspend.NewCommand(false))
	root.AddCommand(calendar.NewCommand())
	if kube.IsPlugin(argv0) {
		kube.AsPlugin(root)
	}
	return root
}

type managerOptions struct {
	metricsAddr    string
	probeAddr      string
	webhookPort    int
	webhookCertDir string
	// webhookDrain is how long a stopping manager answers admission requests with
	// "Connection: close" before its webhook server shuts down (webhooks.Draining).
	webhookDrain  time.Duration
	leaderElect   bool
	leaderElectNS string
	enableHTTP2   bool
	// watchNamespaces are the namespaces the manager watches, caches and acts in, and whose
	// objects the webhooks admit; none: every namespace.
	watchNamespaces []string
	// permissionCheck: the validating webhooks refuse a ScheduledJob or EventJob whose writer
	// may not create Jobs, and a ScheduledPodAutoscaler whose writer may not create and patch
	// HorizontalPodAutoscalers, in its namespace (docs/security.md).
	permissionCheck bool
	// pprofAddr serves Go's pprof profiles (benchmarks, debugging); empty serves nothing.
	pprofAddr string
	// kubeAPIQPS and kubeAPIBurst rate-limit the manager's requests on the client side;
	// kubeAPIQPS 0 leaves that to the API server (API Priority and Fairness).
	kubeAPIQPS   float32
	kubeAPIBurst int
	// workers is the number of objects each controller reconciles at once.
	workers workers
	// overlapMemo keeps the time engine's memo of overlaps on (timing.SetOverlapMemo); off
	// only in the benchmark that shows what it is worth (hidden flag).
	overlapMemo bool
	// lanesOff switches parts of base.Lanes off, or all of it ("lanes"): the benchmark's
	// ablation (test/bench).
	lanesOff []string
	certs    certs.Options
}

// workers is the number of workers of each controller.
type workers struct {
	scheduledPodAutoscaler, schedule, scheduledJob, eventJob, sleep int
}

func newManagerCommand() *cobra.Command {
	opts := managerOptions{}
	zapOpts := zap.Options{}
	cmd := &cobra.Command{
		Use:   "manager",
		Short: "Run the reconcilers and admission webhooks (what the Helm chart deploys)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			logger := zap.New(zap.UseFlagOptions(&zapOpts))
			ctrl.SetLogger(logger)
			// client-go and the API machinery log through klog: send that to the same logger,
			// so there is one format and one set of flags (zap's).
			klog.SetLogger(logger)
			return runManager(cmd, opts)
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.metricsAddr, "metrics-bind-address", ":8443", "Address of the metrics endpoint, served over HTTPS behind Kubernetes authentication and authorization; 0 disables it.")
	f.StringVar(&opts.probeAddr, "health-probe-bind-address", ":8081", "Address of the /healthz and /readyz endpoints.")
	f.IntVar(&opts.webhookPort, "webhook-port", 9443, "Port of the admission webhook server.")
	f.DurationVar(&opts.webhookDrain, "webhook-drain", webhooks.DefaultDrain, "How long a stopping manager keeps answering admission requests, each with \"Connection: close\", before its webhook server shuts down, so that the API server moves its kept-alive connections to other replicas without a failed request.")
	f.StringVar(&opts.webhookCertDir, "webhook-cert-dir", "", "Folder with tls.crt and tls.key for the webhook server (default: the system temp folder's k8s-webhook-server/serving-certs).")
	f.BoolVar(&opts.leaderElect, "leader-elect", false, "Elect a leader, so that only one replica reconciles at a time (all replicas serve webhooks).")
	f.StringVar(&opts.leaderElectNS, "leader-election-namespace", "", "Namespace of the leader election Lease (default: the namespace the manager runs in).")
	f.BoolVar(&opts.enableHTTP2, "enable-http2", false, "Serve HTTP/2 on the metrics and webhook servers (off by default: CVE-2023-44487, CVE-2023-39325).")
	f.StringSliceVar(&opts.watchNamespaces, "watch-namespaces", nil, "Namespaces to watch and act in, separated by commas (empty, the default: every namespace). The manager caches, reconciles and creates Jobs and HorizontalPodAutoscalers only there, and the webhooks refuse almanac's objects anywhere else.")
	f.BoolVar(&opts.permissionCheck, "permission-check", true, "Refuse, at admission, a ScheduledJob or EventJob from a user who may not create Jobs in its namespace, a ScheduledPodAutoscaler from one who may not create and patch HorizontalPodAutoscalers there, and one attached to an object from one who may not patch it (a SubjectAccessReview per request); false leaves that to your own policy.")
	f.Float32Var(&opts.kubeAPIQPS, "kube-api-qps", 0, "Requests per second the manager may send to the API server, averaged (0, the default: no client-side limit; the API server's priority and fairness queues what exceeds its capacity, and a boundary's writes all go out at its instant).")
	f.IntVar(&opts.kubeAPIBurst, "kube-api-burst", 0, "Requests the manager may send at once above --kube-api-qps (0: twice --kube-api-qps). Used only with --kube-api-qps.")
	f.IntVar(&opts.workers.scheduledPodAutoscaler, "scheduledpodautoscaler-workers", scheduledpodautoscaler.DefaultWorkers, "ScheduledPodAutoscalers reconciled at once: the HPA writes of autoscalers that share a boundary go out this many at a time.")
	f.IntVar(&opts.workers.schedule, "schedule-workers", schedule.DefaultWorkers, "Schedules reconciled at once (their status writes follow the HPA writes of a boundary).")
	f.IntVar(&opts.workers.scheduledJob, "scheduledjob-workers", scheduledjob.DefaultWorkers, "ScheduledJobs reconciled at once: Jobs that share a slot are created this many at a time.")
	f.IntVar(&opts.workers.eventJob, "eventjob-workers", eventjob.DefaultWorkers, "EventJobs reconciled at once: the Jobs of upstream Jobs that finish together are created this many at a time.")
	f.IntVar(&opts.workers.sleep, "sleep-workers", sleep.DefaultWorkers, "Sleeps and ClusterSleeps reconciled at once (each reconcile writes up to 32 of its workloads at a time).")
	f.StringVar(&opts.pprofAddr, "pprof-bind-address", "", "Serve Go's pprof profiles (/debug/pprof/) at this loopback address, for example 127.0.0.1:6060; they answer without authentication, so any other address is refused. Empty (the default) serves nothing.")
	f.BoolVar(&opts.overlapMemo, "overlap-memo", true, "Remember what comparisons of two Schedules' windows found (off only to measure what that is worth: test/bench).")
	_ = f.MarkHidden("overlap-memo")
	f.StringSliceVar(&opts.lanesOff, "lanes-off", nil, "Parts of the ordering of an instant's writes to switch off (defer, recording, events), or lanes for all of it (only to measure what each is worth: test/bench).")
	_ = f.MarkHidden("lanes-off")
	opts.certs.AddFlags(f)
	goFlags := flag.NewFlagSet("zap", flag.ContinueOnError)
	zapOpts.BindFlags(goFlags)
	f.AddGoFlagSet(goFlags)
	return cmd
}

func runManager(cmd *cobra.Command, opts managerOptions) error {
	log := ctrl.Log.WithName("setup")
	var tlsOpts []func(*tls.Config)
	if !opts.enableHTTP2 {
		tlsOpts = append(tlsOpts, func(c *tls.Config) { c.NextProtos = []string{"http/1.1"} })
	}
	metricsOpts := metricsserver.Options{
		BindAddress:    opts.metricsAddr,
		SecureServing:  true,
		FilterProvider: metricsfilters.WithAuthenticationAndAuthorization,
		TLSOpts:        tlsOpts,
	}
	if err := loopbackOnly(opts.pprofAddr); err != nil {
		return err
	}
	for flag, n := range map[string]int{
		"--scheduledpodautoscaler-workers": opts.workers.scheduledPodAutoscaler, "--schedule-workers": opts.workers.schedule,
		"--scheduledjob-workers": opts.workers.scheduledJob, "--eventjob-workers": opts.workers.eventJob, "--sleep-workers": opts.workers.sleep,
	} {
		if n < 1 {
			return fmt.Errorf("%s=%d: a controller needs at least 1 worker", flag, n)
		}
	}
	namespaces, err := checkWatchNamespaces(opts.watchNamespaces)
	if err != nil {
		return err
	}
	if opts.kubeAPIQPS < 0 || opts.kubeAPIBurst < 0 {
		return fmt.Errorf("--kube-api-qps=%v --kube-api-burst=%d: use 0 for no client-side limit, or positive numbers", opts.kubeAPIQPS, opts.kubeAPIBurst)
	}
	timing.SetOverlapMemo(opts.overlapMemo)
	cfg := ctrl.GetConfigOrDie()
	cfg.QPS, cfg.Burst = -1, 0 // no client-side limit (client-go would read 0 as 5 per second)
	if opts.kubeAPIQPS > 0 {
		cfg.QPS, cfg.Burst = opts.kubeAPIQPS, opts.kubeAPIBurst
		if cfg.Burst == 0 {
			cfg.Burst = max(1, int(2*opts.kubeAPIQPS))
		}
	}
	opts.certs.CertDir = opts.webhookCertDir
	webhookCerts, err := certs.New(opts.certs)
	if err != nil {
		return err
	}
	// Jobs and HPAs are cached only on the leader (leadercache.go).
	var caches *leaderCache
	mgr, err := ctrl.NewManager(cfg, manager.Options{
		Scheme: scheme.Scheme,
		Cache:  cacheOptions(namespaces),
		NewCache: func(cfg *rest.Config, opts cache.Options) (cache.Cache, error) {
			c, err := newLeaderCache(cfg, opts)
			caches = c
			return c, err
		},
		Metrics:                 metricsOpts,
		HealthProbeBindAddress:  opts.probeAddr,
		PprofBindAddress:        opts.pprofAddr,
		LeaderElection:          opts.leaderElect,
		LeaderElectionID:        index.LeaderElectionID,
		LeaderElectionNamespace: opts.leaderElectNS,
		// Leader changes hand over faster when the old leader gives up its lease on exit.
		LeaderElectionReleaseOnCancel: true,
		WebhookServer: webhooks.Draining(webhook.NewServer(webhook.Options{
			Port:    opts.webhookPort,
			CertDir: opts.webhookCertDir,
			TLSOpts: append(slices.Clone(tlsOpts), webhookCerts.ConfigureTLS),
		}), opts.webhookDrain),
	})
	if err != nil {
		return fmt.Errorf("failed to create the manager: %w", err)
	}
	if err := mgr.Add(caches.LeaderRunnable()); err != nil {
		return err
	}
	if err := webhookCerts.SetupWithManager(mgr); err != nil {
		return fmt.Errorf("failed to set up the webhook certificates: %w", err)
	}
	if err := registerIndexes(cmd.Context(), mgr); err != nil {
		return err
	}
	clk := clock.RealClock{}
	if err := webhooks.SetupWithManager(mgr, clk, webhooks.WithPermissionCheck(opts.permissionCheck), webhooks.WithNamespaces(namespaces)); err != nil {
		return fmt.Errorf("failed to set up the admission webhooks: %w", err)
	}
	// One Lanes for all reconcilers: at an instant, the HPA writes and the Jobs go out first,
	// the Job owners' records after them, the statuses and events last (base.Lanes; each
	// reconciler takes part through base.Base, reconcilers/base/ordered.go).
	lanes, err := newLanes(clk, opts.lanesOff)
	if err != nil {
		return err
	}
	if err := scheduledjob.New(mgr, clk, lanes, base.WithWorkers(opts.workers.scheduledJob)).SetupWithManager(mgr); err != nil {
		return fmt.Errorf("failed to set up the ScheduledJob reconciler: %w", err)
	}
	if err := eventjob.New(mgr, clk, lanes, base.WithWorkers(opts.workers.eventJob)).SetupWithManager(mgr); err != nil {
		return fmt.Errorf("failed to set up the EventJob reconciler: %w", err)
	}
	if err := scheduledpodautoscaler.New(mgr, clk, lanes, base.WithWorkers(opts.workers.scheduledPodAutoscaler)).SetupWithManager(mgr); err != nil {
		return fmt.Errorf("failed to set up the ScheduledPodAutoscaler reconciler: %w", err)
	}
	if err := schedule.New(mgr, clk, scheduledpodautoscaler.ScheduleEvaluationErrors(), lanes, base.WithWorkers(opts.workers.schedule)).SetupWithManager(mgr); err != nil {
		return fmt.Errorf("failed to set up the Schedule reconciler: %w", err)
	}
	if err := sleep.New(mgr, clk, lanes, base.WithWorkers(opts.workers.sleep)).SetupWithManager(mgr); err != nil {
		return fmt.Errorf("failed to set up the Sleep reconciler: %w", err)
	}

	if err := mgr.AddHealthzCheck("healthz", healthz.Ping); err != nil {
		return err
	}
	if err := mgr.AddReadyzCheck("readyz", mgr.GetWebhookServer().StartedChecker()); err != nil {
		return err
	}
	if err := mgr.AddReadyzCheck("webhook-certificate", webhookCerts.ReadyzCheck); err != nil {
		return err
	}
	// The benchmarks (test/bench) read the client settings from this line, to give their raw
	// client the same.
	memoryLimit := setMemoryLimit(os.DirFS("/"))
	watched := "all"
	if len(namespaces) > 0 {
		watched = strings.Join(namespaces, ",")
	}
	log.Info("Starting the manager", "kubeAPIQPS", cfg.QPS, "kubeAPIBurst", cfg.Burst, "goMemoryLimit", memoryLimit, "watchNamespaces", watched)
	return mgr.Start(cmd.Context())
}

// setMemoryLimit gives the Go runtime a soft memory limit of 90% of the manager's cgroup
// memory limit (memory.max of its cgroup v2, as a container's resources.limits.memory sets
// it), unless GOMEMLIMIT is set; it returns the limit in force (math.MaxInt64: none). Without
// one, the heap grows to twice what is live before the collector runs, so a manager whose
// caches fill most of its container is OOM-killed where collecting more often would keep it
// running. The remaining 10% is for what the runtime does not count (the binary, C stacks).
func setMemoryLimit(root fs.FS) int64 {
	if limit, ok := cgroupMemoryLimit(root); ok && os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(limit / 10 * 9)
	}
	return debug.SetMemoryLimit(-1) // -1 reads the limit in force
}

// cgroupMemoryLimit reads the memory limit of this process's cgroup from root (the
// machine's /): with cgroup v2, memory.max of the cgroup that proc/self/cgroup's "0::" line
// names, below sys/fs/cgroup; with cgroup v1, memory.limit_in_bytes of its memory
// controller's cgroup, below sys/fs/cgroup/memory. A container sees its own cgroup at the top
// of those folders (under v1, while proc/self/cgroup names the host's path), so the top is
// read when the named path is not there. No limit ("max" under v2, a value near 2^63 under
// v1) or anything unreadable is false.
func cgroupMemoryLimit(root fs.FS) (int64, bool) {
	data, err := fs.ReadFile(root, "proc/self/cgroup")
	if err != nil {
		return 0, false
	}
	read := func(dir, path, file string) (int64, bool) {
		value, err := fs.ReadFile(root, pathpkg.Join(dir, path, file))
		if err != nil {
			if value, err = fs.ReadFile(root, pathpkg.Join(dir, file)); err != nil {
				return 0, false
			}
		}
		limit, err := strconv.ParseInt(strings.TrimSpace(string(value)), 10, 64)
		if err != nil || limit <= 0 || limit >= 1<<62 {
			return 0, false
		}
		return limit, true
	}
	var v2 string
	for line := range strings.Lines(string(data)) {
		// hierarchy-ID:controllers:path
		parts := strings.SplitN(strings.TrimSpace(line), ":", 3)
		if len(parts) != 3 {
			continue
		}
		if parts[0] == "0" && parts[1] == "" {
			v2 = parts[2]
			continue
		}
		if slices.Contains(strings.Split(parts[1], ","), "memory") {
			return read("sys/fs/cgroup/memory", parts[2], "memory.limit_in_bytes")
		}
	}
	if v2 != "" {
		return read("sys/fs/cgroup", v2, "memory.max")
	}
	return 0, false
}

// loopbackOnly refuses a --pprof-bind-address that other hosts could reach: pprof has no
// authentication (profiles show the manager's memory, and a profile request costs CPU), so it
// is served on the loopback interface only, for a port-forward or a process on the same node.
func loopbackOnly(addr string) error {
	if addr == "" || addr == "0" {
		return nil
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("--pprof-bind-address=%q: %w; expected a loopback host and a port, for example 127.0.0.1:6060", addr, err)
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return fmt.Errorf("--pprof-bind-address=%q: pprof answers without authentication, so it is served on a loopback address only; use 127.0.0.1:PORT or [::1]:PORT", addr)
	}
	return nil
}

// cacheOptions are the manager's cache options: the transforms of api/index, which keep only
// what the webhooks and reconcilers read, and the namespaces it watches (none: all).
func cacheOptions(namespaces []string) cache.Options {
	opts := cache.Options{DefaultTransform: index.TrimObject, ByObject: map[client.Object]cache.ByObject{}}
	for _, t := range index.Transforms() {
		opts.ByObject[t.Object] = cache.ByObject{Transform: t.Func}
	}
	if len(namespaces) > 0 {
		opts.DefaultNamespaces = map[string]cache.Config{}
		for _, ns := range namespaces {
			opts.DefaultNamespaces[ns] = cache.Config{}
		}
	}
	return opts
}

// checkWatchNamespaces checks --watch-namespaces: each entry a namespace name (an RFC 1123
// label), none empty, none twice. It returns the list as given; empty means every namespace.
func checkWatchNamespaces(namespaces []string) ([]string, error) {
	var problems []string
	seen := map[string]bool{}
	for i, ns := range namespaces {
		switch {
		case ns == "":
			problems = append(problems, fmt.Sprintf("entry %d is empty", i+1))
		case seen[ns]:
			problems = append(problems, fmt.Sprintf("%q is listed twice", ns))
		default:
			if errs := validation.IsDNS1123Label(ns); len(errs) > 0 {
				problems = append(problems, fmt.Sprintf("%q is not a namespace name: %s", ns, strings.Join(errs, "; ")))
			}
		}
		seen[ns] = true
	}
	if len(problems) > 0 {
		return nil, fmt.Errorf("--watch-namespaces=%s: %s; list namespace names separated by commas, each once, or leave it empty to watch every namespace",
			strings.Join(namespaces, ","), strings.Join(problems, ", "))
	}
	return namespaces, nil
}

// registerIndexes registers, once, every cache field index that the webhooks and reconcilers
// read (api/index): api/ cannot import controller-runtime's FieldIndexer, so this adapts them.
func registerIndexes(ctx context.Context, mgr ctrl.Manager) error {
	for _, ix := range index.All() {
		values := ix.Values
		if err := mgr.GetFieldIndexer().IndexField(ctx, ix.Object, ix.Field, func(o client.Object) []string { return values(o) }); err != nil {
			return fmt.Errorf("failed to index %T by %s: %w", ix.Object, ix.Field, err)
		}
	}
	return nil
}

// newLanes returns the option that shares one base.Lanes among the reconcilers, without the
// parts off ("lanes": without any, the ablation of the whole).
func newLanes(clk clock.WithDelayedExecution, off []string) (base.Option, error) {
	var parts []base.LanesPart
	for _, o := range off {
		switch p := base.LanesPart(o); {
		case o == "lanes":
			return base.WithLanes(nil), nil
		case slices.Contains(base.LanesParts, p):
			parts = append(parts, p)
		default:
			return nil, fmt.Errorf("--lanes-off: %q is not a part of the ordering; use lanes or one of %v", o, base.LanesParts)
		}
	}
	return base.WithLanes(base.NewLanes(clk, base.DefaultMaxReportDelay, parts...)), nil
}
