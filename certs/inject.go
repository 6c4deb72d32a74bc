package certs

import (
	"bytes"
	"context"
	"crypto/x509"
	"fmt"
	"time"

	"github.com/go-logr/logr"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/almanac-dev/almanac/api/index"
)

// caKey is the key of the CA certificate in the CA Secret (cert-manager's layout: ca.crt,
// tls.crt and tls.key, where ca.crt equals tls.crt).
const caKey = "ca.crt"

// injector writes the CA bundle into almanac's webhook configurations. Only the leader runs
// it, so two replicas never race each other's writes; the others only read the bundle.
type injector struct {
	client kubernetes.Interface
	secret *namedInformer
	trust  *trustWatcher
	clock  clock.Clock
	// grace is how long a replaced CA stays in the bundle: the leaf lifetime plus a margin
	// for clock skew.
	grace time.Duration
	log   logr.Logger
}

// NeedLeaderElection is true: one writer.
func (i *injector) NeedLeaderElection() bool { return true }

const injectKey = "ca-bundle"

// Start follows the CA Secret and the webhook configurations and keeps the bundle in sync
// until ctx ends.
func (i *injector) Start(ctx context.Context) error {
	queue := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[string]())
	defer queue.ShutDown()
	enqueue := cache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { queue.Add(injectKey) },
		UpdateFunc: func(any, any) { queue.Add(injectKey) },
		DeleteFunc: func(any) { queue.Add(injectKey) },
	}
	informers := append([]*namedInformer{i.secret}, i.trust.informers()...)
	for _, n := range informers {
		reg, err := n.informer.AddEventHandler(enqueue)
		if err != nil {
			return fmt.Errorf("failed to watch %s: %w", n.name, err)
		}
		defer func() { _ = n.informer.RemoveEventHandler(reg) }()
	}
	go i.secret.informer.RunWithContext(ctx)
	if !cache.WaitForCacheSync(ctx.Done(), i.secret.informer.HasSynced) || !i.trust.waitSynced(ctx) {
		return nil // ctx ended
	}
	queue.Add(injectKey)
	go func() {
		for {
			key, shutdown := queue.Get()
			if shutdown {
				return
			}
			after, err := i.sync(ctx)
			switch {
			case err != nil:
				i.log.Error(err, "Failed to write the CA bundle into the webhook configurations; retrying")
				queue.AddRateLimited(key)
			case after > 0:
				queue.Forget(key)
				queue.AddAfter(key, after)
			default:
				queue.Forget(key)
			}
			queue.Done(key)
		}
	}()
	<-ctx.Done()
	return nil
}

// sync makes every webhook's caBundle the desired bundle and returns when the bundle next
// changes by itself (an old CA falling out), or 0.
func (i *injector) sync(ctx context.Context) (time.Duration, error) {
	obj, err := i.secret.get()
	if err != nil {
		return 0, err
	}
	if obj == nil {
		i.log.V(1).Info("Waiting for the CA Secret", "Secret", klog.KRef(i.secret.namespace, i.secret.name))
		return 0, nil
	}
	cas := parseBundle(obj.(*corev1.Secret).Data[caKey])
	if len(cas) == 0 {
		// The authority fills an empty or damaged Secret; its update brings us back.
		return 0, nil
	}
	var mutating *admissionregistrationv1.MutatingWebhookConfiguration
	var validating *admissionregistrationv1.ValidatingWebhookConfiguration
	var existing []*x509.Certificate
	if i.trust.mutating != nil {
		if o, err := i.trust.mutating.get(); err != nil {
			return 0, err
		} else if o != nil {
			mutating = o.(*admissionregistrationv1.MutatingWebhookConfiguration)
			for _, w := range mutating.Webhooks {
				existing = append(existing, parseBundle(w.ClientConfig.CABundle)...)
			}
		}
	}
	if i.trust.validating != nil {
		if o, err := i.trust.validating.get(); err != nil {
			return 0, err
		} else if o != nil {
			validating = o.(*admissionregistrationv1.ValidatingWebhookConfiguration)
			for _, w := range validating.Webhooks {
				existing = append(existing, parseBundle(w.ClientConfig.CABundle)...)
			}
		}
	}
	now := i.clock.Now()
	desired, next := desiredBundle(cas[0], existing, now, i.grace)
	bundle := encodeBundle(desired)

	if mutating != nil && needsBundle(bundle, len(mutating.Webhooks), func(k int) []byte { return mutating.Webhooks[k].ClientConfig.CABundle }) {
		c := mutating.DeepCopy()
		for k := range c.Webhooks {
			c.Webhooks[k].ClientConfig.CABundle = bundle
		}
		if _, err := i.client.AdmissionregistrationV1().MutatingWebhookConfigurations().Update(ctx, c, metav1.UpdateOptions{FieldManager: index.FieldManager}); err != nil {
			return 0, fmt.Errorf("failed to update MutatingWebhookConfiguration %s: %w", c.Name, err)
		}
		i.log.Info("Wrote the CA bundle", "MutatingWebhookConfiguration", klog.KObj(c), "cas", len(desired))
	}
	if validating != nil && needsBundle(bundle, len(validating.Webhooks), func(k int) []byte { return validating.Webhooks[k].ClientConfig.CABundle }) {
		c := validating.DeepCopy()
		for k := range c.Webhooks {
			c.Webhooks[k].ClientConfig.CABundle = bundle
		}
		if _, err := i.client.AdmissionregistrationV1().ValidatingWebhookConfigurations().Update(ctx, c, metav1.UpdateOptions{FieldManager: index.FieldManager}); err != nil {
			return 0, fmt.Errorf("failed to update ValidatingWebhookConfiguration %s: %w", c.Name, err)
		}
		i.log.Info("Wrote the CA bundle", "ValidatingWebhookConfiguration", klog.KObj(c), "cas", len(desired))
	}
	if next.IsZero() {
		return 0, nil
	}
	return next.Sub(now) + time.Second, nil
}

func needsBundle(bundle []byte, n int, get func(int) []byte) bool {
	for k := range n {
		if !bytes.Equal(get(k), bundle) {
			return true
		}
	}
	return false
}
