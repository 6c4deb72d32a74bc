// Package kube is what almanac's commands that talk to a cluster share: how they connect
// (the kubeconfig flags, its namespace), how they name almanac's kinds on the command line
// (KIND/NAME, as kubectl does: resource.go) and read the calendars objects name, how they end
// (an Error with the exit status: refused by the cluster, or a usage error before anything
// was sent), and how the binary becomes kubectl's plugin, `kubectl almanac` (plugin.go).
package kube

import (
	"fmt"
	"time"

	"github.com/spf13/pflag"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/almanac-dev/almanac/api/scheme"
)

// Exit statuses of the commands that talk to a cluster.
const (
	ExitOK = 0
	// ExitRefused: the cluster refused what was asked (not found, forbidden, refused by
	// admission), or what was asked did not happen in time.
	ExitRefused = 1
	// ExitUsage: wrong flags or arguments, or no kubeconfig; nothing was sent.
	ExitUsage = 2
)

// Error is returned when a command did not do what it was asked; its ExitCode is the
// process's exit status.
type Error struct {
	Code int
	Msg  string
}

func (e *Error) Error() string { return e.Msg }

// ExitCode is ExitRefused or ExitUsage.
func (e *Error) ExitCode() int { return e.Code }

// Usage is an ExitUsage error.
func Usage(format string, args ...any) *Error {
	return &Error{Code: ExitUsage, Msg: fmt.Sprintf(format, args...)}
}

// Refused is an ExitRefused error.
func Refused(format string, args ...any) *Error {
	return &Error{Code: ExitRefused, Msg: fmt.Sprintf(format, args...)}
}

// Flags are the kubeconfig flags.
type Flags struct {
	Kubeconfig string
	Context    string
	// Namespace is the -n flag; empty: the context's namespace, else default.
	Namespace string
}

// AddFlags adds --kubeconfig, --context and -n/--namespace (whose help is namespaceHelp) to f.
func AddFlags(f *pflag.FlagSet, k *Flags, namespaceHelp string) {
	f.StringVar(&k.Kubeconfig, "kubeconfig", "", "Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config, then the in-cluster service account).")
	f.StringVar(&k.Context, "context", "", "The kubeconfig context to use.")
	f.StringVarP(&k.Namespace, "namespace", "n", "", namespaceHelp)
}

// Connect returns a client of the cluster that k names, with requests that time out after
// 30 s and the API server's warnings passed to warnings (nil: client-go's default), and the
// namespace to use.
func Connect(k Flags, warnings rest.WarningHandler) (client.Client, string, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = k.Kubeconfig
	cc := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{CurrentContext: k.Context})
	cfg, err := cc.ClientConfig()
	if err != nil {
		return nil, "", Usage("failed to load the kubeconfig: %v (set --kubeconfig or --context)", err)
	}
	cfg = rest.CopyConfig(cfg)
	cfg.Timeout = 30 * time.Second
	if warnings != nil {
		cfg.WarningHandler = warnings
	}
	ns := k.Namespace
	if ns == "" {
		if ns, _, err = cc.Namespace(); err != nil || ns == "" {
			ns = metav1.NamespaceDefault
		}
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme.Scheme})
	if err != nil {
		return nil, "", Usage("failed to create a client for %s: %v", cfg.Host, err)
	}
	return c, ns, nil
}
