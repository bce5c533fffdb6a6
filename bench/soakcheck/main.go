// Command soakcheck is the helper of bench/soak.sh, the reload storm.
//
//	soakcheck prepare -a HOST:PORT -b HOST:PORT -o DIR [-n N] [-seed S]
//	soakcheck check   -addr HOST:PORT -expect DIR/expect.json [-c N] [-out FILE]
//	soakcheck etag    -addr HOST:PORT [-path P]
//	soakcheck freeport
//
// prepare crawls two servers, one serving snapshot A and one serving B,
// for paths of all 15 endpoint kinds (names taken from the served data),
// fetches every path from both, and keeps the paths that answer 200 on
// both. It writes DIR/paths.txt (one path a line, for wrk and the checker)
// and DIR/expect.json: for each snapshot, its ETag and the SHA-256 of the
// body of every path. Each server must answer every path with one ETag.
//
// check runs -c concurrent clients fetching random paths from
// expect.json (half of them from the paths whose body differs) until SIGTERM or SIGINT (or -duration). Each response must be
// a 200 whose ETag is one of the recorded snapshots' and whose body is the
// body that snapshot gave for that path. It then prints its counts as
// key=value lines (to -out too) and exits 0; the caller judges them.
//
// etag prints the ETag a GET of -path answers with (empty if not 200).
// freeport prints a free 127.0.0.1 port.
package main

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

func main() {
	if len(os.Args) < 2 {
		fatalf("usage: soakcheck prepare|check|etag|freeport [flags]")
	}
	var err error
	switch os.Args[1] {
	case "prepare":
		err = cmdPrepare(os.Args[2:])
	case "check":
		err = cmdCheck(os.Args[2:])
	case "etag":
		err = cmdEtag(os.Args[2:])
	case "freeport":
		err = cmdFreePort()
	default:
		err = fmt.Errorf("unknown command %q", os.Args[1])
	}
	if err != nil {
		fatalf("%v", err)
	}
}

func fatalf(format string, a ...any) {
	fmt.Fprintf(os.Stderr, "soakcheck: "+format+"\n", a...)
	os.Exit(1)
}

var client = &http.Client{
	Timeout: 10 * time.Second,
	Transport: &http.Transport{
		Proxy:               nil,
		DisableCompression:  true,
		MaxIdleConns:        64,
		MaxIdleConnsPerHost: 64,
		IdleConnTimeout:     30 * time.Second,
	},
}

// fetch GETs base+path and returns status, ETag and body.
func fetch(base, path string) (int, string, []byte, error) {
	res, err := client.Get(base + path)
	if err != nil {
		return 0, "", nil, err
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		return 0, "", nil, err
	}
	return res.StatusCode, res.Header.Get("ETag"), body, nil
}

