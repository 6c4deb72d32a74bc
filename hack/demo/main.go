package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

func main() {
	opts := options{}
	flag.StringVar(&opts.root, "root", ".", "The almanac checkout (it needs config/, examples/ and hack/envtest.sh).")
	flag.StringVar(&opts.almanac, "almanac", "", "The almanac binary that runs the manager (default: ROOT/bin/almanac).")
	flag.StringVar(&opts.dir, "dir", "", "Folder for the kubeconfig, the manager's log and the control plane's data (default: a new temporary folder).")
	flag.BoolVar(&opts.keep, "keep", false, "Keep --dir on exit.")
	flag.DurationVar(&opts.lead, "lead", time.Minute, "How far ahead the first generated window opens.")
	flag.DurationVar(&opts.interval, "interval", 2*time.Second, "How often the live state is refreshed.")
	flag.Usage = func() {
		fmt.Fprint(flag.CommandLine.Output(), `Usage: make demo  (or: go run ./hack/demo [flags])

Start a local kube-apiserver and etcd (built on first use by hack/envtest.sh), install
almanac's CRDs and webhook configurations, run bin/almanac manager with self-managed
certificates, apply examples/ plus Schedules and ScheduledJobs that open within the next
minutes, write a kubeconfig, and show the live state until Ctrl-C (or SIGTERM, SIGHUP, or the
end of whatever reads its output), which stops and removes everything.

There is no kube-controller-manager: Deployments get no Pods and Jobs never run, but
everything almanac does (HPA bounds, status, Jobs created) is visible.

Flags:
`)
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() > 0 {
		flag.Usage()
		os.Exit(2)
	}

	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	hurry := make(chan struct{})
	out := &stopOnError{w: os.Stdout, stop: stop}
	handleSignals(stop, hurry, out)
	go watchReader(ctx, os.Stdout, stop)

	if err := run(ctx, opts, out, hurry); err != nil && ctx.Err() == nil {
		fmt.Fprintln(os.Stderr, "Error:", err)
		os.Exit(1)
	}
}

// handleSignals turns SIGINT, SIGTERM and SIGHUP into an orderly stop (the demo then stops
// the manager and the control plane and removes its folder); a second one hurries that stop
// along (processes are killed rather than waited for). SIGPIPE — whatever read our output
// went away, as when `make demo | tee log` is interrupted — stops the demo too, instead of
// killing it halfway through its clean-up.
func handleSignals(stop context.CancelFunc, hurry chan struct{}, out *stopOnError) {
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGPIPE)
	go func() {
		asked := 0
		for s := range sigs {
			if s == syscall.SIGPIPE {
				out.silence()
				stop()
				continue
			}
			asked++
			stop()
			if asked == 2 {
				_, _ = fmt.Fprintln(out, "» Stopping faster (asked twice)")
				close(hurry)
			}
		}
	}()
}

// stopOnError writes to w until a write fails (the terminal or pipe is gone); from then on
// it stops the demo and discards what is written, so that the clean-up still runs in full.
type stopOnError struct {
	mu     sync.Mutex
	w      io.Writer
	failed bool
	stop   context.CancelFunc
}

func (s *stopOnError) Write(b []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.failed {
		return len(b), nil
	}
	if _, err := s.w.Write(b); err != nil {
		s.failed = true
		s.stop()
	}
	return len(b), nil
}

func (s *stopOnError) silence() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failed = true
}

// watchReader stops the demo when f is a pipe whose reader has gone (`make demo | head`, or
// `| tee` killed), even while the demo has nothing to print: the kernel reports POLLERR on
// the write end of a pipe without readers.
func watchReader(ctx context.Context, f *os.File, stop context.CancelFunc) {
	info, err := f.Stat()
	if err != nil || info.Mode()&os.ModeNamedPipe == 0 {
		return
	}
	fd := int(f.Fd())
	for ctx.Err() == nil {
		fds := []unix.PollFd{{Fd: int32(fd)}}
		n, err := unix.Poll(fds, 500)
		if err != nil && !errors.Is(err, unix.EINTR) {
			return
		}
		if n > 0 && fds[0].Revents&(unix.POLLERR|unix.POLLHUP) != 0 {
			stop()
			return
		}
		if n == 0 {
			continue
		}
		time.Sleep(500 * time.Millisecond)
	}
}
