package lambdatest

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/toolshed/toolshed/shared/testenv/emulator"
)

// TestPool: invocations in flight together get environments of their
// own, up to the pool's size; an environment killed mid-invocation fails
// that invocation and is replaced by a new one for the next.
func TestPool(t *testing.T) {
	p := NewPool(Config{Name: "echo", Bootstrap: echoBootstrap, Timeout: 5 * time.Second}, 2)
	t.Cleanup(p.Stop)
	ctx := context.Background()
	var wg sync.WaitGroup
	for range 2 {
		wg.Go(func() {
			if resp, err := p.Invoke(ctx, []byte(`{"sleepMs":300}`)); err != nil || resp.FunctionError != "" {
				t.Errorf("sleep: %v %+v", err, resp)
			}
		})
	}
	wg.Wait()
	if p.Started() != 2 || len(p.Running()) != 2 {
		t.Fatalf("two invocations at once: %d environments started, %d running", p.Started(), len(p.Running()))
	}
	// An environment killed mid-invocation, as by the kernel.
	one := NewPool(Config{Name: "echo", Bootstrap: echoBootstrap, Timeout: 5 * time.Second}, 1)
	t.Cleanup(one.Stop)
	done := make(chan Response, 1)
	go func() {
		resp, _ := one.Invoke(ctx, []byte(`{"sleepMs":2000}`))
		done <- resp
	}()
	for len(one.Running()) == 0 {
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(200 * time.Millisecond)
	one.Running()[0].Kill()
	if resp := <-done; resp.ErrorType != ErrorExit {
		t.Errorf("an invocation whose environment was killed: %+v", resp)
	}
	for range 2 {
		if resp, err := one.Invoke(ctx, []byte(`{"echo":1}`)); err != nil || string(resp.Payload) != "1" {
			t.Errorf("after the kill: %v %s", err, resp.Payload)
		}
	}
	if one.Started() != 2 || len(one.Running()) != 1 {
		t.Errorf("after the kill: %d environments started, %d running; want the killed one replaced", one.Started(), len(one.Running()))
	}
	// An idle environment that died is replaced too.
	p.Running()[0].Kill()
	for range 3 {
		if resp, err := p.Invoke(ctx, []byte(`{"echo":2}`)); err != nil || string(resp.Payload) != "2" {
			t.Errorf("after an idle environment died: %v %s", err, resp.Payload)
		}
	}
	if p.PeakRSS() <= 0 {
		t.Error("no peak RSS")
	}
}

// TestSQSSource: messages become events; those that succeed are deleted,
// a failed record (batchItemFailures) or a crashed invocation is received
// again after the visibility timeout and ends in the dead-letter queue.
func TestSQSSource(t *testing.T) {
	m := emulator.StartMoto(t)
	q := m.NewQueue(t, time.Second, 2)
	client := m.SQS()
	ctx := context.Background()
	p := NewPool(Config{Name: "echo", Bootstrap: echoBootstrap, Timeout: 5 * time.Second}, 2)
	t.Cleanup(p.Stop)
	src := StartSQS(SQSConfig{Client: client, QueueURL: q.URL, QueueArn: q.Arn, BatchSize: 1, Concurrency: 2, Target: p})
	t.Cleanup(src.Stop)
	for _, body := range []string{"ok1", "fail", "ok2", "crash"} {
		if _, err := client.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: aws.String(q.URL), MessageBody: aws.String(body)}); err != nil {
			t.Fatal(err)
		}
	}
	var dead []string
	deadline := time.Now().Add(15 * time.Second)
	for len(dead) < 2 && time.Now().Before(deadline) {
		out, err := client.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(q.DeadLetterURL), MaxNumberOfMessages: 10, WaitTimeSeconds: 1})
		if err != nil {
			t.Fatal(err)
		}
		for _, msg := range out.Messages {
			dead = append(dead, aws.ToString(msg.Body))
		}
	}
	slices.Sort(dead)
	if got := strings.Join(dead, ","); got != "crash,fail" {
		t.Errorf("dead letters %q, want crash and fail", got)
	}
	if src.Deleted.Load() != 2 || src.Failed.Load() != 2 {
		t.Errorf("%d deleted, %d invocations failed; want ok1 and ok2 deleted, crash failed twice", src.Deleted.Load(), src.Failed.Load())
	}
}

// TestVCPU: after its init, a function gets the CPU share it is given.
func TestVCPU(t *testing.T) {
	fn, err := Start(Config{Name: "echo", Bootstrap: echoBootstrap, Timeout: 10 * time.Second, VCPU: 0.25})
	if err != nil {
		if strings.Contains(err.Error(), "cgroup") {
			t.Skip(err)
		}
		t.Fatal(err)
	}
	t.Cleanup(fn.Stop)
	if _, err := fn.InitDuration(context.Background()); err != nil {
		t.Fatal(err)
	}
	time.Sleep(50 * time.Millisecond) // the process is moved into its group
	resp := invoke(t, fn, `{"spinMs":200}`)
	var out struct{ WallMs int64 }
	if err := json.Unmarshal(resp.Payload, &out); err != nil || out.WallMs < 600 {
		t.Errorf("200 ms of CPU at a quarter of a CPU took %d ms of wall time (%v)", out.WallMs, err)
	}
}
