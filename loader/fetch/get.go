package fetch

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	neturl "net/url"
	"strconv"
	"strings"
	"time"
)

// Defaults of Getter.
const (
	DefaultAttempts = 5
	// DefaultTimeout bounds one try, the body included: NVD's largest
	// yearly feed is some tens of MB.
	DefaultTimeout = 10 * time.Minute
	// maxRetryAfter bounds the wait a server's Retry-After may ask for.
	maxRetryAfter = 10 * time.Minute
)

// Getter makes GET requests that are tried again, with exponential
// backoff and jitter, on network errors, timeouts, 429 and 5xx (waiting
// as long as a Retry-After says, up to 10 minutes), and when the body is
// cut short. Other statuses fail at once. It asks for the file's own
// bytes (Accept-Encoding: identity, unless hdr says otherwise). The zero
// Getter uses http.DefaultClient and the defaults; a Getter is safe for
// concurrent use when its Client, Now and Sleep are.
type Getter struct {
	Client    *http.Client  // nil: http.DefaultClient
	Attempts  int           // tries per request; 0: DefaultAttempts
	Timeout   time.Duration // per try, the body included; 0: DefaultTimeout
	UserAgent string        // "": "vulnd-fetch"
	// Now and Sleep are the clock, replaceable in tests. Sleep must
	// return ctx's error when ctx ends first.
	Now   func() time.Time
	Sleep func(ctx context.Context, d time.Duration) error
}

// ErrNotModified is what Get returns for a 304 answer to a conditional
// request.
var ErrNotModified = errors.New("fetch: not modified")

// Get GETs url with the headers hdr and hands a 200 answer to use, which
// reads the body, or a 206 when hdr asks for a Range. hdr is read again
// at each try, so use may change it for the next (a Range that starts
// where a cut transfer stopped). If hdr makes the request conditional (If-None-Match or
// If-Modified-Since), a 304 returns ErrNotModified without calling use.
// When use fails, the request is tried again only if reading the body
// failed (a transfer cut short); any other error of use ends it. Every
// error names url. When ctx ends, Get returns an error that wraps ctx's.
func (g *Getter) Get(ctx context.Context, url string, hdr http.Header, use func(*http.Response) error) error {
	attempts := max(cmp.Or(g.Attempts, DefaultAttempts), 1)
	var last error
	for attempt := 0; attempt < attempts; attempt++ {
		if attempt > 0 {
			wait := backoff(attempt)
			var ra retryAfter
			if errors.As(last, &ra) {
				wait = ra.d
			}
			if err := g.sleep(ctx, wait); err != nil {
				return fmt.Errorf("%s: interrupted: %w", url, err)
			}
		}
		err, again := g.try(ctx, url, hdr, use)
		if !again {
			return err
		}
		if ctx.Err() != nil {
			return fmt.Errorf("%s: interrupted: %w", url, ctx.Err())
		}
		last = err
	}
	return fmt.Errorf("%w (after %d tries)", last, attempts)
}

// try makes one request; again says whether its failure is worth another.
func (g *Getter) try(ctx context.Context, url string, hdr http.Header, use func(*http.Response) error) (err error, again bool) {
	timeout := cmp.Or(g.Timeout, DefaultTimeout)
	tctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(tctx, http.MethodGet, url, nil)
	if err != nil {
		return fmt.Errorf("%s: %w", url, err), false
	}
	for k, v := range hdr {
		req.Header[k] = v
	}
	req.Header.Set("User-Agent", cmp.Or(g.UserAgent, "vulnd-fetch"))
	if req.Header.Get("Accept-Encoding") == "" {
		// The file's own bytes: otherwise net/http asks for gzip and
		// undoes it, and a server that labels a .gz file
		// "Content-Encoding: gzip" (Apache's AddEncoding) would hand
		// over the JSON in place of the .json.gz.
		req.Header.Set("Accept-Encoding", "identity")
	}
	client := g.Client
	if client == nil {
		client = http.DefaultClient
	}
	// timedOut words a failure of this try that its own deadline caused.
	timedOut := func(err error) error {
		if ctx.Err() == nil && errors.Is(tctx.Err(), context.DeadlineExceeded) {
			return fmt.Errorf("%s: no complete answer within %s", url, timeout)
		}
		return fmt.Errorf("%s: %w", url, err)
	}
	res, err := client.Do(req)
	if err != nil {
		return timedOut(unwrapURLError(err)), true
	}
	defer res.Body.Close()
	conditional := hdr.Get("If-None-Match") != "" || hdr.Get("If-Modified-Since") != ""
	switch {
	case res.StatusCode == http.StatusOK:
	case res.StatusCode == http.StatusPartialContent && hdr.Get("Range") != "":
		// The rest of a file asked for with Range: use reads
		// Content-Range.
	case res.StatusCode == http.StatusNotModified && conditional:
		return ErrNotModified, false
	case res.StatusCode == http.StatusTooManyRequests || res.StatusCode >= 500:
		err := fmt.Errorf("%s: %s", url, res.Status)
		if d, ok := parseRetryAfter(res.Header.Get("Retry-After"), g.now()); ok {
			return retryAfter{err, d}, true
		}
		return err, true
	default:
		return fmt.Errorf("%s: %s", url, res.Status), false
	}
	body := &readRecorder{r: res.Body}
	res.Body = struct {
		io.Reader
		io.Closer
	}{body, res.Body}
	if err := use(res); err != nil {
		if body.err != nil && body.err != io.EOF {
			return timedOut(body.err), true // the transfer was cut
		}
		return fmt.Errorf("%s: %w", url, err), false
	}
	return nil, false
}

// unwrapURLError drops the *url.Error wrapping of a client error, which
// repeats the method and the URL.
func unwrapURLError(err error) error {
	var ue *neturl.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

func (g *Getter) now() time.Time {
	if g.Now != nil {
		return g.Now()
	}
	return time.Now()
}

func (g *Getter) sleep(ctx context.Context, d time.Duration) error {
	if g.Sleep != nil {
		return g.Sleep(ctx, d)
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// readRecorder remembers the error its reader last returned.
type readRecorder struct {
	r   io.Reader
	err error
}

func (r *readRecorder) Read(b []byte) (int, error) {
	n, err := r.r.Read(b)
	if err != nil {
		r.err = err
	}
	return n, err
}

// retryAfter is a refusal that said when to come back.
type retryAfter struct {
	error
	d time.Duration
}

func (r retryAfter) Unwrap() error { return r.error }

// parseRetryAfter reads a Retry-After value, delay-seconds or an HTTP
// date (RFC 9110, section 10.2.3), as a wait from now of at most
// maxRetryAfter. A date in the past is no wait.
func parseRetryAfter(v string, now time.Time) (time.Duration, bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, false
	}
	if s, err := strconv.ParseUint(v, 10, 64); err == nil {
		return time.Duration(min(s, uint64(maxRetryAfter/time.Second))) * time.Second, true
	}
	if t, err := http.ParseTime(v); err == nil {
		return min(max(t.Sub(now), 0), maxRetryAfter), true
	}
	return 0, false
}

// backoff is the wait before try attempt+1 (attempt ≥ 1): 1 s doubling up
// to a minute, of which a random half, so a fleet does not retry in step.
func backoff(attempt int) time.Duration {
	d := time.Minute
	if attempt < 7 {
		d = min(time.Second<<(attempt-1), time.Minute)
	}
	return d/2 + time.Duration(rand.Int64N(int64(d/2)+1))
}
