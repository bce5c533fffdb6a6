package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/vulnd/vulnd/httpapi"
	"github.com/vulnd/vulnd/httpapi/wire"
	"github.com/vulnd/vulnd/index"
	"github.com/vulnd/vulnd/loader"
	"github.com/vulnd/vulnd/loader/oci"
)

// Main is one running server: the live index behind an atomic pointer, the
// listeners, and the signal loop. Tests start it on 127.0.0.1:0.
type Main struct {
	Snapshot  string
	Addr      string
	AdminAddr string
	PageSize  int
	// DrainWait is how long SIGTERM keeps serving with /readyz at 503, so
	// load balancers stop sending before the listeners close.
	DrainWait time.Duration
	// DrainTimeout bounds how long SIGTERM then waits for in-flight
	// requests.
	DrainTimeout time.Duration
	Log          *slog.Logger
	// AccessLog logs one line per API request to Log.
	AccessLog bool
	// CacheControl is the Cache-Control header of every API 200 and 304.
	CacheControl string
	// OnReload, if set, is called after every load attempt with its error.
	OnReload func(error)
	// Pprof serves net/http/pprof on the admin listener.
	Pprof bool
	// GCHeadroomMiB paces the GC after each load (see settleMemory); 0
	// leaves Go's default.
	GCHeadroomMiB int
	// ReadHeaderTimeout, ReadTimeout, WriteTimeout and IdleTimeout are
	// http.Server's limits on every listener; when 0, 5 s, 10 s, 30 s and
	// 120 s.
	ReadHeaderTimeout time.Duration
	ReadTimeout       time.Duration
	WriteTimeout      time.Duration
	IdleTimeout       time.Duration
	// Pull, when set (oci://REGISTRY/REPOSITORY:TAG), keeps Snapshot on
	// what that tag names: polled at start and every PullEvery (less up
	// to a fifth at random), and on SIGHUP; an empty Snapshot is filled
	// from it before the first load. PlainHTTP talks HTTP to the
	// registry. OnPull, if set, is called after every poll.
	Pull      string
	PullEvery time.Duration
	PlainHTTP bool
	OnPull    func(outcome string, err error)
	// MaxDataAge, when more than 0, marks the snapshot stale once its
	// newest input is older than that (see stale): GET /status's stale,
	// the metric vulnd_snapshot_stale, one warning in the log. It keeps
	// serving, and stays ready unless StaleUnready is set: then /readyz
	// answers 503 while the snapshot is stale. Now is the clock this is
	// judged by; time.Now when nil.
	MaxDataAge   time.Duration
	StaleUnready bool
	Now          func() time.Time

	// warming is the goroutine of warm, which stops once closed is set.
	warming sync.WaitGroup
	closed  atomic.Bool
	// loadMu makes loads one at a time: SIGHUP's and the puller's.
	loadMu   sync.Mutex
	puller   *puller
	pollNow  chan struct{}
	stopPull context.CancelFunc
	pullDone chan struct{}

	cur      atomic.Pointer[index.Index]
	draining atomic.Bool
	metrics  *serveMetrics
	api      *http.Server
	admin    *http.Server
	apiLn    net.Listener
	adminLn  net.Listener

	// staleWarned: the snapshot swapped in last was logged as stale;
	// staleTimer looks at it when it turns stale (see watchStale).
	staleWarned atomic.Bool
	staleMu     sync.Mutex
	staleTimer  *time.Timer
}

