package secretscan_test

import (
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/toolshed/toolshed/shared/pathmatch"
	"github.com/toolshed/toolshed/shared/secretscan"
	"github.com/toolshed/toolshed/shared/testenv/fakesecret"
)

// random returns n characters of chars, the same for the same seed: the
// bodies of fake credentials (built here, so that no source file of this
// repository holds one).
func random(seed uint64, chars string, n int) string {
	r := rand.New(rand.NewPCG(seed, seed))
	b := make([]byte, n)
	for i := range b {
		b[i] = chars[r.IntN(len(chars))]
	}
	return string(b)
}

const (
	upper  = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
	lower  = "abcdefghijklmnopqrstuvwxyz"
	digits = "0123456789"
	alnum  = upper + lower + digits
)

// tokens are one fake credential of each token rule.
var tokens = map[string]string{
	"aws-access-token":        "AK" + "IA" + random(1, upper+"234567", 16),
	"github-token":            "gh" + "p_" + random(2, alnum, 36),
	"github-fine-grained-pat": "github" + "_pat_" + random(3, alnum+"_", 82),
	"gitlab-pat":              "gl" + "pat-" + random(4, alnum+"_-", 20),
	"slack-token":             "xo" + "xb-" + random(5, digits, 12) + "-" + random(6, digits, 12) + "-" + random(7, alnum, 24),
	"stripe-access-token":     "sk" + "_live_" + random(8, alnum, 24),
	"gcp-api-key":             "AI" + "za" + random(9, alnum+"_-", 35),
	"npm-access-token":        "np" + "m_" + random(10, lower+digits, 36),
	"anthropic-api-key":       "sk-" + "ant-api03-" + random(11, alnum+"_-", 93) + "AA",
}

// block is a private key block of label with body lines of 64 base64
// characters, lines joined by sep.
func block(label, body, sep string) string {
	var lines []string
	for len(body) > 64 {
		lines = append(lines, body[:64])
		body = body[64:]
	}
	lines = append(lines, body)
	return "-----BEGIN " + label + "-----" + sep + strings.Join(lines, sep) + sep + "-----END " + label + "-----"
}

var keyBody = random(12, alnum+"+/", 300) + "=="

