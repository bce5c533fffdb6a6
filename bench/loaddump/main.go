// Command loaddump picks real paths of every endpoint class from a running
// vulnd and saves their responses, so that make bench-load can have nginx
// and a minimal Go server answer the very same bytes at the same paths.
//
//	loaddump -addr 127.0.0.1:8080 -o DIR [-per-class 3000]
//
// It writes, in DIR:
//
//	files/N.json        one response body each
//	map.tsv             every path once: path (as sent) <TAB> files/N.json
//	                    <TAB> the ETag, Link, X-Total-Count, Vary,
//	                    Cache-Control, X-Snapshot-Id and Last-Modified
//	                    vulnd sent (each may be empty), tab-separated
//	nginx-map.conf      the same as nginx maps from $request_uri to
//	                    $dumpfile, $dumpetag, $dumplink, $dumptotal,
//	                    $dumpvary, $dumpcache and $dumpsnap
//	<class>.paths       a class's paths, one per line (for wrk)
//	classes.txt         the class names and their path files
//
// Paths are written with every byte but [A-Za-z0-9._~/-] percent-encoded,
// so they are the same request to vulnd and are safe in nginx's config.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/goccy/go-json"

	"github.com/vulnd/vulnd/bench"
	"github.com/vulnd/vulnd/index"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:8080", "vulnd's API address")
	out := flag.String("o", "", "directory to write")
	perClass := flag.Int("per-class", 3000, "paths per endpoint class")
	flag.Parse()
	if *out == "" || *perClass <= 0 {
		fmt.Fprintln(os.Stderr, "usage: loaddump -addr HOST:PORT -o DIR [-per-class N]")
		os.Exit(2)
	}
	if err := run("http://"+*addr, *out, *perClass); err != nil {
		fmt.Fprintln(os.Stderr, "loaddump:", err)
		os.Exit(1)
	}
}

// client asks for the bodies as they are (Accept-Encoding: identity):
// Go's default transport would ask for gzip and hand back the decoded
// body with the compressed answer's ETag and headers.
var client = &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{DisableCompression: true}}

// replayed are the headers of vulnd's answers, beyond Content-Type and
// Content-Length, that the other servers send again as they were (nginx
// sends its own Last-Modified, from the file, so its map leaves it out).
var replayed = []string{"Etag", "Link", "X-Total-Count", "Vary", "Cache-Control", "X-Snapshot-Id", "Last-Modified"}

// response is one saved answer: its file and the replayed headers.
type response struct {
	file   string
	header [7]string // as replayed
}

// fetchHeader GETs base+target and returns the body and header of a 200.
func fetchHeader(base, target string) ([]byte, http.Header, error) {
	res, err := client.Get(base + target)
	if err != nil {
		return nil, nil, err
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		return nil, nil, err
	}
	if res.StatusCode != http.StatusOK {
		return nil, nil, fmt.Errorf("GET %s: status %d: %.200s", target, res.StatusCode, body)
	}
	return body, res.Header, nil
}

// fetch GETs base+target and returns the body of a 200.
func fetch(base, target string) ([]byte, error) {
	body, _, err := fetchHeader(base, target)
	return body, err
}

func run(base, out string, perClass int) error {
	get := func(target string, v any) error {
		body, err := fetch(base, target)
		if err != nil {
			return err
		}
		return json.Unmarshal(body, v)
	}
	var counts index.Counts
	if err := countsOf(base, &counts); err != nil {
		return err
	}
	classes, err := bench.PickPaths(get, counts, perClass)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Join(out, "files"), 0o755); err != nil {
		return err
	}
	files := map[string]response{} // path -> its answer
	var order []string
	var list strings.Builder
	for _, c := range classes {
		slug := strings.NewReplacer(" ", "-", "'", "").Replace(c.Name)
		var paths strings.Builder
		for _, p := range c.Paths {
			p = strictEscape(p)
			paths.WriteString(p + "\n")
			if _, ok := files[p]; ok {
				continue
			}
			body, hdr, err := fetchHeader(base, p)
			if err != nil {
				return err
			}
			r := response{file: fmt.Sprintf("files/%d.json", len(order))}
			for i, k := range replayed {
				v := strings.Join(hdr.Values(k), ", ")
				if strings.ContainsAny(v, "\t\r\n") {
					return fmt.Errorf("GET %s: %s header %q holds a tab or a line break", p, k, v)
				}
				r.header[i] = v
			}
			if err := os.WriteFile(filepath.Join(out, r.file), body, 0o644); err != nil {
				return err
			}
			files[p] = r
			order = append(order, p)
		}
		if err := os.WriteFile(filepath.Join(out, slug+".paths"), []byte(paths.String()), 0o644); err != nil {
			return err
		}
		fmt.Fprintf(&list, "%s\t%s.paths\n", c.Name, slug)
	}
	if err := os.WriteFile(filepath.Join(out, "classes.txt"), []byte(list.String()), 0o644); err != nil {
		return err
	}
	return writeMaps(out, order, files)
}

