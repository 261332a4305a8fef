package embedding

import (
	"context"
	"math"
	"sync"
	"time"
	"unicode/utf8"
)

// Pace is how fast one process may call the provider: its share of the
// account's quota, in requests and tokens per minute (0: no bound).
type Pace struct {
	RequestsPerMinute float64
	TokensPerMinute   float64
}

// pacer holds a process's requests within its Pace: each request waits
// until both per-minute budgets have room. A request's tokens are
// estimated before it is sent (the provider counts them) and the estimate
// corrected by the count the answer gives, so the budget follows what the
// provider charges. The budgets hold a second's worth, so processes
// started together do not burst past the account's quota.
type pacer struct {
	mu     sync.Mutex
	now    func() time.Time
	reqs   budget
	tokens budget
}

// budget is one per-minute allowance, refilled continuously.
type budget struct {
	perSecond, level, most float64
	filled                 time.Time
}

func newPacer(p Pace, now func() time.Time) *pacer {
	t := now()
	mk := func(perMinute float64) budget {
		return budget{perSecond: perMinute / 60, level: perMinute / 60, most: perMinute / 60, filled: t}
	}
	return &pacer{now: now, reqs: mk(p.RequestsPerMinute), tokens: mk(p.TokensPerMinute)}
}

// fill adds what the time since the last fill allows.
func (b *budget) fill(now time.Time) {
	if b.perSecond > 0 {
		b.level = min(b.level+now.Sub(b.filled).Seconds()*b.perSecond, b.most)
	}
	b.filled = now
}

// wait is how long until the budget holds n, or all it can hold when n
// is more (0: now).
func (b *budget) wait(n float64) time.Duration {
	need := min(n, b.most)
	if b.perSecond <= 0 || b.level >= need {
		return 0
	}
	return time.Duration((need - b.level) / b.perSecond * float64(time.Second))
}

// take waits until a request of about tokens tokens may be sent, then
// charges it; it fails only when ctx ends first.
func (p *pacer) take(ctx context.Context, tokens int) error {
	for {
		p.mu.Lock()
		now := p.now()
		p.reqs.fill(now)
		p.tokens.fill(now)
		wait := max(p.reqs.wait(1), p.tokens.wait(float64(tokens)))
		if wait == 0 {
			// A text of more tokens than a second's worth takes the
			// budget into debt; the next requests wait it out.
			p.reqs.level--
			p.tokens.level -= float64(tokens)
			p.mu.Unlock()
			return nil
		}
		p.mu.Unlock()
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		}
	}
}

// settle corrects a request's charge from its estimate to what the
// provider counted (counted 0: it was not charged, as a refusal is not).
func (p *pacer) settle(estimated, counted int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.tokens.level += float64(estimated - counted)
}

// estimateTokens guesses a text's tokens before the provider counts
// them: AWS documents an average of 4.7 characters per token for English
// text in Titan V2; code runs shorter, so the guess rounds up generously
// and the answer's count corrects it.
func estimateTokens(text string) int {
	return max(1, int(math.Ceil(float64(utf8.RuneCountInString(text))/4)))
}
