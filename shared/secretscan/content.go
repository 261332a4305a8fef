package secretscan

import (
	"bytes"
	"math"
)

// A ContentRule is a kind of secret found in a file's content.
type ContentRule struct {
	// ID names the rule in refusals.
	ID string
	// What says what the file holds, after "holds" ("a private key
	// block").
	What string
	// prefixes start every match; the byte of each that find looks for
	// is its first '_' or '-', else its first byte (see anchor).
	prefixes []string
	// match reports whether a match starts at data[start:], where
	// data[start:after] is one of prefixes; data[:start] is context, and
	// data ends at most maxMatch bytes after start.
	match func(data []byte, start, after int) bool
}

// ContentRules are the secrets that refuse a file whatever it is called.
// The token formats and their thresholds are gitleaks v8.30.0's
// (config/gitleaks.toml, rule IDs kept), limited to credentials issued
// only as secrets, with prefixes too distinctive for code to hold by
// chance; test-mode keys (Stripe's sk_test_) are left out. The private
// key rule is stricter than gitleaks' private-key (see privateKeyAt).
var ContentRules = []*ContentRule{
	{ID: "private-key", What: "a private key block",
		prefixes: []string{beginMarker}, match: privateKeyAt},
	{ID: "gcp-service-account", What: "a service-account key (a JSON \"private_key\" holding a private key block)",
		prefixes: []string{`"private_key"`}, match: jsonPrivateKeyAt},
	{ID: "aws-access-token", What: "an AWS access key ID",
		prefixes: []string{"AKIA", "ASIA", "ABIA", "ACCA"},
		match:    token{run: upperBase32, min: 16, max: 16, wordBefore: true, stop: &word, entropy: 3, example: "EXAMPLE"}.match},
	{ID: "github-token", What: "a GitHub token (gitleaks' github-pat, github-oauth, github-app-token, github-refresh-token)",
		prefixes: []string{"ghp_", "gho_", "ghu_", "ghs_", "ghr_"},
		match:    token{run: alnum, min: 36, max: 36, entropy: 3}.match},
	{ID: "github-fine-grained-pat", What: "a GitHub fine-grained personal access token",
		prefixes: []string{"github_pat_"},
		match:    token{run: word, min: 82, max: 82, entropy: 3}.match},
	{ID: "gitlab-pat", What: "a GitLab personal access token",
		prefixes: []string{"glpat-"},
		match:    token{run: wordDash, min: 20, max: 20, entropy: 3}.match},
	{ID: "slack-token", What: "a Slack token (gitleaks' slack-bot-token, slack-user-token and the legacy ones)",
		prefixes: []string{"xoxb-", "xoxp-", "xoxa-", "xoxr-", "xoxs-", "xoxe-", "xoxo-"},
		match:    token{run: alnumDash, min: 20, max: 250, digitFirst: true, entropy: 3}.match},
	{ID: "stripe-access-token", What: "a live Stripe secret key",
		prefixes: []string{"sk_live_", "rk_live_", "sk_prod_", "rk_prod_"},
		match:    token{run: alnum, min: 10, max: 99, wordBefore: true, stop: &word, entropy: 2}.match},
	{ID: "gcp-api-key", What: "a Google Cloud API key",
		prefixes: []string{"AIza"},
		match:    token{run: wordDash, min: 35, max: 35, wordBefore: true, stop: &wordDash, entropy: 4}.match},
	{ID: "npm-access-token", What: "an npm access token",
		prefixes: []string{"npm_"},
		match:    token{run: alnum, min: 36, max: 36, wordBefore: true, stop: &word, entropy: 2}.match},
	{ID: "anthropic-api-key", What: "an Anthropic API key",
		prefixes: []string{"sk-ant-api03-"},
		match:    token{run: wordDash, min: 95, max: 95, suffix: "AA", wordBefore: true, stop: &wordDash}.match},
}

// maxMatch bounds what a match may span, from its first byte: a private
// key block of 64 KiB (an RSA key of 16,384 bits takes 12 KiB). What
// follows a place by more than this never decides whether a match starts
// there, so the Reader holds back no more.
const maxMatch = 64 << 10

// Find returns the rule of the first secret in data (the one that starts
// first), or nil when there is none.
func Find(data []byte) *ContentRule { return find(data, 0, len(data)) }

// find returns the rule of the first match that starts in data[from:to];
// data before from is context, and data after to is read as far as a
// match reaches.
func find(data []byte, from, to int) *ContentRule {
	var first *ContentRule
	best := to // the first match starts before best
	for _, a := range anchors {
		// A match at start has its anchor byte at start+offset.
		for i := from + a.minOffset; i < min(best+a.maxOffset, len(data)); {
			j := bytes.IndexByte(data[i:min(best+a.maxOffset, len(data))], a.b)
			if j < 0 {
				break
			}
			i += j
			if !(i > 0 && a.before[data[i-1]]) && !(i+1 < len(data) && a.after[data[i+1]]) {
				i++ // no prefix has this byte on either side of its anchor
				continue
			}
			for _, p := range a.prefixes {
				start := i - p.offset
				if start < from || start >= best || !bytes.HasPrefix(data[start:], p.text) {
					continue
				}
				if p.rule.match(data[:min(len(data), start+maxMatch)], start, start+len(p.text)) {
					first, best = p.rule, start
				}
			}
			i++
		}
	}
	return first
}