func sum(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// ---- endpoint kinds ----

// kinds names the 15 endpoints in the order of httpapi/routes.go.
var kinds = []string{
	"", "cwe list", "cwe", "cwe cves", "cve list", "cve", "vendor list", "vendor",
	"vendor cves", "products", "product", "product cves", "report list", "report",
	"report alerts", "alert events",
}

// kindOf tells which of the 15 endpoints a path is for (0 if none).
func kindOf(p string) int {
	if i := strings.IndexByte(p, '?'); i >= 0 {
		p = p[:i]
	}
	s := strings.Split(strings.TrimPrefix(p, "/"), "/")
	switch {
	case s[0] == "cwe":
		return []int{1, 2, 3, 0}[min(len(s)-1, 3)]
	case s[0] == "cve":
		return []int{4, 5, 0}[min(len(s)-1, 2)]
	case s[0] == "vendors":
		switch len(s) {
		case 1:
			return 6
		case 2:
			return 7
		case 3:
			return map[string]int{"cve": 8, "products": 9}[s[2]]
		case 4:
			return 10
		case 5:
			return 11
		}
	case s[0] == "reports":
		return []int{12, 13, 14, 15, 0}[min(len(s)-1, 4)]
	}
	return 0
}

// ---- prepare ----

type snapExpect struct {
	Name   string            `json:"name"`
	ETag   string            `json:"etag"`
	Bodies map[string]string `json:"bodies"` // path -> sha256 of the 200 body
}

type expectFile struct {
	Snapshots []snapExpect `json:"snapshots"`
}

type crawler struct {
	base  string
	rng   *rand.Rand
	n     int
	paths map[string]bool
}

func (c *crawler) add(p string) { c.paths[p] = true }

// list GETs a JSON array and returns the string or number value of key of
// each item, and the last page number from the Link header (1 when there
// is no rel="last"); nil when the answer is not a 200 array.
func (c *crawler) list(path, key string) ([]string, int) {
	res, err := client.Get(c.base + path)
	if err != nil {
		return nil, 0
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	var items []map[string]any
	if err != nil || res.StatusCode != 200 || json.Unmarshal(body, &items) != nil {
		return nil, 0
	}
	last := 1
	if m := lastRe.FindStringSubmatch(res.Header.Get("Link")); m != nil {
		last, _ = strconv.Atoi(m[1])
	}
	out := make([]string, 0, len(items))
	for _, it := range items {
		switch v := it[key].(type) {
		case string:
			out = append(out, v)
		case float64:
			out = append(out, strconv.FormatInt(int64(v), 10))
		}
	}
	return out, last
}

var lastRe = regexp.MustCompile(`[?&]page=(\d+)>; rel="last"`)

// ids returns the values of key in a list, ignoring pages.
func (c *crawler) ids(path, key string) []string {
	xs, _ := c.list(path, key)
	return xs
}

// sample returns up to k items of xs, sorted first so a seed gives the same
// choice for the same data.
func sample[T cmp.Ordered](rng *rand.Rand, xs []T, k int) []T {
	xs = slices.Clone(xs)
	slices.Sort(xs)
	xs = slices.Compact(xs)
	rng.Shuffle(len(xs), func(i, j int) { xs[i], xs[j] = xs[j], xs[i] })
	return xs[:min(k, len(xs))]
}

// page returns path with page=p added to its query.
func page(path string, p int) string {
	if strings.Contains(path, "?") {
		return path + "&page=" + strconv.Itoa(p)
	}
	return path + "?page=" + strconv.Itoa(p)
}

// pages adds pages 1, last and last+1 (an empty list) of path, and k
// random ones.
func (c *crawler) pages(path string, last, k int) {
	c.add(page(path, 1))
	c.add(page(path, last+1))
	if last >= 1 {
		c.add(page(path, last))
	}
	for i := 0; i < k; i++ {
		c.add(page(path, 1+c.rng.IntN(max(last, 1))))
	}
}

// crawl collects about c.n paths over the 15 endpoints.
func (c *crawler) crawl() {
	n := c.n
	esc := url.PathEscape
	// fromPages adds the path of a paged list and some of its pages, and
	// returns the names on page 1 and on k random pages.
	fromPages := func(path string, k int) []string {
		xs, last := c.list(path, "name")
		c.add(path)
		c.pages(path, last, k)
		for _, p := range sample(c.rng, pageNums(last), k) {
			ys, _ := c.list(page(path, p), "name")
			xs = append(xs, ys...)
		}
		return xs
	}

	// 1-3: CWEs.
	for _, w := range sample(c.rng, fromPages("/cwe", 10), n/20) {
		c.add("/cwe/" + esc(w))
		c.add("/cwe/" + esc(w) + "/cve")
		c.add("/cwe/" + esc(w) + "/cve?page=" + strconv.Itoa(2+c.rng.IntN(3)))
	}

	// 4-5: CVEs, by list page and by band.
	cves := fromPages("/cve", n/40)
	for _, band := range []string{"low", "medium", "high"} {
		fromPages("/cve?cvss="+band, n/60)
	}

	// 12-15: reports; the CVEs of alerts are the ones that changed.
	fromPages("/reports", 2)
	reports := c.ids("/reports", "id")
	var alertCVEs []string
	for _, r := range reports {
		c.add("/reports/" + esc(r))
		c.add("/reports/" + esc(r) + "/alerts")
		for _, a := range sample(c.rng, c.ids("/reports/"+esc(r)+"/alerts", "id"), n/(10*max(1, len(reports)))) {
			c.add("/reports/" + esc(r) + "/alerts/" + esc(a))
		}
		alertCVEs = append(alertCVEs, c.ids("/reports/"+esc(r)+"/alerts", "cve")...)
	}
	for _, v := range sample(c.rng, cves, n/8) {
		c.add("/cve/" + esc(v))
	}
	for _, v := range sample(c.rng, alertCVEs, n/8) {
		c.add("/cve/" + esc(v))
	}

	// 6-11: vendors and products.
	for _, v := range sample(c.rng, fromPages("/vendors", n/40), n/12) {
		c.add("/vendors/" + esc(v))
		c.add("/vendors/" + esc(v) + "/cve")
		c.add("/vendors/" + esc(v) + "/cve?page=2")
		c.add("/vendors/" + esc(v) + "/products")
		for _, p := range sample(c.rng, c.ids("/vendors/"+esc(v)+"/products", "name"), 2) {
			c.add("/vendors/" + esc(v) + "/products/" + esc(p))
			c.add("/vendors/" + esc(v) + "/products/" + esc(p) + "/cve")
		}
	}
}

// pageNums returns 1..last.
func pageNums(last int) []int {
	out := make([]int, last)
	for i := range out {
		out[i] = i + 1
	}
	return out
}

// record fetches every path and returns the 200 bodies' sums; every 200
// must carry the same ETag.
func record(name, base string, paths []string) (snapExpect, error) {
	e := snapExpect{Name: name, Bodies: map[string]string{}}
	for _, p := range paths {
		code, etag, body, err := fetch(base, p)
		if err != nil {
			return e, fmt.Errorf("%s %s: %v", name, p, err)
		}
		if code != 200 {
			continue
		}
		if etag == "" || (e.ETag != "" && etag != e.ETag) {
			return e, fmt.Errorf("%s %s: ETag %q, earlier %q: the server changed snapshot while recording", name, p, etag, e.ETag)
		}
		e.ETag = etag
		e.Bodies[p] = sum(body)
	}
	if e.ETag == "" {
		return e, fmt.Errorf("%s: no path answered 200", name)
	}
	return e, nil
}

func cmdPrepare(args []string) error {
	fs := flag.NewFlagSet("prepare", flag.ExitOnError)
	a := fs.String("a", "", "address of a server serving snapshot A")
	b := fs.String("b", "", "address of a server serving snapshot B")
	out := fs.String("o", "", "output directory")
	n := fs.Int("n", 3000, "about how many paths to crawl on each server")
	seed := fs.Uint64("seed", 1, "sampling seed")
	fs.Parse(args)
	if *a == "" || *b == "" || *out == "" {
		return errors.New("prepare needs -a, -b and -o")
	}
	all := map[string]bool{}
	for i, addr := range []string{*a, *b} {
		c := &crawler{base: "http://" + addr, rng: rand.New(rand.NewPCG(*seed, uint64(i))), n: *n, paths: all}
		c.crawl()
	}
	var paths []string
	for p := range all {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	ea, err := record("A", "http://"+*a, paths)
	if err != nil {
		return err
	}
	eb, err := record("B", "http://"+*b, paths)
	if err != nil {
		return err
	}
	if ea.ETag == eb.ETag {
		return fmt.Errorf("A and B have the same ETag %s", ea.ETag)
	}
	// Keep what answers 200 on both, so that wrk sees only 200s.
	var common []string
	perKind := make([]int, len(kinds))
	diffKind := make([]int, len(kinds))
	differ := 0
	for _, p := range paths {
		ha, okA := ea.Bodies[p]
		hb, okB := eb.Bodies[p]
		if !okA || !okB {
			delete(ea.Bodies, p)
			delete(eb.Bodies, p)
			continue
		}
		common = append(common, p)
		k := kindOf(p)
		perKind[k]++
		if ha != hb {
			differ++
			diffKind[k]++
		}
	}
	var missing []string
	for k := 1; k < len(kinds); k++ {
		if perKind[k] == 0 {
			missing = append(missing, kinds[k])
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("no path answering 200 on both snapshots for: %s", strings.Join(missing, ", "))
	}
	if perKind[0] > 0 {
		return fmt.Errorf("%d paths of no known endpoint", perKind[0])
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(*out, "paths.txt"), []byte(strings.Join(common, "\n")+"\n"), 0o644); err != nil {
		return err
	}
	js, _ := json.Marshal(expectFile{Snapshots: []snapExpect{ea, eb}})
	if err := os.WriteFile(filepath.Join(*out, "expect.json"), js, 0o644); err != nil {
		return err
	}
	var ks []string
	for k := 1; k < len(kinds); k++ {
		ks = append(ks, fmt.Sprintf("%d:%d/%d", k, perKind[k], diffKind[k]))
	}
	fmt.Printf("paths=%d\npaths_differ=%d\ncrawled=%d\netag_a=%s\netag_b=%s\nkinds=%s\n",
		len(common), differ, len(paths), ea.ETag, eb.ETag, strings.Join(ks, " "))
	return nil
}

// ---- check ----

type stats struct {
	requests, non200, errors, mismatch, unknownETag, otherSnap, discriminating atomic.Int64
	perSnap                                                                    []atomic.Int64
}

func cmdCheck(args []string) error {
	fs := flag.NewFlagSet("check", flag.ExitOnError)
	addr := fs.String("addr", "", "server address")
	expectPath := fs.String("expect", "", "expect.json written by prepare")
	conc := fs.Int("c", 4, "concurrent clients")
	dur := fs.Duration("duration", 0, "stop after this long (0: at SIGTERM or SIGINT only)")
	out := fs.String("out", "", "also write the counts to this file")
	seed := fs.Uint64("seed", uint64(time.Now().UnixNano()), "path choice seed")
	fs.Parse(args)
	if *addr == "" || *expectPath == "" {
		return errors.New("check needs -addr and -expect")
	}
	js, err := os.ReadFile(*expectPath)
	if err != nil {
		return err
	}
	var ex expectFile
	if err := json.Unmarshal(js, &ex); err != nil {
		return err
	}
	snapOf := map[string]int{}
	for i, s := range ex.Snapshots {
		snapOf[s.ETag] = i
	}
	var paths []string
	for p := range ex.Snapshots[0].Bodies {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	// Half the requests go to paths whose body differs between the
	// snapshots: only those can show one snapshot's body under the other's
	// ETag.
	discriminates := map[string]bool{}
	var differing []string
	for _, p := range paths {
		for _, s := range ex.Snapshots[1:] {
			if s.Bodies[p] != ex.Snapshots[0].Bodies[p] && !discriminates[p] {
				discriminates[p] = true
				differing = append(differing, p)
			}
		}
	}
	if len(differing) == 0 {
		return errors.New("no path has different bodies in the snapshots")
	}

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	if *dur > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, *dur)
		defer cancel()
	}
	st := &stats{perSnap: make([]atomic.Int64, len(ex.Snapshots))}
	var logged atomic.Int64
	logf := func(format string, a ...any) {
		if logged.Add(1) <= 20 {
			fmt.Fprintf(os.Stderr, "soakcheck: "+format+"\n", a...)
		}
	}
	base := "http://" + *addr
	start := time.Now()
	var wg sync.WaitGroup
	for g := 0; g < *conc; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(*seed, uint64(g)))
			for ctx.Err() == nil {
				p := paths[rng.IntN(len(paths))]
				if rng.IntN(2) == 0 {
					p = differing[rng.IntN(len(differing))]
				}
				code, etag, body, err := fetch(base, p)
				if ctx.Err() != nil && err != nil {
					return // cut short by the stop
				}
				st.requests.Add(1)
				if err != nil {
					st.errors.Add(1)
					logf("GET %s: %v", p, err)
					time.Sleep(10 * time.Millisecond)
					continue
				}
				if code != 200 {
					st.non200.Add(1)
					logf("GET %s: status %d: %.200s", p, code, body)
					continue
				}
				i, known := snapOf[etag]
				if !known {
					st.unknownETag.Add(1)
					st.mismatch.Add(1)
					logf("GET %s: unknown ETag %s", p, etag)
					continue
				}
				st.perSnap[i].Add(1)
				if discriminates[p] {
					st.discriminating.Add(1)
				}
				h := sum(body)
				if h == ex.Snapshots[i].Bodies[p] {
					continue
				}
				st.mismatch.Add(1)
				what := "a body of no recorded snapshot"
				for j, s := range ex.Snapshots {
					if j != i && s.Bodies[p] == h {
						st.otherSnap.Add(1)
						what = "the body of snapshot " + s.Name
					}
				}
				logf("GET %s: ETag %s (snapshot %s) with %s (%d bytes)", p, etag, ex.Snapshots[i].Name, what, len(body))
			}
		}(g)
	}
	wg.Wait()
	secs := time.Since(start).Seconds()
	var b strings.Builder
	fmt.Fprintf(&b, "check_requests=%d\ncheck_rps=%.0f\ncheck_non200=%d\ncheck_errors=%d\ncheck_mismatch=%d\ncheck_unknown_etag=%d\ncheck_other_snapshot_body=%d\ncheck_discriminating=%d\n",
		st.requests.Load(), float64(st.requests.Load())/secs, st.non200.Load(), st.errors.Load(), st.mismatch.Load(),
		st.unknownETag.Load(), st.otherSnap.Load(), st.discriminating.Load())
	for i, s := range ex.Snapshots {
		fmt.Fprintf(&b, "check_snap_%s=%d\n", s.Name, st.perSnap[i].Load())
	}
	fmt.Print(b.String())
	if *out != "" {
		return os.WriteFile(*out, []byte(b.String()), 0o644)
	}
	return nil
}

// ---- small commands ----

func cmdEtag(args []string) error {
	fs := flag.NewFlagSet("etag", flag.ExitOnError)
	addr := fs.String("addr", "", "server address")
	path := fs.String("path", "/cwe", "path to GET")
	fs.Parse(args)
	code, etag, _, err := fetch("http://"+*addr, *path)
	if err != nil {
		return err
	}
	if code == 200 {
		fmt.Println(etag)
	} else {
		fmt.Println()
	}
	return nil
}

func cmdFreePort() error {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	defer ln.Close()
	fmt.Println(ln.Addr().(*net.TCPAddr).Port)
	return nil
}
