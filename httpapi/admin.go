package httpapi

import (
	"net/http"
	"net/http/pprof"
	"strconv"
	"strings"

	"github.com/vulnd/vulnd/index"
)

// AdminOptions are the admin listener's optional parts.
type AdminOptions struct {
	// Metrics, when not nil, is served at GET /metrics.
	Metrics http.Handler
	// Pprof serves net/http/pprof's profiles under /debug/pprof/. Off by
	// default: a profile costs CPU, and its listing shows the command line.
	Pprof bool
}

// Admin returns the handler of the admin listener: GET /healthz answers
// 200 while the process runs; GET /readyz answers 200 while a snapshot is
// loaded and ready() is true (false while draining), else 503; GET
// /metrics and /debug/pprof/ as opt says. Every other path is a JSON 404
// and every other method a JSON 405, like the API's.
func Admin(current func() *index.Index, ready func() bool, opt AdminOptions) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, r, http.StatusOK, []byte(`{"status":"ok"}`))
	})
	mux.HandleFunc("/readyz", func(w http.ResponseWriter, r *http.Request) {
		if current() == nil || !ready() {
			writeJSON(w, r, http.StatusServiceUnavailable, []byte(`{"status":"not ready"}`))
			return
		}
		writeJSON(w, r, http.StatusOK, []byte(`{"status":"ready"}`))
	})
	if opt.Metrics != nil {
		mux.Handle("/metrics", opt.Metrics)
	}
	if opt.Pprof {
		// pprof.Index serves the named profiles below it too.
		mux.HandleFunc("/debug/pprof/", pprof.Index)
		mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
		mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
		mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
		mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h, pattern := mux.Handler(r)
		switch {
		case pattern == "":
			writeJSON(w, r, http.StatusNotFound, errNoEndpoint.body)
		case r.Method == http.MethodGet || r.Method == http.MethodHead,
			// pprof's symbol lookup takes POST.
			r.Method == http.MethodPost && strings.HasPrefix(pattern, "/debug/pprof/"):
			h.ServeHTTP(w, r)
		default:
			w.Header()["Allow"] = allowHeader
			writeJSON(w, r, http.StatusMethodNotAllowed, errMethod.body)
		}
	})
}

func writeJSON(w http.ResponseWriter, r *http.Request, status int, body []byte) {
	hdr := w.Header()
	hdr["Content-Type"] = jsonType
	hdr["Content-Length"] = []string{strconv.Itoa(len(body))}
	hdr["Cache-Control"] = []string{"no-store"}
	w.WriteHeader(status)
	if r.Method != http.MethodHead {
		w.Write(body)
	}
}