// anchor is a byte find looks for, and the prefixes it starts.
type anchor struct {
	b                    byte
	prefixes             []anchoredPrefix
	minOffset, maxOffset int // the least and greatest offset of b in them
	// before holds the byte before b in the prefixes where b is not
	// first, after the byte after b in the others: a place whose
	// neighbours are in neither starts no prefix, and is passed at once.
	before, after charset
}

// anchoredPrefix is a prefix and where its anchor byte lies in it.
type anchoredPrefix struct {
	text   []byte
	offset int
	rule   *ContentRule
}

// anchors groups the prefixes of ContentRules by their anchor byte: with
// '_' and '-' most prefixes are found among few places ('_' and '-' are
// rarer in code than letters), and a scan is one bytes.IndexByte pass
// per anchor.
var anchors = makeAnchors(ContentRules)

func makeAnchors(rules []*ContentRule) []*anchor {
	var out []*anchor
	for _, r := range rules {
		for _, p := range r.prefixes {
			off := bytes.IndexAny([]byte(p), "_-")
			if off < 0 {
				off = 0
			}
			var a *anchor
			for _, x := range out {
				if x.b == p[off] {
					a = x
				}
			}
			if a == nil {
				a = &anchor{b: p[off], minOffset: off, maxOffset: off}
				out = append(out, a)
			}
			a.prefixes = append(a.prefixes, anchoredPrefix{text: []byte(p), offset: off, rule: r})
			if off > 0 {
				a.before[p[off-1]] = true
			} else {
				a.after[p[1]] = true
			}
			a.minOffset, a.maxOffset = min(a.minOffset, off), max(a.maxOffset, off)
		}
	}
	return out
}

// charset is a set of bytes.
type charset [256]bool

// newCharset is the set of the byte ranges given, each "a-z".
func newCharset(ranges ...string) charset {
	var c charset
	for _, r := range ranges {
		for b := int(r[0]); b <= int(r[2]); b++ {
			c[b] = true
		}
	}
	return c
}

// Character sets of the token formats (regexp's \w is word).
var (
	alnum       = newCharset("a-z", "A-Z", "0-9")
	alnumDash   = newCharset("a-z", "A-Z", "0-9", "---")
	word        = newCharset("a-z", "A-Z", "0-9", "_-_")
	wordDash    = newCharset("a-z", "A-Z", "0-9", "_-_", "---")
	upperBase32 = newCharset("A-Z", "2-7")
)

// token is a credential of one shape: a prefix, then a run of characters.
type token struct {
	run        charset
	min, max   int      // the run's length
	suffix     string   // the run ends with it
	digitFirst bool     // the run starts with a digit (Slack's workspace number)
	wordBefore bool     // no word character right before the prefix (regexp's \b)
	stop       *charset // no such character right after the run (nil: any)
	entropy    float64  // the least Shannon entropy of the match, in bits per byte
	example    string   // a match that ends so is a documentation example
}

func (t token) match(data []byte, start, after int) bool {
	if t.wordBefore && start > 0 && word[data[start-1]] {
		return false
	}
	n := 0
	for after+n < len(data) && n <= t.max && t.run[data[after+n]] {
		n++
	}
	if n < t.min {
		return false
	}
	n = min(n, t.max)
	end := after + n
	m := data[start:end]
	switch {
	case t.stop != nil && end < len(data) && t.stop[data[end]],
		t.digitFirst && (data[after] < '0' || data[after] > '9'),
		!bytes.HasSuffix(m, []byte(t.suffix)),
		t.example != "" && bytes.HasSuffix(m, []byte(t.example)),
		placeholder(data[after:end]):
		return false
	}
	return entropy(m) >= t.entropy
}

// placeholderRun is how many times in a row a character repeats in a
// documentation placeholder ("ghp_PersonalAccessToken01245678900000000"),
// and, but once in tens of millions, never in a random token.
const placeholderRun = 6

// placeholder reports whether a token's run repeats a character
// placeholderRun times in a row.
func placeholder(run []byte) bool {
	n := 1
	for i := 1; i < len(run); i++ {
		if run[i] != run[i-1] {
			n = 1
		} else if n++; n >= placeholderRun {
			return true
		}
	}
	return false
}

// entropy is the Shannon entropy of b, in bits per byte.
func entropy(b []byte) float64 {
	var counts [256]int
	for _, c := range b {
		counts[c]++
	}
	h := 0.0
	for _, n := range counts {
		if n > 0 {
			p := float64(n) / float64(len(b))
			h -= p * math.Log2(p)
		}
	}
	return h
}
