package bench_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// requests counts the API server's requests by "VERB resource[/subresource] code", from its
// own counter (apiserver_request_total): what a figure cost the API server, write by write,
// whoever made it.
type requests map[string]float64

// settle is how long a burst starts after the harness last read the API server's counters
// (apiRequests): a read makes the API server write out every metric it has, tens of
// milliseconds of its CPU and as much garbage to collect, which must not fall on the burst
// that the read is taken for.
const settle = 300 * time.Millisecond

// metricsClient reads the API server's metrics: one client for the whole run (a new one
// would open a new TLS connection at every read), asking for the text uncompressed (gzip
// took more of the API server's CPU than writing the text).
var metricsClient = sync.OnceValues(func() (rest.Interface, error) {
	cfg := harnessConfig()
	cfg.DisableCompression = true
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	return cs.Discovery().RESTClient(), nil
})

// apiRequests reads the API server's request counters.
func apiRequests() (requests, error) {
	c, err := metricsClient()
	if err != nil {
		return nil, err
	}
	raw, err := c.Get().AbsPath("/metrics").DoRaw(context.Background())
	if err != nil {
		return nil, fmt.Errorf("failed to read the API server's metrics: %w", err)
	}
	out := requests{}
	sc := bufio.NewScanner(bytes.NewReader(raw))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		rest, ok := strings.CutPrefix(line, "apiserver_request_total{")
		if !ok {
			continue
		}
		labels, value, ok := strings.Cut(rest, "} ")
		if !ok {
			continue
		}
		v, err := strconv.ParseFloat(value, 64)
		if err != nil {
			continue
		}
		l := parseLabels(labels)
		resource := l["resource"]
		if resource == "" {
			continue // not an object's: /metrics, /healthz, discovery
		}
		if l["subresource"] != "" {
			resource += "/" + l["subresource"]
		}
		out[l["verb"]+" "+resource+" "+l["code"]] += v
	}
	return out, sc.Err()
}

// parseLabels parses a="x",b="y" (values without commas or quotes, as these counters have).
func parseLabels(s string) map[string]string {
	out := map[string]string{}
	for _, kv := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(kv, "=")
		if ok {
			out[k] = strings.Trim(v, `"`)
		}
	}
	return out
}

// since returns the requests counted after before, watches left out (they are counted when
// they start, and last).
func (r requests) since(before requests) requests {
	out := requests{}
	for k, v := range r {
		if verb, _, _ := strings.Cut(k, " "); verb == "WATCH" {
			continue
		}
		if d := v - before[k]; d > 0 {
			out[k] = d
		}
	}
	return out
}

// add adds o's counts to r.
func (r requests) add(o requests) {
	for k, v := range o {
		r[k] += v
	}
}

// total is the sum of the counts.
func (r requests) total() int {
	var n float64
	for _, v := range r {
		n += v
	}
	return int(n)
}

// String lists the counts, largest first: "PATCH schedules/status 200 50000, …".
func (r requests) String() string {
	keys := slices.Collect(maps.Keys(r))
	slices.SortFunc(keys, func(a, b string) int {
		if r[a] != r[b] {
			if r[a] > r[b] {
				return -1
			}
			return 1
		}
		return strings.Compare(a, b)
	})
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s %d", k, int(r[k])))
	}
	return strings.Join(parts, ", ")
}