func cmdServe(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("serve")
	m := &Main{}
	fs.StringVar(&m.Snapshot, "snapshot", "", "snapshot directory to serve, `DIR` (required)")
	fs.StringVar(&m.Addr, "addr", "127.0.0.1:8080", "API listen address, `HOST:PORT`")
	fs.StringVar(&m.AdminAddr, "admin-addr", "", "admin listen address, `HOST:PORT` (/healthz, /readyz, /metrics); off when empty; not -addr's")
	fs.IntVar(&m.PageSize, "page-size", httpapi.DefaultPageSize, "items per page of every paged list")
	fs.DurationVar(&m.DrainWait, "drain-wait", 5*time.Second, "how long SIGTERM keeps serving with /readyz at 503 before closing the listeners")
	fs.DurationVar(&m.DrainTimeout, "drain-timeout", 30*time.Second, "how long SIGTERM then waits for in-flight requests")
	logFormat := fs.String("log-format", "text", "log `format`: text or json")
	fs.BoolVar(&m.AccessLog, "access-log", false, "log one line per API request")
	fs.StringVar(&m.CacheControl, "cache-control", "public, max-age=60", "Cache-Control header of every API answer that has an ETag; none when empty")
	pidFile := fs.String("pidfile", "", "write the process id to `PATH` once started (atomically), remove it on a clean exit; refuse to start if it names another running vulnd")
	fs.IntVar(&m.GCHeadroomMiB, "gc-headroom", defaultGCHeadroomMiB, "how far, in `MiB`, the heap may grow past the loaded snapshot before the GC collects: sets the GC percent after each load; 0 leaves Go's default (the heap doubles), and GOGC in the environment overrides it")
	fs.BoolVar(&m.Pprof, "pprof", false, "serve net/http/pprof under /debug/pprof/ on the admin listener (needs -admin-addr)")
	fs.StringVar(&m.Pull, "pull", "", "follow `oci://REGISTRY/REPOSITORY:TAG` (what vulnd publish pushed): a new artifact is downloaded beside DIR, loaded, put in DIR's place and served; an empty DIR is filled from it first")
	fs.DurationVar(&m.PullEvery, "pull-every", 5*time.Minute, "with -pull, how often to check the tag (less up to a fifth at random, so replicas spread out)")
	fs.BoolVar(&m.PlainHTTP, "plain-http", false, "with -pull, talk HTTP, not HTTPS, to the registry: only for one on localhost or a private network")
	fs.DurationVar(&m.MaxDataAge, "max-data-age", 0, "mark the snapshot stale once its newest input is older than `D` (GET /status stale, metric vulnd_snapshot_stale, one warning); it keeps serving; 0: never")
	fs.BoolVar(&m.StaleUnready, "stale-unready", false, "with -max-data-age, /readyz answers 503 while the snapshot is stale (it still serves): only where other replicas can have fresher data")
	if err := parseFlags(fs, args, stdout); err != nil {
		return err
	}
	if fs.NArg() > 0 && m.Snapshot == "" && !strings.HasPrefix(fs.Arg(0), "-") {
		return usageError{fmt.Errorf("unexpected argument %q: the snapshot is -snapshot DIR", fs.Arg(0))}
	}
	if err := checkArgs(fs, "", 0, 0); err != nil {
		return err
	}
	switch *logFormat {
	case "text":
		m.Log = slog.New(slog.NewTextHandler(stderr, nil))
	case "json":
		m.Log = slog.New(slog.NewJSONHandler(stderr, nil))
	default:
		return usageError{fmt.Errorf("-log-format must be text or json, not %q", *logFormat)}
	}
	if m.DrainWait < 0 || m.DrainTimeout < 0 {
		return usageError{errors.New("-drain-wait and -drain-timeout must not be negative")}
	}
	if m.Snapshot == "" {
		return usageError{errors.New("-snapshot is required")}
	}
	if m.PageSize < 1 {
		return usageError{errors.New("-page-size must be at least 1")}
	}
	if m.MaxDataAge < 0 {
		return usageError{errors.New("-max-data-age must not be negative")}
	}
	if m.StaleUnready && (m.MaxDataAge == 0 || m.AdminAddr == "") {
		return usageError{errors.New("-stale-unready needs -max-data-age and -admin-addr: it answers /readyz on the admin listener")}
	}
	if m.Pprof && m.AdminAddr == "" {
		return usageError{errors.New("-pprof needs -admin-addr: profiles are served on the admin listener only")}
	}
	if err := checkAddrs(m.Addr, m.AdminAddr); err != nil {
		return usageError{err}
	}
	if m.Pull != "" {
		if _, err := oci.ParseRef(m.Pull); err != nil {
			return usageError{fmt.Errorf("-pull: %w", err)}
		}
		if m.PullEvery < time.Second {
			return usageError{errors.New("-pull-every must be at least 1s")}
		}
	}
	// Catch signals before the (possibly long) load, so an early SIGHUP
	// does not kill the process.
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGHUP, syscall.SIGTERM, syscall.SIGINT)
	defer signal.Stop(sigs)
	if *pidFile != "" {
		// Written before the load, so that a reload sent while it runs
		// reaches this process (it is caught above).
		if err := writePidFile(*pidFile); err != nil {
			return err
		}
		defer removePidFile(*pidFile, m.Log)
	}
	if err := m.Open(); err != nil {
		return err
	}
	return m.Run(sigs)
}

