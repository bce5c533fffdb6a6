// Command ceiling is the "Go ceiling" of make bench-load: a minimal
// net/http server that answers the responses loaddump saved, from a map:
// the body, Content-Type, Content-Length and the headers vulnd sent with
// it (ETag, Link, X-Total-Count, Vary, Cache-Control, X-Snapshot-Id),
// and nothing else. What it reaches
// is what any Go server writing those bytes through net/http can reach on
// this machine. With -bare it sends only Content-Type and Content-Length.
//
//	ceiling -dir DUMP -addr 127.0.0.1:8082 [-bare]
package main

import (
	"bufio"
	"flag"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

func main() {
	dir := flag.String("dir", "", "loaddump's output directory")
	addr := flag.String("addr", "127.0.0.1:8082", "listen address")
	bare := flag.Bool("bare", false, "send only Content-Type and Content-Length")
	flag.Parse()
	answers, err := load(*dir, *bare)
	if err != nil {
		fmt.Fprintln(os.Stderr, "ceiling:", err)
		os.Exit(1)
	}
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a, ok := answers[r.RequestURI]
		if !ok {
			http.NotFound(w, r)
			return
		}
		hdr := w.Header()
		for _, kv := range a.header {
			hdr[kv.key] = kv.value
		}
		w.WriteHeader(http.StatusOK)
		w.Write(a.body)
	})
	s := &http.Server{Addr: *addr, Handler: h, ReadHeaderTimeout: 5 * time.Second, IdleTimeout: 120 * time.Second}
	fmt.Fprintf(os.Stderr, "ceiling: %d responses on %s\n", len(answers), *addr)
	if err := s.ListenAndServe(); err != nil {
		fmt.Fprintln(os.Stderr, "ceiling:", err)
		os.Exit(1)
	}
}

// field is one header, its value as net/http keeps it.
type field struct {
	key   string
	value []string
}

type answer struct {
	body   []byte
	header []field // built once: a request only copies slice headers
}

// replayed names the columns of map.tsv after the file, as loaddump
// writes them.
var replayed = []string{"Etag", "Link", "X-Total-Count", "Vary", "Cache-Control", "X-Snapshot-Id", "Last-Modified"}

// load reads map.tsv (path, file, then the replayed headers, each column
// tab-separated and possibly empty) and every file it names.
func load(dir string, bare bool) (map[string]answer, error) {
	f, err := os.Open(filepath.Join(dir, "map.tsv"))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	ctype := []string{"application/json"}
	out := map[string]answer{}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		cols := strings.Split(sc.Text(), "\t")
		if len(cols) < 2 {
			return nil, fmt.Errorf("map.tsv: bad line %q", sc.Text())
		}
		b, err := os.ReadFile(filepath.Join(dir, cols[1]))
		if err != nil {
			return nil, err
		}
		a := answer{body: b, header: []field{
			{"Content-Type", ctype},
			{"Content-Length", []string{strconv.Itoa(len(b))}},
		}}
		if !bare {
			for i, v := range cols[2:] {
				if v != "" && i < len(replayed) {
					a.header = append(a.header, field{replayed[i], []string{v}})
				}
			}
		}
		out[cols[0]] = a
	}
	return out, sc.Err()
}