func TestFind(t *testing.T) {
	tests := []struct {
		name, text, want string
	}{
		{"an Ed25519 key in a PEM file", fakesecret.PrivateKey() + "\n", "private-key"},
		{"PKCS #8", block("PRIVATE KEY", keyBody, "\n"), "private-key"},
		{"OpenSSH", block("OPENSSH PRIVATE KEY", keyBody, "\n"), "private-key"},
		{"Ed25519 in PKCS #8: 64 characters", block("PRIVATE KEY", random(13, alnum, 64), "\n"), "private-key"},
		{"CRLF lines", block("EC PRIVATE KEY", keyBody, "\r\n"), "private-key"},
		{"encrypted PEM with armor headers", strings.Replace(block("RSA PRIVATE KEY", keyBody, "\n"), "-----\n", "-----\nProc-Type: 4,ENCRYPTED\nDEK-Info: AES-128-CBC,0123456789ABCDEF\n\n", 1), "private-key"},
		{"PGP with a checksum", strings.Replace(block("PGP PRIVATE KEY BLOCK", keyBody, "\n"), "\n-----END", "\n=a1B2\n-----END", 1), "private-key"},
		{"in a Go raw string", "var key = []byte(`" + block("EC PRIVATE KEY", keyBody, "\n") + "`)\n", "private-key"},
		{"in an indented Go raw string", "\tkey := `" + block("RSA PRIVATE KEY", keyBody, "\n\t\t") + "`\n", "private-key"},
		{"in concatenated Go strings", "const key = \"" + block("RSA PRIVATE KEY", keyBody, "\\n\" +\n\t\"") + "\\n\"\n", "private-key"},
		{"with escaped line breaks", `{"key": "` + block("PRIVATE KEY", keyBody, `\n`) + `\n"}`, "private-key"},
		{"a service-account key", `{"type": "service_account", "project_id": "p", "private_key_id": "0a1b",` + "\n" +
			`  "private_key": "` + block("PRIVATE KEY", keyBody, `\n`) + `\n", "client_email": "x@p.iam.gserviceaccount.com"}`, "gcp-service-account"},
		{"after ordinary code", "package p\n\nfunc F() {}\n\n// the key\nvar k = `" + block("PRIVATE KEY", keyBody, "\n") + "`\n", "private-key"},

		{"a header in a string constant", "const h = \"-----BEGIN RSA PRIVATE KEY-----\"\n", ""},
		{"header and footer in strings", "if s == \"-----BEGIN RSA PRIVATE KEY-----\" || s == \"-----END RSA PRIVATE KEY-----\" {\n", ""},
		{"a comment naming the type", "// This kind of key is commonly encoded in PEM blocks of type \"RSA PRIVATE KEY\".\n", ""},
		{"an elided example", "-----BEGIN OPENSSH PRIVATE KEY-----\n...\n-----END OPENSSH PRIVATE KEY-----\n", ""},
		{"an elided example in one line", "-----BEGIN RSA PRIVATE KEY-----MIIE...-----END RSA PRIVATE KEY-----", ""},
		{"prose between the markers", "-----BEGIN PRIVATE KEY-----\nyour key goes here and is kept out of the repository entirely ok\n-----END PRIVATE KEY-----\n", ""},
		{"a short body", block("PRIVATE KEY", random(14, alnum, 63), "\n"), ""},
		{"another footer", strings.Replace(block("RSA PRIVATE KEY", keyBody, "\n"), "END RSA", "END EC", 1), ""},
		{"no footer", strings.TrimSuffix(block("RSA PRIVATE KEY", keyBody, "\n"), "-----END RSA PRIVATE KEY-----"), ""},
		{"Go's testing keys", block("RSA TESTING KEY", keyBody, "\n"), ""},
		{"a public key", block("PUBLIC KEY", keyBody, "\n"), ""},
		{"a certificate", block("CERTIFICATE", keyBody, "\n"), ""},
		{"text on the header's line", "-----BEGIN RSA PRIVATE KEY----- " + keyBody + "\n-----END RSA PRIVATE KEY-----", ""},
		{"AWS's documentation key", "aws_access_key_id = AKIA" + "IOSFODNN7EXAMPLE\n", ""},
		{"a low-entropy AWS-like name", "AKIA" + "AAAAAAAAAAAAAAAA", ""},
		{"an AWS-like run inside a word", "x" + tokens["aws-access-token"], ""},
		{"an AWS-like run too long", tokens["aws-access-token"] + "A", ""},
		{"a GitHub-like name too short", tokens["github-token"][:39], ""},
		{"a Stripe test key", "sk" + "_test_" + random(15, alnum, 24), ""},
		{"a Slack-like word", "xoxb-" + "builder-configuration-values", ""},
		{"a placeholder token", "gh" + "p_PersonalAccessToken01245678900000000", ""},
	}
	for rule, tok := range tokens {
		tests = append(tests, struct{ name, text, want string }{rule, "key = \"" + tok + "\"\n", rule})
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := ""
			if r := secretscan.Find([]byte(tt.text)); r != nil {
				got = r.ID
			}
			if got != tt.want {
				t.Errorf("Find(%q) = %q, want %q", tt.text, got, tt.want)
			}
		})
	}
}

// TestFindTheFirst: of several secrets, the one that starts first is
// found.
func TestFindTheFirst(t *testing.T) {
	text := "a\n" + tokens["gcp-api-key"] + "\n" + block("PRIVATE KEY", keyBody, "\n") + "\n" + tokens["aws-access-token"] + "\n"
	if r := secretscan.Find([]byte(text)); r == nil || r.ID != "gcp-api-key" {
		t.Errorf("Find = %v, want gcp-api-key", r)
	}
}

// readers are the ways a test reads a stream: whole, a byte at a time,
// in halves, and with the last read returning EOF with data.
var readers = map[string]func(io.Reader) io.Reader{
	"whole":    func(r io.Reader) io.Reader { return r },
	"one byte": iotest.OneByteReader,
	"halves":   iotest.HalfReader,
	"data+EOF": iotest.DataErrReader,
}

