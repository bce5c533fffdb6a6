# vulnd: see README.md. Everything here needs only Go.
GO       ?= go
BIN      := bin/vulnd
DEMO     := snapshots/demo
ADDR     ?= 127.0.0.1:8080
FUZZTIME ?= 60s
FUZZMINIMIZE ?= 10s
SHARED   ?= ../shared/data

.PHONY: build run test vet bench bench-load bench-scale bench-metrics soak lb-test fleet-test fuzz demo sample refresh refresh-build reload clean

build:
	$(GO) build -buildvcs=auto -o $(BIN) ./cmd/vulnd

# Serves the bundled demo snapshot.
run: build
	$(BIN) serve -snapshot $(DEMO) -addr $(ADDR)

# vet and the race-enabled tests (they read ../shared/data), then the
# allocation limits (every Test...Allocs, in whatever package), which the
# race detector's own allocations would hide, once more without it.
test: vet
	$(GO) test -race -count=1 -timeout 30m ./...
	$(GO) test -C bench -race -count=1 -timeout 30m ./...
	$(GO) test -count=1 -run 'Allocs$$' ./...

# bench/ is a module of its own (the generator and load tools): the
# product's go test ./... never builds it; these targets cover both.
vet:
	$(GO) vet ./...
	$(GO) vet -C bench ./...

bench:
	$(GO) test -run='^$$' -bench=. -benchmem ./...
	$(GO) test -C bench -run='^$$' -bench=. -benchmem ./...

# Side-by-side load test at full NVD scale: vulnd, nginx serving the same
# bytes, and a minimal Go server (see bench/README.md). Installs wrk and
# nginx with apt when missing. Takes about 25 minutes.
bench-load: build
	bash bench/load.sh

# What CVE JSON 5 records cost at NVD's scale (issue 26 item 8): one synth
# -cve5 data set built as NVD feeds alone and as feeds + records, build
# time and peak RSS, load time and RSS after load (medians, alternated,
# pinned), and ?version= on a product of CNA data against one of NVD data
# under wrk (see bench/README.md). About 20-30 minutes at the default 400k
# CVEs; SCALE_SMOKE=1 (20k CVEs, short wrk runs) about a minute.
bench-scale: build
	bash bench/scale.sh

# Metrics overhead: req/s of one binary with and without /metrics, in
# alternating wrk rounds on pinned CPUs (see bench/README.md). About 2 min.
bench-metrics: build
	bash bench/overhead.sh

# Reload storm: wrk running while 100 SIGHUPs alternate two snapshots and a
# few corrupt ones (see bench/README.md). Installs wrk with apt when missing.
soak: build
	bash bench/soak.sh

# Two replicas behind nginx under wrk while new snapshots roll through them
# (SIGHUP one at a time) and each is restarted in turn (see bench/README.md).
# Fails on any failed request. Installs wrk and nginx with apt when missing.
# Takes about 90 seconds.
lb-test: build
	bash bench/lbtest.sh

# The data pipeline of a fleet on 127.0.0.1: nginx serving synthetic feeds
# as NVD's site and balancing three replicas that follow a tag of a local
# CNCF distribution registry (serve -pull); fetch, build, validate and
# publish twice under wrk, then a corrupt artifact and a stopped registry.
# Prints the freshness figure by stage; fails on any failed request (see
# bench/README.md). Installs wrk, nginx and docker-registry with apt when
# missing. About a minute; FT_CVES=400000 for the figure at NVD's scale.
fleet-test: build
	bash bench/fleettest.sh

# Runs every fuzz target of every package for FUZZTIME each. Each
# minimisation (of a new input that widens coverage, or of a failing one)
# is capped at FUZZMINIMIZE, not go test's 60s: the listener's 8 KiB seeds
# would otherwise spend the fuzzing time being minimised.
fuzz:
	@set -e; for pkg in $$($(GO) list ./...); do \
	  for t in $$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz' || true); do \
	    echo "== $$pkg $$t"; $(GO) test -run='^$$' -fuzz="^$$t$$" -fuzztime=$(FUZZTIME) -fuzzminimizetime=$(FUZZMINIMIZE) $$pkg; \
	  done; \
	done