// checkAddrs refuses an admin address that is the API's: the same port
// on the same host, or on any host when either is a wildcard (":8080",
// "0.0.0.0:8080", "[::]:8080"), since one listener would take the port
// from the other. Port 0 (any free port) never clashes.
func checkAddrs(addr, admin string) error {
	if admin == "" {
		return nil
	}
	if sameListenAddr(addr, admin) {
		return fmt.Errorf("-admin-addr %s is -addr %s: the admin listener needs a port of its own", admin, addr)
	}
	return nil
}

func sameListenAddr(a, b string) bool {
	ha, pa, errA := net.SplitHostPort(a)
	hb, pb, errB := net.SplitHostPort(b)
	if errA != nil || errB != nil {
		return a == b // net.Listen will say what is wrong with them
	}
	na, errA := net.LookupPort("tcp", pa)
	nb, errB := net.LookupPort("tcp", pb)
	if errA != nil || errB != nil {
		return a == b
	}
	if na == 0 || na != nb {
		return false
	}
	wildcard := func(h string) bool {
		ip, err := netip.ParseAddr(h)
		return h == "" || err == nil && ip.IsUnspecified()
	}
	if wildcard(ha) || wildcard(hb) {
		return true
	}
	ia, errA := netip.ParseAddr(ha)
	ib, errB := netip.ParseAddr(hb)
	if errA == nil && errB == nil {
		return ia.Unmap() == ib.Unmap()
	}
	return strings.EqualFold(ha, hb)
}

// Open loads the snapshot, then opens the listeners and starts serving:
// the API port answers only once a snapshot is loaded.
func (m *Main) Open() error {
	if m.Log == nil {
		m.Log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if err := checkAddrs(m.Addr, m.AdminAddr); err != nil {
		return err
	}
	// Metrics are kept only when there is a listener to read them from.
	if m.AdminAddr != "" {
		m.metrics = newServeMetrics(m.cur.Load, m.stale)
	}
	if m.Pull != "" {
		if err := m.startPull(); err != nil {
			return err
		}
	}
	if m.cur.Load() == nil {
		err := m.Reload()
		if err != nil && m.puller != nil {
			// The snapshot on disk is damaged, or of an older format:
			// the registry has a good one.
			m.Log.Error("the snapshot on disk does not load; pulling the tag's", "dir", m.Snapshot, "err", err)
			if perr := m.puller.firstPull(); perr == nil {
				err = nil
			} else {
				err = fmt.Errorf("%w; and %w", err, perr)
			}
		}
		if err != nil {
			m.Close()
			return fmt.Errorf("load failed: %w", err)
		}
	}
	var err error
	if m.apiLn, err = net.Listen("tcp", m.Addr); err != nil {
		return err
	}
	opt := httpapi.Options{PageSize: m.PageSize, Log: m.Log, CacheControl: m.CacheControl, Draining: m.draining.Load}
	if m.MaxDataAge > 0 {
		opt.Stale = m.stale
	}
	if m.AccessLog {
		opt.AccessLog = m.Log
	}
	if m.metrics != nil {
		opt.Metrics = m.metrics.http
	}
	m.api = m.newHTTPServer(httpapi.New(m.cur.Load, opt))
	go m.serve(m.api, wire.NewListener(m.apiLn))
	if m.AdminAddr != "" {
		if m.adminLn, err = net.Listen("tcp", m.AdminAddr); err != nil {
			m.apiLn.Close()
			return err
		}
		m.admin = m.newHTTPServer(httpapi.Admin(m.cur.Load, m.ready,
			httpapi.AdminOptions{Metrics: m.metrics.handler(), Pprof: m.Pprof}))
		go m.serve(m.admin, m.adminLn)
	}
	m.Log.Info("serving", "addr", m.apiLn.Addr().String(), "admin", m.AdminAddr)
	// Only now, with the port open: returning the load's garbage to the
	// OS takes a collection and some hundred milliseconds of madvise.
	m.settleMemory()
	if m.puller != nil {
		ctx, cancel := context.WithCancel(context.Background())
		m.stopPull, m.pullDone, m.pollNow = cancel, make(chan struct{}), make(chan struct{}, 1)
		go func() {
			defer close(m.pullDone)
			m.puller.run(ctx, orDefault(m.PullEvery, 5*time.Minute), m.pollNow)
		}()
	}
	return nil
}

// startPull sets up the puller; when the snapshot directory holds no
// snapshot, it fills it from the registry (and serves that) first.
func (m *Main) startPull() error {
	p, err := newPuller(m)
	if err != nil {
		return err
	}
	m.puller = p
	p.removeStale()
	if _, err := os.Stat(filepath.Join(m.Snapshot, loader.ManifestName)); !errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return p.firstPull()
}

func (m *Main) serve(s *http.Server, ln net.Listener) {
	if err := s.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		m.Log.Error("listener failed", "addr", ln.Addr().String(), "err", err)
	}
}

