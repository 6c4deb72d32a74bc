package webhooks

import (
	"github.com/go-logr/logr"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
)

// requestLogger is the webhooks' admission.Webhook.LogConstructor. A request's logger names
// the request with the values controller-runtime's DefaultLogConstructor gives it (object,
// namespace, name, resource, user, requestID), but adds them only when a message is written.
// The default adds them to every request's logger up front, which the manager's zap logger
// encodes at once; controller-runtime writes a request's messages at V(5) or on errors, so
// almost never, and the eager values were 5% of the manager's CPU while it admitted creates.
func requestLogger(base logr.Logger, req *admission.Request) logr.Logger {
	if req == nil || base.GetSink() == nil {
		return base
	}
	// Not logr.New: it would Init the base's sink again.
	return base.WithSink(&requestSink{LogSink: base.GetSink(), req: req})
}

// requestSink is a LogSink that adds the values naming req to what it writes.
type requestSink struct {
	logr.LogSink
	req *admission.Request
	// depth is the call depth to add, from WithCallDepth.
	depth int
}

// named returns the sink that writes for s: the underlying sink with req's values, one call
// deeper (requestSink's own Info or Error) when the sink tracks call depth.
func (s *requestSink) named() logr.LogSink {
	sink := s.LogSink.WithValues("object", klog.KRef(s.req.Namespace, s.req.Name),
		"namespace", s.req.Namespace, "name", s.req.Name,
		"resource", s.req.Resource, "user", s.req.UserInfo.Username,
		"requestID", s.req.UID)
	if cd, ok := sink.(logr.CallDepthLogSink); ok {
		sink = cd.WithCallDepth(s.depth + 1)
	}
	return sink
}

// Init does nothing: the underlying sink is initialized already.
func (s *requestSink) Init(logr.RuntimeInfo) {}

func (s *requestSink) Info(level int, msg string, keysAndValues ...any) {
	s.named().Info(level, msg, keysAndValues...)
}

func (s *requestSink) Error(err error, msg string, keysAndValues ...any) {
	s.named().Error(err, msg, keysAndValues...)
}

func (s *requestSink) WithValues(keysAndValues ...any) logr.LogSink {
	return &requestSink{LogSink: s.LogSink.WithValues(keysAndValues...), req: s.req, depth: s.depth}
}

func (s *requestSink) WithName(name string) logr.LogSink {
	return &requestSink{LogSink: s.LogSink.WithName(name), req: s.req, depth: s.depth}
}

func (s *requestSink) WithCallDepth(depth int) logr.LogSink {
	return &requestSink{LogSink: s.LogSink, req: s.req, depth: s.depth + depth}
}

var _ logr.CallDepthLogSink = (*requestSink)(nil)