// TestReader: a Reader passes on a stream exactly when Find finds nothing
// in it, and stops before the secret when it does, wherever it lies
// (across reads, and far past what the Reader holds back).
func TestReader(t *testing.T) {
	filler := strings.Repeat("func f() { return x_y - z }\n", 4000) // 112 KB: more than the Reader holds back
	secrets := []string{block("RSA PRIVATE KEY", keyBody, "\n")}
	for _, tok := range tokens {
		secrets = append(secrets, tok)
	}
	for name, wrap := range readers {
		for _, secret := range secrets {
			for _, at := range []int{0, 1, 31 << 10, len(filler)} {
				data := []byte(filler[:at] + "\n" + secret + "\n" + filler[at:])
				got, err := io.ReadAll(secretscan.NewReader(wrap(bytes.NewReader(data))))
				var found *secretscan.Found
				if !errors.As(err, &found) || found.Rule.ID != secretscan.Find(data).ID {
					t.Fatalf("%s, secret at %d: error %v, want the rule of %.20q", name, at, err, secret)
				}
				if len(got) > at+1 || !bytes.HasPrefix(data, got) {
					t.Errorf("%s, secret at %d: passed on %d bytes", name, at, len(got))
				}
			}
		}
		data := []byte(filler + "-----BEGIN RSA PRIVATE KEY-----\n" + filler)
		if got, err := io.ReadAll(secretscan.NewReader(wrap(bytes.NewReader(data)))); err != nil || !bytes.Equal(got, data) {
			t.Errorf("%s: a clean stream: %d bytes, %v", name, len(got), err)
		}
	}
}

// TestReaderStopsAtAnError: after a failed read, nothing the Reader has
// not checked with all it needs is passed on.
func TestReaderStopsAtAnError(t *testing.T) {
	data := []byte(strings.Repeat("x", 100) + "-----BEGIN RSA PRIVATE KEY-----\n" + keyBody)
	got, err := io.ReadAll(secretscan.NewReader(iotest.TimeoutReader(bytes.NewReader(data))))
	if !errors.Is(err, iotest.ErrTimeout) || len(got) != 0 {
		t.Errorf("got %d bytes, %v; want none and the timeout", len(got), err)
	}
}

// FuzzReader: whatever the stream and however it is read, the Reader
// passes it on whole exactly when Find finds nothing, and otherwise fails
// with Find's rule having passed on a prefix.
func FuzzReader(f *testing.F) {
	f.Add([]byte(block("RSA PRIVATE KEY", keyBody, "\n")), uint8(3))
	f.Add([]byte("x := `"+block("OPENSSH PRIVATE KEY", keyBody, "\n")+"`"), uint8(1))
	f.Add([]byte(`"private_key": "`+block("PRIVATE KEY", keyBody, `\n`)+`"`), uint8(7))
	f.Add([]byte("-----BEGIN PRIVATE KEY-----\n...\n-----END PRIVATE KEY-----"), uint8(2))
	for _, tok := range tokens {
		f.Add([]byte("k="+tok+";"), uint8(5))
	}
	f.Fuzz(func(t *testing.T, data []byte, split uint8) {
		r := io.Reader(bytes.NewReader(data))
		if split%2 == 1 {
			r = iotest.OneByteReader(r)
		}
		got, err := io.ReadAll(secretscan.NewReader(r))
		want := secretscan.Find(data)
		var found *secretscan.Found
		switch {
		case !bytes.HasPrefix(data, got):
			t.Fatalf("passed on %q, not a prefix of the stream", got)
		case want == nil && (err != nil || len(got) != len(data)):
			t.Fatalf("clean stream: %d of %d bytes, %v", len(got), len(data), err)
		case want != nil && (!errors.As(err, &found) || found.Rule != want):
			t.Fatalf("error %v, want rule %s", err, want.ID)
		}
	})
}

// TestRules: every rule has an ID of its own, says what it finds, and
// its path patterns are valid deny patterns.
func TestRules(t *testing.T) {
	var ids []string
	for _, r := range secretscan.PathRules {
		ids = append(ids, r.ID)
		if r.What == "" || len(r.Patterns) == 0 {
			t.Errorf("path rule %s: no description or no pattern", r.ID)
		}
		if _, err := pathmatch.New(r.Patterns, pathmatch.IgnoreCase); err != nil {
			t.Errorf("path rule %s: %v", r.ID, err)
		}
	}
	for _, r := range secretscan.ContentRules {
		ids = append(ids, r.ID)
		if r.What == "" {
			t.Errorf("content rule %s: no description", r.ID)
		}
	}
	slices.Sort(ids)
	if c := slices.Compact(slices.Clone(ids)); len(c) != len(ids) {
		t.Errorf("rule IDs repeat: %v", ids)
	}
}