// The limits of every listener's http.Server where Main leaves them 0.
// On the API listener they act up to wire.SweepPeriod (250 ms) after they
// pass: its connections' deadlines are coarse, so that net/http moving
// them on every request re-arms no timer (see wire.NewListener).
const (
	defaultReadHeaderTimeout = 5 * time.Second
	defaultReadTimeout       = 10 * time.Second
	defaultWriteTimeout      = 30 * time.Second
	defaultIdleTimeout       = 120 * time.Second
)

// maxRequestHead is the longest request head (request line, headers and
// the blank line after them) served; a longer one gets net/http's 431.
const maxRequestHead = 16 << 10

// newHTTPServer sets the timeouts and header limits every listener has.
// net/http's own error lines go to m.Log, and "OPTIONS *" reaches the
// handler (a 404 like any unknown path) instead of net/http's empty 200.
func (m *Main) newHTTPServer(h http.Handler) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: orDefault(m.ReadHeaderTimeout, defaultReadHeaderTimeout),
		ReadTimeout:       orDefault(m.ReadTimeout, defaultReadTimeout),
		WriteTimeout:      orDefault(m.WriteTimeout, defaultWriteTimeout),
		IdleTimeout:       orDefault(m.IdleTimeout, defaultIdleTimeout),
		// net/http reads 4096 bytes past MaxHeaderBytes before it
		// answers 431, so this makes the limit maxRequestHead.
		MaxHeaderBytes:               maxRequestHead - 4096,
		DisableGeneralOptionsHandler: true,
		ErrorLog:                     slog.NewLogLogger(m.Log.Handler(), slog.LevelWarn),
	}
}

func orDefault(d, def time.Duration) time.Duration {
	if d <= 0 {
		return def
	}
	return d
}

// APIAddr is the address the API listener is bound to.
func (m *Main) APIAddr() string { return m.apiLn.Addr().String() }

// Reload loads the snapshot directory and swaps it in. On error the
// current index stays and the error is returned, and logged unless this
// was the first load (Open returns it then).
func (m *Main) Reload() error {
	_, err := m.reload()
	return err
}

// reload is Reload, also telling whether a new index was swapped in. A
// snapshot whose manifest is the one served (same id) is not decoded
// again: a SIGHUP sent before the refresh moved a new snapshot into
// place costs a manifest read, not a full load.
func (m *Main) reload() (swapped bool, err error) {
	m.loadMu.Lock()
	defer m.loadMu.Unlock()
	cur := m.cur.Load()
	first := cur == nil
	if !first {
		if id, err := loader.ID(m.Snapshot); err == nil && id == cur.Meta().ID {
			m.Log.Info("snapshot unchanged; not loaded again", "dir", m.Snapshot, "id", id)
			m.metrics.unchanged()
			if m.OnReload != nil {
				m.OnReload(nil)
			}
			return false, nil
		}
	}
	start := time.Now()
	ix, man, err := m.loadForServing(m.Snapshot)
	took := time.Since(start)
	if m.OnReload != nil {
		defer func() { m.OnReload(err) }()
	}
	m.metrics.reloaded(err, took)
	if err != nil {
		if !first {
			m.Log.Error("reload failed; keeping the current snapshot", "dir", m.Snapshot, "err", err,
				"duration", took.Round(time.Millisecond))
		}
		return false, err
	}
	ix = m.pulledAs(ix)
	m.cur.Store(ix)
	m.logLoaded("snapshot loaded", ix, man, took)
	m.watchStale(ix)
	m.warm(ix)
	return true, nil
}