# Rebuilds the bundled demo snapshot from synthetic feeds (deterministic):
# a first day, then the next day (-next, 2% changed) built with -previous,
# so the demo has a report with alerts.
# Its scratch directory is its own (mktemp), so two runs do not share one.
demo: build
	@set -ex; t=$$(mktemp -d /tmp/vulnd-demo.XXXXXX); trap 'rm -rf "$$t"' EXIT; \
	$(GO) run -C bench ./synth -o $$t/day -cves 2000 -seed 1 -cve5; \
	$(GO) run -C bench ./synth -o $$t/next -cves 2000 -seed 1 -cve5 -next -change-rate 0.02; \
	$(BIN) build -cwe $$t/day/cwec_synth.xml -o $$t/s1 -time 2026-11-22T06:00:00Z \
	  -epss $$(ls $$t/day/epss_scores-*.csv.gz) $$t/day/nvdcve-2.0-*.json.gz $$t/day/cves.zip; \
	$(BIN) build -cwe $$t/next/cwec_synth.xml -o $(DEMO) -previous $$t/s1 -time 2026-11-23T06:00:00Z \
	  -epss $$(ls $$t/next/epss_scores-*.csv.gz) $$t/next/nvdcve-2.0-*.json.gz $$t/next/cves.zip

# Builds a snapshot of the real sample in ../shared/data into SAMPLE_DIR,
# by default a new directory under $TMPDIR (or /tmp) each run, and says
# where.
SAMPLE_DIR ?=
sample: build
	@dir="$(SAMPLE_DIR)"; \
	  if [ -z "$$dir" ]; then dir=$$(mktemp -d "$${TMPDIR:-/tmp}/vulnd-sample.XXXXXX") || exit 1; fi; \
	  echo "$(BIN) build -cwe $(SHARED)/cwe/cwec_v4.15.xml.zip -epss $(SHARED)/epss/epss-sample.csv -o $$dir $(SHARED)/nvd/nvdcve-2.0-sample.json.gz $(SHARED)/cve5/*.json.gz"; \
	  $(BIN) build -cwe $(SHARED)/cwe/cwec_v4.15.xml.zip -epss $(SHARED)/epss/epss-sample.csv -o "$$dir" $(SHARED)/nvd/nvdcve-2.0-sample.json.gz $(SHARED)/cve5/*.json.gz || exit 1; \
	  echo "the sample snapshot is in $$dir"; echo "serve it with: $(BIN) serve -snapshot $$dir"

# The daily refresh: builds $(SNAP).next from the NVD feeds in $(FEEDS),
# found by content (`vulnd feeds $(FEEDS)` lists them: any name, plain,
# gzip, zstd or zip, the modified and recent feeds last; other files are
# named as skipped) and the newest EPSS file there if any (without one,
# the build keeps the previous scores), with $(SNAP) as the previous
# snapshot, validates it,
# moves it into place (the old one is kept as $(SNAP).prev), then reloads
# the servers named by PIDFILE or UNIT (see reload). Examples:
#   make refresh FEEDS=/srv/nvd CWE=/srv/cwec_v4.15.xml.zip SNAP=/srv/vulnd/current UNIT=vulnd
#   make refresh FEEDS=/srv/nvd CWE=/srv/cwec_v4.15.xml.zip SNAP=/srv/vulnd/current PIDFILE=/run/vulnd.pid
# With FETCH=1 it first brings FEEDS up to date with vulnd fetch (from
# FETCH_URL, default NVD's; the catalog is then FEEDS/cwec_latest.xml.zip
# unless CWE names another; cvelistV5's bundles of CVE JSON 5 records and
# FIRST's EPSS file too, which FETCH_FLAGS='-cve5-url - -epss-url -'
# turns off; vulnd feeds lists the bundles for the build), so one command
# runs the whole cycle (when only the catalog, EPSS or the bundles failed,
# fetch exits 3 and the build goes on with their old copies, so an outage
# at GitHub or FIRST never holds NVD's changes back):
#   make refresh FETCH=1 FEEDS=/srv/nvd SNAP=/srv/vulnd/current UNIT=vulnd
# With PUBLISH=oci://REGISTRY/REPOSITORY it then pushes the new snapshot
# there, tagged with its build time and latest (vulnd publish;
# PUBLISH_FLAGS=-plain-http for a registry on localhost), for replicas
# that follow the tag with serve -pull:
#   make refresh FETCH=1 FEEDS=/srv/nvd SNAP=/srv/vulnd/current PUBLISH=oci://registry.example.com/vulnd/snapshots
FETCH_URL ?= https://nvd.nist.gov/feeds/json/cve/2.0/
refresh: build
	@if [ -n "$(FETCH)" ]; then \
	  test -n "$(FEEDS)" || { echo "usage: make refresh FETCH=1 FEEDS=DIR SNAP=DIR [CWE=FILE] [PIDFILE='FILE...' | UNIT=NAME]" >&2; exit 2; }; \
	  echo "$(strip $(BIN) fetch -dir $(FEEDS) -base-url $(FETCH_URL) $(FETCH_FLAGS))"; \
	  $(BIN) fetch -dir $(FEEDS) -base-url $(FETCH_URL) $(FETCH_FLAGS); rc=$$?; \
	  if [ $$rc -eq 3 ]; then echo "refresh: NVD's feeds are current; building with the old copy of the source that failed" >&2; \
	  elif [ $$rc -ne 0 ]; then exit 1; fi; \
	fi
	@$(MAKE) --no-print-directory refresh-build FEEDS="$(FEEDS)" SNAP="$(SNAP)" PIDFILE="$(PIDFILE)" UNIT="$(UNIT)" \
	  PUBLISH="$(PUBLISH)" PUBLISH_FLAGS="$(PUBLISH_FLAGS)" CWE="$(or $(CWE),$(if $(FETCH),$(FEEDS)/cwec_latest.xml.zip))"

refresh-build:
	@test -n "$(FEEDS)" -a -n "$(CWE)" -a -n "$(SNAP)" || { echo "usage: make refresh FEEDS=DIR CWE=FILE SNAP=DIR [PIDFILE='FILE...' | UNIT=NAME]" >&2; exit 2; }
	@feeds=$$($(BIN) feeds $(FEEDS)) || exit 1; \
	  prev=; test -d "$(SNAP)" && prev="-previous $(SNAP)"; \
	  epss=$$($(BIN) feeds -epss $(FEEDS) 2>/dev/null) && epss="-epss $$epss" || epss=; \
	  echo "$(BIN) build -cwe $(CWE) -o $(SNAP).next $$prev $$epss" $$feeds; \
	  $(BIN) build -cwe $(CWE) -o $(SNAP).next $$prev $$epss $$feeds
	$(BIN) validate $(SNAP).next
	rm -rf $(SNAP).prev
	if [ -d $(SNAP) ]; then mv $(SNAP) $(SNAP).prev; fi
	mv $(SNAP).next $(SNAP)
	@if [ -n "$(PUBLISH)" ]; then \
	  tag=$$(date -u +%Y%m%dT%H%M%SZ); \
	  echo "$(BIN) publish $(PUBLISH_FLAGS) -to $(PUBLISH):$$tag $(SNAP)"; \
	  $(BIN) publish $(PUBLISH_FLAGS) -to $(PUBLISH):$$tag $(SNAP) || exit 1; \
	fi
	@if [ -n "$(PUBLISH)" -a -z "$(strip $(PIDFILE)$(UNIT))" ]; then exit 0; fi; \
	  $(MAKE) --no-print-directory reload PIDFILE="$(PIDFILE)" UNIT="$(UNIT)"

# Asks the given servers to load their snapshot again (SIGHUP), and no
# other process: the vulnd whose pid is in each file of PIDFILE (serve
# -pidfile writes one), and/or the systemd unit UNIT (systemctl reload,
# which sends SIGHUP to its main process). With neither it signals nobody
# and says so. Never `pkill -HUP vulnd`: that also hits builds and every
# other deployment on the host.
reload:
	@for f in $(PIDFILE); do \
	  pid=$$(cat "$$f" 2>/dev/null); \
	  case "$$pid" in ''|*[!0-9]*) echo "reload: $$f holds no pid; is serve running with -pidfile $$f?" >&2; exit 1;; esac; \
	  kill -0 "$$pid" 2>/dev/null || { echo "reload: $$f: no process $$pid (a stale pid file?)" >&2; exit 1; }; \
	  comm=$$(cat /proc/$$pid/comm 2>/dev/null || echo vulnd); \
	  if [ "$$comm" != vulnd ]; then echo "reload: $$f: process $$pid is $$comm, not vulnd (a stale pid file?); not signalled" >&2; exit 1; fi; \
	  echo "kill -HUP $$pid   # $$f"; kill -HUP "$$pid" || exit 1; \
	done
	@if [ -n "$(UNIT)" ]; then echo "systemctl reload $(UNIT)"; systemctl reload "$(UNIT)"; fi
	@if [ -z "$(strip $(PIDFILE)$(UNIT))" ]; then echo "reload: no PIDFILE or UNIT given: signalled no server; they keep the old snapshot until reloaded" >&2; fi

clean:
	rm -rf bin