// countsOf reads the snapshot's counts from the lists' X-Total-Count.
func countsOf(base string, c *index.Counts) error {
	for _, x := range []struct {
		path string
		n    *int
	}{{"/cve", &c.CVEs}, {"/vendors", &c.Vendors}, {"/cwe", &c.CWEs}, {"/reports", &c.Reports}} {
		res, err := client.Get(base + x.path)
		if err != nil {
			return err
		}
		res.Body.Close()
		if _, err := fmt.Sscan(res.Header.Get("X-Total-Count"), x.n); err != nil {
			return fmt.Errorf("GET %s: X-Total-Count %q", x.path, res.Header.Get("X-Total-Count"))
		}
	}
	return nil
}

func writeMaps(out string, order []string, files map[string]response) error {
	tsv, err := os.Create(filepath.Join(out, "map.tsv"))
	if err != nil {
		return err
	}
	defer tsv.Close()
	conf, err := os.Create(filepath.Join(out, "nginx-map.conf"))
	if err != nil {
		return err
	}
	defer conf.Close()
	tw, cw := bufio.NewWriter(tsv), bufio.NewWriter(conf)
	for _, p := range order {
		r := files[p]
		fmt.Fprintf(tw, "%s\t%s\t%s\n", p, r.file, strings.Join(r.header[:], "\t"))
	}
	// nginx has no escape for '$' in a map's value: $dollar stands for it.
	fmt.Fprintln(cw, "geo $dollar {\n    default \"$\";\n}")
	for i, v := range []string{"$dumpfile", "$dumpetag", "$dumplink", "$dumptotal", "$dumpvary", "$dumpcache", "$dumpsnap"} {
		fmt.Fprintf(cw, "map $request_uri %s {\n", v)
		if i == 0 {
			fmt.Fprintln(cw, "    default /nonexistent;")
		}
		for _, p := range order {
			r := files[p]
			val := "/" + r.file
			if i > 0 {
				val = r.header[i-1]
			}
			if val != "" {
				fmt.Fprintf(cw, "    \"%s\" %s;\n", p, nginxQuote(val))
			}
		}
		fmt.Fprintln(cw, "}")
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if err := cw.Flush(); err != nil {
		return err
	}
	if err := tsv.Close(); err != nil {
		return err
	}
	return conf.Close()
}

// nginxQuote returns s as a double-quoted nginx config string that
// stands for s itself: quotes and backslashes escaped, '$' written
// ${dollar}.
func nginxQuote(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`, `$`, `${dollar}`).Replace(s) + `"`
}

// strictEscape percent-encodes every byte of target's path and query but
// [A-Za-z0-9._~/-] and the query's structure ('?', '&', '='), after
// undoing the escapes it has: the same request to vulnd, and a string
// nginx's config can hold as is.
func strictEscape(target string) string {
	path, query, hasQuery := strings.Cut(target, "?")
	var b strings.Builder
	esc := func(s string, keep string) {
		for i := 0; i < len(s); i++ {
			c, escaped := s[i], false
			if c == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]) {
				c, escaped = unhex(s[i+1])<<4|unhex(s[i+2]), true
				i += 2
			}
			switch {
			case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', strings.IndexByte("._~-", c) >= 0,
				!escaped && strings.IndexByte(keep, c) >= 0:
				b.WriteByte(c)
			default:
				fmt.Fprintf(&b, "%%%02X", c)
			}
		}
	}
	// In the path, an escaped '/' must stay escaped: it is part of a name.
	for i, seg := range strings.Split(path, "/") {
		if i > 0 {
			b.WriteByte('/')
		}
		esc(seg, "")
	}
	if hasQuery {
		b.WriteByte('?')
		esc(query, "&=")
	}
	return b.String()
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func unhex(c byte) byte {
	switch {
	case '0' <= c && c <= '9':
		return c - '0'
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10
	}
	return c - 'A' + 10
}
