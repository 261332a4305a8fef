// Command embedserver serves embedtest's stand-in for an OpenAI-compatible
// embedding model (POST /v1/embeddings: feature-hashed bag-of-words
// vectors, words mapped by -synonyms first) until it is stopped. It prints
// its API base on the first line of its output, to give as
// TOOLSHED_EMBED_URL (any TOOLSHED_EMBED_MODEL). Tests start it as a
// process of its own (embedtest.StartProcess); it is no model: the
// figures `make contextbench` prints with it say the plumbing works, not
// what a model would find.
//
//	go run ./scripts/embedserver -addr 127.0.0.1:8089 -synonyms backoff=pause,exponential=double
package main

import (
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"

	"github.com/toolshed/toolshed/shared/testenv/embedtest"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "address to listen on")
	synonyms := flag.String("synonyms", "", "word=word pairs, comma-separated: the first is embedded as the second")
	flag.Parse()
	o := embedtest.Options{Synonyms: map[string]string{}}
	for pair := range strings.SplitSeq(*synonyms, ",") {
		if from, to, ok := strings.Cut(pair, "="); ok {
			o.Synonyms[from] = to
		}
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		slog.Error("listen", "err", err)
		os.Exit(1)
	}
	fmt.Printf("http://%s/v1\n", ln.Addr())
	if err := http.Serve(ln, embedtest.NewServer(o)); err != nil {
		slog.Error("serve", "err", err)
		os.Exit(1)
	}
}
