package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// startMain serves a fresh snapshot of 50 CVEs (CVE-2024-0001..0050, vendor
// v, product p, CWE-79; see version) through the real Main on 127.0.0.1:0,
// with m's other settings, and closes it when the test ends.
func startMain(t *testing.T, m *Main) {
	t.Helper()
	m.Snapshot = filepath.Join(t.TempDir(), "snap")
	m.Addr = "127.0.0.1:0"
	version(t, m.Snapshot, "v0", time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC))
	if err := m.Open(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
}

// rawResponse is what came back for a raw request.
type rawResponse struct {
	res  *http.Response
	body []byte
}

// sendRaw writes raw on a new connection to addr (in the background, so a
// server that answers before reading everything does not block it) and
// reads one response to method.
func sendRaw(t *testing.T, addr, method, raw string) rawResponse {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(30 * time.Second))
	go io.WriteString(c, raw)
	res, err := http.ReadResponse(bufio.NewReader(c), &http.Request{Method: method})
	if err != nil {
		t.Fatalf("read response: %v", err)
	}
	body, err := io.ReadAll(res.Body)
	res.Body.Close()
	if err != nil {
		t.Fatalf("read body: %v", err)
	}
	return rawResponse{res, body}
}

// request is a request line with the headers every case sends.
func request(method, target string) string {
	return method + " " + target + " HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: application/json\r\nConnection: close\r\n\r\n"
}

