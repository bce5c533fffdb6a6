// Command ceiling is the "Go ceiling" of make bench-load: a minimal
// net/http server that answers the responses loaddump saved, from a map,
// with the headers vulnd sends and nothing else. What it reaches is what
// any Go server writing bytes through net/http can reach on this machine.
//
//	ceiling -dir DUMP -addr 127.0.0.1:8082
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
	flag.Parse()
	bodies, err := load(*dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, "ceiling:", err)
		os.Exit(1)
	}
	ctype, vary := []string{"application/json"}, []string{"Accept"}
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, ok := bodies[r.RequestURI]
		if !ok {
			http.NotFound(w, r)
			return
		}
		hdr := w.Header()
		hdr["Content-Type"] = ctype
		hdr["Vary"] = vary
		hdr["Content-Length"] = b.length
		w.WriteHeader(http.StatusOK)
		w.Write(b.body)
	})
	s := &http.Server{Addr: *addr, Handler: h, ReadHeaderTimeout: 5 * time.Second, IdleTimeout: 120 * time.Second}
	fmt.Fprintf(os.Stderr, "ceiling: %d responses on %s\n", len(bodies), *addr)
	if err := s.ListenAndServe(); err != nil {
		fmt.Fprintln(os.Stderr, "ceiling:", err)
		os.Exit(1)
	}
}

type response struct {
	body   []byte
	length []string
}

// load reads map.tsv (path TAB file) and every file it names.
func load(dir string) (map[string]response, error) {
	f, err := os.Open(filepath.Join(dir, "map.tsv"))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out := map[string]response{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		path, file, ok := strings.Cut(sc.Text(), "\t")
		if !ok {
			return nil, fmt.Errorf("map.tsv: bad line %q", sc.Text())
		}
		b, err := os.ReadFile(filepath.Join(dir, file))
		if err != nil {
			return nil, err
		}
		out[path] = response{b, []string{strconv.Itoa(len(b))}}
	}
	return out, sc.Err()
}
