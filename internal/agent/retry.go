package agent

import (
	"context"
	"math/rand/v2"
	"time"
)

// RetryPolicy is the one retry policy for model requests: the SDKs' own
// retries are off so attempts never multiply.
type RetryPolicy struct {
	MaxAttempts int           // total attempts; 0 = 10
	Base        time.Duration // first delay; 0 = 500ms
	Max         time.Duration // cap; 0 = 32s
	// Sleep waits for d or until ctx ends; tests replace it.
	Sleep func(ctx context.Context, d time.Duration) error
}

func (p RetryPolicy) withDefaults() RetryPolicy {
	if p.MaxAttempts <= 0 {
		p.MaxAttempts = 10
	}
	if p.Base <= 0 {
		p.Base = 500 * time.Millisecond
	}
	if p.Max <= 0 {
		p.Max = 32 * time.Second
	}
	if p.Sleep == nil {
		p.Sleep = sleepCtx
	}
	return p
}

// Delay is the wait before retry number n (1-based): Base doubling, capped
// at Max, plus up to 25% jitter; a server's retry-after wins when longer.
func (p RetryPolicy) Delay(n int, retryAfter time.Duration) time.Duration {
	d := p.Base
	for i := 1; i < n && d < p.Max; i++ {
		d *= 2
	}
	d = min(d, p.Max)
	d += time.Duration(rand.Int64N(int64(d)/4 + 1))
	return max(d, retryAfter)
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