// TestBadInputSweep sends malformed and hostile requests, as raw bytes
// where net/http's client would refuse them, to the real server with the
// production http.Server settings. Every answer is ours, in JSON, and never
// a 5xx, except where net/http answers before any handler runs (netHTTP
// below); the server answers normally afterwards.
func TestBadInputSweep(t *testing.T) {
	m := &Main{}
	startMain(t, m)
	addr := m.APIAddr()

	const (
		pathLong  = "path is longer than 2048 bytes"
		queryLong = "query is longer than 4096 bytes"
		badPath   = "path is not valid percent-encoding"
		badQuery  = "query is not valid percent-encoding"
		badPage   = "page must be a whole number from 1 to 1000000"
		badCVSS   = "cvss must be low, medium, high or critical"
		noCVE     = "CVE not found"
		noVendor  = "vendor not found"
		noPath    = "endpoint not found"
		method    = "method not allowed: use GET or HEAD"
	)
	type sweep struct {
		name   string
		method string // GET when empty
		target string
		raw    string // the whole request, instead of method and target
		status int
		msg    string // the error message; for a 200, the body when not empty
	}
	cases := []sweep{
		// lengths
		{name: "path 3 KiB", target: "/cve/" + strings.Repeat("A", 3<<10), status: 414, msg: pathLong},
		{name: "path 10 KiB", target: "/cve/" + strings.Repeat("A", 10<<10), status: 414, msg: pathLong},
		{name: "path 1 MiB", target: "/cve/" + strings.Repeat("A", 1<<20), status: 414, msg: pathLong},
		{name: "path 10 KiB, bad escapes", target: "/" + strings.Repeat("%Z", 5<<10), status: 414, msg: pathLong},
		{name: "path 3 KiB, bad escape", target: "/" + strings.Repeat("a", 3<<10) + "%ZZ", status: 414, msg: pathLong},
		{name: "query 5 KB", target: "/cve?x=" + strings.Repeat("q", 5000), status: 414, msg: queryLong},
		{name: "query 10 KB", target: "/cve?x=" + strings.Repeat("q", 10000), status: 414, msg: queryLong},
		{name: "query 1 MiB", target: "/cve?page=1&x=" + strings.Repeat("q", 1<<20), status: 414, msg: queryLong},
		{name: "1000 repeated parameters", target: "/cve?" + strings.TrimSuffix(strings.Repeat("page=1&", 1000), "&"), status: 414, msg: queryLong},
		{name: "500 repeated parameters", target: "/cve?" + strings.TrimSuffix(strings.Repeat("page=3&", 500), "&"), status: 200},
		{name: "repeated page, first counts", target: "/cve?page=4&page=1", status: 200, msg: "[]"},
		// NUL, escaped
		{name: "%00 in CVE name", target: "/cve/%00", status: 404, msg: noCVE},
		{name: "%00 in vendor name", target: "/vendors/v%00/cve", status: 404, msg: noVendor},
		{name: "%00 in page", target: "/cve?page=%00", status: 400, msg: badPage},
		{name: "%00 after page", target: "/cve?page=1%00", status: 400, msg: badPage},
		{name: "%00 in cvss", target: "/cve?cvss=%00", status: 400, msg: badCVSS},
		{name: "%00 in an unknown parameter", target: "/cve?x=%00", status: 200},
		// invalid escapes
		{name: "path %ZZ", target: "/cve/%ZZ", status: 400, msg: badPath},
		{name: "path %", target: "/cve/%", status: 400, msg: badPath},
		{name: "path %4", target: "/cve/%4", status: 400, msg: badPath},
		{name: "path %4 before query", target: "/vendors/v/products/%4?page=1", status: 400, msg: badPath},
		{name: "page=%ZZ", target: "/cve?page=%ZZ", status: 400, msg: "page is not valid percent-encoding"},
		{name: "page=%", target: "/cve?page=%", status: 400, msg: "page is not valid percent-encoding"},
		{name: "cvss=%4", target: "/cve?cvss=%4", status: 400, msg: "cvss is not valid percent-encoding"},
		{name: "unknown parameter %ZZ", target: "/cve?x=%ZZ&page=1", status: 200},
		// overlong UTF-8
		{name: "CVE %C0%AE%C0%AE", target: "/cve/%C0%AE%C0%AE", status: 404, msg: noCVE},
		{name: "vendor %E0%80%AF", target: "/vendors/%E0%80%AF", status: 404, msg: noVendor},
		{name: "vendor %C0%AE%C0%AE products", target: "/vendors/%C0%AE%C0%AE/products", status: 404, msg: noVendor},
		{name: "cvss %C0%AE", target: "/cve?cvss=%C0%AE", status: 400, msg: badCVSS},
		{name: "page %E0%80%AF", target: "/cve?page=%E0%80%AF", status: 400, msg: badPage},
		// dot segments are not resolved: names, or no endpoint
		{name: "/cve/../cve", target: "/cve/../cve", status: 404, msg: noPath},
		{name: "/vendors/..%2F..", target: "/vendors/..%2F..", status: 404, msg: noVendor},
		{name: "/vendors/../cve", target: "/vendors/../cve", status: 404, msg: noVendor},
		{name: "/cve/..", target: "/cve/..", status: 404, msg: noCVE},
		{name: "/cve/%2E%2E", target: "/cve/%2E%2E", status: 404, msg: noCVE},
		{name: "/../cve", target: "/../cve", status: 404, msg: noPath},
		// double slashes are not merged
		{name: "//cve", target: "//cve", status: 404, msg: noPath},
		{name: "/cve//CVE-2024-0001", target: "/cve//CVE-2024-0001", status: 404, msg: noPath},
		{name: "/vendors//cve", target: "/vendors//cve", status: 404, msg: noVendor}, // an empty name
		// other odd targets net/http accepts
		{name: "raw non-ASCII", target: "/cve/\xff\xfe", status: 404, msg: noCVE},
		{name: "raw quote and brackets", target: `/vendors/<a"b>`, status: 404, msg: noVendor},
		{name: "absolute form", target: "http://127.0.0.1/cve/CVE-2024-0001", status: 200},
		{name: "fragment is a name", target: "/cve/CVE-2024-0001#x", status: 404, msg: noCVE},
		{name: "semicolon in query", target: "/cve?page=2;x", status: 400, msg: badPage},
		{name: "asterisk", method: "OPTIONS", target: "*", status: 404, msg: noPath},
		{name: "h2 preface", raw: "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", status: 404, msg: noPath},
		{name: "HTTP/1.0, no Host", raw: "GET /cve/CVE-2024-0001 HTTP/1.0\r\n\r\n", status: 200},
		{name: "HTTP/1.2", raw: "GET /cve/%ZZ HTTP/1.2\r\nHost: x\r\nConnection: close\r\n\r\n", status: 400, msg: badPath},
		// methods
		{name: "POST", method: "POST", target: "/cve/CVE-2024-0001", status: 405, msg: method},
		{name: "PUT", method: "PUT", target: "/cve/CVE-2024-0001", status: 405, msg: method},
		{name: "DELETE", method: "DELETE", target: "/cve/CVE-2024-0001", status: 405, msg: method},
		{name: "PATCH", method: "PATCH", target: "/cve/CVE-2024-0001", status: 405, msg: method},
		{name: "OPTIONS", method: "OPTIONS", target: "/cve/CVE-2024-0001", status: 405, msg: method},
		{name: "TRACE", method: "TRACE", target: "/cve/CVE-2024-0001", status: 405, msg: method},
		{name: "CONNECT", method: "CONNECT", target: "/cve/CVE-2024-0001", status: 405, msg: method},
		{name: "CONNECT authority", method: "CONNECT", target: "127.0.0.1:443", status: 404, msg: noPath},
		{name: "PROPFIND", method: "PROPFIND", target: "/cve/CVE-2024-0001", status: 405, msg: method},
		{name: "made-up method", method: "BREW", target: "/cve/CVE-2024-0001", status: 405, msg: method},
		{name: "lower-case get", method: "get", target: "/cve/CVE-2024-0001", status: 405, msg: method},
		{name: "method of 9 KiB", method: strings.Repeat("M", 9<<10), target: "/cve/CVE-2024-0001", status: 405, msg: method},
		{name: "POST to no endpoint", method: "POST", target: "/nope", status: 404, msg: noPath},
		{name: "POST with a body", raw: "POST /cve HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nConnection: close\r\n\r\nhello", status: 405, msg: method},
		{name: "GET", method: "GET", target: "/cve/CVE-2024-0001", status: 200},
		{name: "HEAD", method: "HEAD", target: "/cve/CVE-2024-0001", status: 200},
		{name: "HEAD of a 414", method: "HEAD", target: "/cve/" + strings.Repeat("A", 10<<10), status: 414},
		// page
		{name: "page=0", target: "/cve?page=0", status: 400, msg: badPage},
		{name: "page=-1", target: "/cve?page=-1", status: 400, msg: badPage},
		{name: "page=1e9", target: "/cve?page=1e9", status: 400, msg: badPage},
		{name: "page=99999999999999999999", target: "/cve?page=99999999999999999999", status: 400, msg: badPage},
		{name: "page=1000001", target: "/cve?page=1000001", status: 400, msg: badPage},
		{name: "page empty", target: "/cve?page=", status: 400, msg: badPage},
		{name: "page without =", target: "/cve?page", status: 400, msg: badPage},
		{name: "page=1%20", target: "/cve?page=1%20", status: 400, msg: badPage},
		{name: "page=1+", target: "/cve?page=1+", status: 400, msg: badPage},
		{name: "page=+1", target: "/cve?page=+1", status: 400, msg: badPage},
		{name: "page=0x10", target: "/cve?page=0x10", status: 400, msg: badPage},
		{name: "page=%31%30 is page 10", target: "/cve?page=%31%30", status: 200, msg: "[]"},
		{name: "page=1000000", target: "/cve?page=1000000", status: 200, msg: "[]"},
		{name: "page=007", target: "/vendors/v/cve?page=007", status: 200, msg: "[]"},
		// cvss
		{name: "cvss empty", target: "/cve?cvss=", status: 400, msg: badCVSS},
		{name: "cvss=severe", target: "/cve?cvss=severe", status: 400, msg: badCVSS},
		{name: "cvss=HIGHx", target: "/cve?cvss=HIGHx", status: 400, msg: badCVSS},
		{name: "cvss=7", target: "/cve?cvss=7", status: 400, msg: badCVSS},
		{name: "cvss=high,low", target: "/cve?cvss=high,low", status: 400, msg: badCVSS},
		{name: "cvss=high%00", target: "/cve?cvss=high%00", status: 400, msg: badCVSS},
		{name: "cvss=%68igh is high", target: "/cve?cvss=%68igh", status: 200, msg: "[]"}, // every score is 0: no band
		{name: "cvss=HiGh", target: "/cve?cvss=HiGh&page=2", status: 200, msg: "[]"},
		{name: "cvss on another endpoint is ignored", target: "/vendors?cvss=bogus", status: 200},
		// raw bytes in the request line, brought to JSON by the listener
		{name: "raw NUL in path", target: "/cve/\x00", status: 400, msg: badPath},
		{name: "raw NUL in query", target: "/cve?page=\x00", status: 400, msg: badQuery},
		{name: "raw control byte in path", target: "/cve/CVE-2024-0001\x01", status: 400, msg: badPath},
		{name: "raw DEL in path", target: "/cve/\x7f", status: 400, msg: badPath},
		{name: "raw tab in path", target: "/cve/a\tb", status: 400, msg: badPath},
		{name: "raw ESC in query", target: "/cve?x=\x1b[2J", status: 400, msg: badQuery},
		{name: "raw space in path", target: "/cve/CVE-2024-0001 x", status: 400, msg: badPath},
		{name: "raw space in query", target: "/cve?page=1 ", status: 400, msg: badQuery},
		{name: "raw spaces and a long path", target: "/a b/" + strings.Repeat("c", 3000), status: 414, msg: pathLong},
	}
	// Where net/http answers before any handler can: text/plain (or no
	// body), and the listener cannot safely make it ours (see wire.NewListener).
	netHTTP := []sweep{
		{name: "no version", raw: "GET /cve/CVE-2024-0001\r\nHost: x\r\n\r\n", status: 400},
		{name: "empty target", raw: "GET  HTTP/1.1\r\nHost: x\r\n\r\n", status: 400},
		{name: "relative target", raw: "GET cve HTTP/1.1\r\nHost: x\r\n\r\n", status: 400},
		{name: "raw space, trailing space after version", raw: "GET /cve HTTP/1.1 \r\nHost: x\r\n\r\n", status: 400},
		{name: "raw space, no HTTP/1.x version", raw: "GET /a b HTTP/2.0\r\nHost: x\r\n\r\n", status: 400},
		{name: "raw NUL in method", raw: "G\x00T /cve HTTP/1.1\r\nHost: x\r\n\r\n", status: 400},
		{name: "HTTP/2.0 version", raw: "GET /cve HTTP/2.0\r\nHost: x\r\n\r\n", status: 505},
		{name: "HTTP/0.9 version", raw: "GET /cve HTTP/0.9\r\nHost: x\r\n\r\n", status: 505},
		{name: "missing Host", raw: "GET /cve HTTP/1.1\r\n\r\n", status: 400},
		{name: "malformed Host", raw: "GET /cve HTTP/1.1\r\nHost: a b\r\n\r\n", status: 400},
		{name: "two Hosts", raw: "GET /cve HTTP/1.1\r\nHost: x\r\nHost: y\r\n\r\n", status: 400},
		{name: "header without colon", raw: "GET /cve HTTP/1.1\r\nHost: x\r\nFoo\r\n\r\n", status: 400},
		{name: "raw NUL in a header", raw: "GET /cve HTTP/1.1\r\nHost: x\r\nFoo: a\x00b\r\n\r\n", status: 400},
		{name: "headers over 16 KiB", raw: "GET /cve HTTP/1.1\r\nHost: x\r\nFoo: " + strings.Repeat("f", 24<<10) + "\r\n\r\n", status: 431},
		{name: "method of 30 KiB", raw: strings.Repeat("M", 30<<10) + " /cve HTTP/1.1\r\nHost: x\r\n\r\n", status: 431},
		{name: "two Content-Lengths", raw: "GET /cve HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n", status: 400},
		{name: "unknown Transfer-Encoding", raw: "GET /cve HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip\r\n\r\n", status: 501},
		{name: "unknown Expect", raw: "GET /cve HTTP/1.1\r\nHost: x\r\nExpect: x\r\n\r\n", status: 417},
	}

	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			raw, meth := tc.raw, tc.method
			if meth == "" {
				meth = "GET"
			}
			if raw == "" {
				raw = request(meth, tc.target)
			}
			got := sendRaw(t, addr, meth, raw)
			res, body := got.res, got.body
			if res.StatusCode != tc.status {
				t.Fatalf("status %d, want %d; body %.200s", res.StatusCode, tc.status, body)
			}
			// A 200 big enough to be compressed also varies by
			// Accept-Encoding (see docs/API.md).
			wantVary := "Accept"
			if res.StatusCode == 200 && res.ContentLength >= 1024 {
				wantVary = "Accept, Accept-Encoding"
			}
			if ct, v := res.Header.Get("Content-Type"), res.Header.Get("Vary"); ct != "application/json" || v != wantVary {
				t.Errorf("Content-Type %q, Vary %q, want %q", ct, v, wantVary)
			}
			if meth == "HEAD" {
				if len(body) != 0 {
					t.Errorf("HEAD with %d body bytes", len(body))
				}
				return
			}
			if cl := res.Header.Get("Content-Length"); cl != strconv.Itoa(len(body)) || len(res.TransferEncoding) != 0 {
				t.Errorf("Content-Length %q, Transfer-Encoding %v, for %d body bytes", cl, res.TransferEncoding, len(body))
			}
			if res.StatusCode == 405 && res.Header.Get("Allow") != "GET, HEAD" {
				t.Errorf("405 with Allow %q", res.Header.Get("Allow"))
			}
			if res.StatusCode == 200 {
				if !json.Valid(body) || (tc.msg != "" && string(body) != tc.msg) {
					t.Errorf("body %.200s, want JSON %s", body, tc.msg)
				}
				return
			}
			var e map[string]string
			if err := json.Unmarshal(body, &e); err != nil || len(e) != 1 || e["message"] == "" {
				t.Fatalf("error body %q is not {\"message\": ...}", body)
			}
			if tc.msg != "" && e["message"] != tc.msg {
				t.Errorf("message %q, want %q", e["message"], tc.msg)
			}
		})
	}
	for _, tc := range netHTTP {
		t.Run("net/http "+tc.name, func(t *testing.T) {
			got := sendRaw(t, addr, "GET", tc.raw)
			if got.res.StatusCode != tc.status || strings.Contains(got.res.Header.Get("Content-Type"), "json") {
				t.Fatalf("got %d %q %.100q; want net/http's own %d", got.res.StatusCode, got.res.Header.Get("Content-Type"), got.body, tc.status)
			}
		})
	}

	got := sendRaw(t, addr, "GET", request("GET", "/cve/CVE-2024-0001"))
	if got.res.StatusCode != 200 || !strings.Contains(string(got.body), `"name":"CVE-2024-0001"`) {
		t.Fatalf("after the sweep: %d %.200s", got.res.StatusCode, got.body)
	}
}

