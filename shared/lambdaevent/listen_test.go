package lambdaevent_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
)

// TestGatewayAnswersSubscriptionsListen: a 2026-07-28 client (Claude Code)
// opens subscriptions/listen; the stateless gateway has nothing to stream,
// so it must answer at once (acknowledge an empty filter, then complete)
// instead of holding the Lambda instance until its timeout.
func TestGatewayAnswersSubscriptionsListen(t *testing.T) {
	gw := gatewayFunction(t)

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second) // the gateway's Lambda timeout
	defer cancel()
	type answer struct {
		out any
		err error
	}
	event := fixture(t, "mcp-subscriptions-listen.json")
	done := make(chan answer, 1)
	start := time.Now()
	go func() {
		out, err := gw(ctx, event)
		done <- answer{out, err}
	}()
	var got answer
	select {
	case got = <-done:
	case <-time.After(time.Second):
		t.Fatal("subscriptions/listen: no answer within 1 s")
	}
	if got.err != nil {
		t.Fatal(got.err)
	}
	t.Logf("answered in %v", time.Since(start))
	resp, ok := got.out.(events.APIGatewayV2HTTPResponse)
	if !ok {
		t.Fatalf("got %T, want an API Gateway response", got.out)
	}
	if resp.StatusCode != 200 || resp.Headers["Content-Type"] != "text/event-stream" {
		t.Fatalf("got %d %v\n%s", resp.StatusCode, resp.Headers, resp.Body)
	}

	msgs := sseMessages(t, resp.Body)
	if len(msgs) != 2 {
		t.Fatalf("got %d messages, want the acknowledgement and the result:\n%s", len(msgs), resp.Body)
	}
	var ack struct {
		Method string
		Params struct {
			Meta          map[string]any `json:"_meta"`
			Notifications map[string]any
		}
	}
	if err := json.Unmarshal(msgs[0], &ack); err != nil {
		t.Fatal(err)
	}
	if ack.Method != "notifications/subscriptions/acknowledged" || len(ack.Params.Notifications) != 0 ||
		ack.Params.Meta["io.modelcontextprotocol/subscriptionId"] != 7.0 {
		t.Errorf("acknowledgement %s: want an empty filter for subscription 7", msgs[0])
	}
	var result struct {
		ID     int
		Result struct {
			ResultType string
			Meta       map[string]any `json:"_meta"`
		}
		Error any
	}
	if err := json.Unmarshal(msgs[1], &result); err != nil {
		t.Fatal(err)
	}
	if result.ID != 7 || result.Error != nil || result.Result.ResultType != "complete" ||
		result.Result.Meta["io.modelcontextprotocol/subscriptionId"] != 7.0 {
		t.Errorf("final message %s: want the completed result of request 7", msgs[1])
	}
}

// sseMessages returns the data of each event in an SSE body.
func sseMessages(t *testing.T, body string) [][]byte {
	t.Helper()
	var msgs [][]byte
	for _, event := range strings.Split(strings.TrimSpace(body), "\n\n") {
		for _, line := range strings.Split(event, "\n") {
			if data, ok := strings.CutPrefix(line, "data: "); ok {
				msgs = append(msgs, []byte(data))
			}
		}
	}
	return msgs
}