// loadForServing loads the snapshot in dir to serve it. While another
// snapshot serves, the new one's vendor and product tables, which a load
// leaves for later (see index.BuildEntriesDeferVendors), are made before
// it takes the served one's place: no request waits for them after a
// reload, and tables whose counts are not the manifest's fail the load,
// so the served snapshot stays. A first load serves at once and leaves
// them to the warm-up (see warm), which logs such an error.
func (m *Main) loadForServing(dir string) (*index.Index, loader.Manifest, error) {
	ix, man, err := loader.Load(dir)
	if err == nil && m.cur.Load() != nil {
		if err = ix.WarmVendors(); err != nil {
			return nil, loader.Manifest{}, fmt.Errorf("loader: %s: %w", dir, err)
		}
	}
	return ix, man, err
}

// pulledAs is ix as served: with the artifact its directory's
// artifact.json names only when this server follows that reference
// (serve -pull), so wrote the file itself. A snapshot directory copied
// from a replica, artifact.json and all, was not pulled by this one: no
// artifact in /status or the metrics.
func (m *Main) pulledAs(ix *index.Index) *index.Index {
	a := ix.Meta().Artifact
	if a == (index.Artifact{}) || m.puller != nil && a.Ref == m.puller.ref.String() {
		return ix
	}
	return ix.WithArtifact(index.Artifact{})
}

// ready is /readyz's answer while a snapshot is loaded: not while
// draining, nor while the snapshot is stale under StaleUnready.
func (m *Main) ready() bool {
	return !m.draining.Load() && !(m.StaleUnready && m.stale(m.cur.Load()))
}

// logLoaded logs the snapshot just swapped in.
func (m *Main) logLoaded(msg string, ix *index.Index, man loader.Manifest, took time.Duration) {
	c := man.Counts
	m.Log.Info(msg, "dir", m.Snapshot, "id", ix.Meta().ID, "built_at", man.BuiltAt,
		"cves", c.CVEs, "cwes", c.CWEs, "vendors", c.Vendors, "products", c.Products, "reports", c.Reports,
		"alerts", c.Alerts, "duration", took.Round(time.Millisecond))
}

// Run handles signals until SIGTERM or SIGINT, then drains and returns.
func (m *Main) Run(sigs <-chan os.Signal) error {
	for sig := range sigs {
		switch sig {
		case syscall.SIGHUP:
			m.Reload() // logged; the old snapshot keeps serving on error
			if m.pollNow != nil {
				select { // and the registry is asked at once
				case m.pollNow <- struct{}{}:
				default:
				}
			}
			// The replaced index (or a failed load's buffers) is garbage
			// now. An unchanged snapshot frees what traffic left, too:
			// every SIGHUP ends with RSS settled.
			m.settleMemory()
		case syscall.SIGTERM, syscall.SIGINT:
			start := time.Now()
			m.drain(sig, sigs)
			err := m.Close()
			took := time.Since(start).Round(time.Millisecond)
			if err != nil {
				m.Log.Error("drain cut short; exiting", "err", err, "duration", took)
				return err
			}
			m.Log.Info("drained; exiting cleanly", "duration", took)
			return nil
		}
	}
	return m.Close()
}

// drain makes /readyz answer 503 and keeps serving for DrainWait, so load
// balancers take this replica out before its listeners close. A second
// SIGTERM or SIGINT ends the wait at once.
func (m *Main) drain(sig os.Signal, sigs <-chan os.Signal) {
	m.draining.Store(true)
	m.Log.Info("draining", "signal", sig.String(), "wait", m.DrainWait, "timeout", m.DrainTimeout)
	if m.DrainWait <= 0 {
		return
	}
	t := time.NewTimer(m.DrainWait)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			return
		case s := <-sigs:
			if s == syscall.SIGTERM || s == syscall.SIGINT {
				m.Log.Info("second signal: closing now", "signal", s.String())
				return
			}
		}
	}
}

// Close stops accepting, waits for in-flight requests (up to
// DrainTimeout) and closes the listeners.
func (m *Main) Close() error {
	m.draining.Store(true)
	m.closed.Store(true)
	m.stopStale()
	if m.stopPull != nil {
		m.stopPull()
		<-m.pullDone
	}
	m.warming.Wait() // no load is left to start another
	timeout := m.DrainTimeout
	if timeout <= 0 {
		timeout = 30 * time.Second
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	var errs []error
	if m.api != nil {
		if err := m.api.Shutdown(ctx); err != nil {
			errs = append(errs, fmt.Errorf("api: %w", err))
		}
	}
	if m.admin != nil {
		if err := m.admin.Shutdown(ctx); err != nil {
			errs = append(errs, fmt.Errorf("admin: %w", err))
		}
	}
	return errors.Join(errs...)
}