// TestSlowClients keeps 200 connections sending their request headers one
// byte a second. Normal requests keep being answered meanwhile, and the
// server closes each slow connection once ReadHeaderTimeout (1 s here)
// has passed, without answering it. Each slow client reconnects until the
// normal requests are done, so they are never without company.
func TestSlowClients(t *testing.T) {
	if testing.Short() {
		t.Skip("takes a few seconds")
	}
	m := &Main{ReadHeaderTimeout: time.Second}
	startMain(t, m)
	addr := m.APIAddr()
	const slow = 200
	req := request("GET", "/cve/CVE-2024-0001")

	var (
		stop      atomic.Bool
		started   sync.WaitGroup // every slow client has a first connection
		closedAll sync.WaitGroup // every slow client has seen the server close one
		wg        sync.WaitGroup
	)
	started.Add(slow)
	closedAll.Add(slow)
	errs := make(chan error, slow)
	for i := 0; i < slow; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			first, closed := true, false
			for !stop.Load() || !closed {
				err := slowClient(addr, req, func() {
					if first {
						first = false
						started.Done()
					}
				})
				if err != nil {
					if first {
						started.Done()
					}
					if !closed {
						closedAll.Done()
					}
					errs <- err
					return
				}
				if !closed {
					closed = true
					closedAll.Done()
				}
			}
		}()
	}
	started.Wait()

	client := &http.Client{Timeout: 20 * time.Second}
	defer client.CloseIdleConnections()
	for i := 0; i < 30; i++ {
		res, err := client.Get("http://" + addr + "/cve?page=" + strconv.Itoa(1+i%3))
		if err != nil {
			t.Fatalf("normal request %d among slow clients: %v", i, err)
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != 200 || !json.Valid(body) {
			t.Fatalf("normal request %d among slow clients: %d %.200s", i, res.StatusCode, body)
		}
	}
	stop.Store(true)
	closedAll.Wait()
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// slowClient dials addr and sends req one byte a second until the server
// closes the connection (nil). It calls connected once the connection is
// up. It fails if the server answers, or keeps the connection for 30 s
// (far past the ReadHeaderTimeout).
func slowClient(addr, req string, connected func()) error {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		return err
	}
	defer c.Close()
	connected()
	deadline := time.Now().Add(30 * time.Second)
	buf := make([]byte, 64)
	for i := 0; ; i = (i + 1) % len(req) {
		if _, err := c.Write([]byte{req[i]}); err != nil {
			if closedByPeer(err) {
				return nil
			}
			return err
		}
		// The read waits out the second and sees the server hang up.
		c.SetReadDeadline(time.Now().Add(time.Second))
		n, err := c.Read(buf)
		switch {
		case n > 0:
			return errors.New("a slow client was answered: " + strconv.Quote(string(buf[:n])))
		case closedByPeer(err):
			return nil
		case !isTimeout(err):
			return err
		case time.Now().After(deadline):
			return errors.New("a slow connection was still open after 30 s")
		}
	}
}

// closedByPeer reports whether err is what a connection the server closed
// gives.
func closedByPeer(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}
