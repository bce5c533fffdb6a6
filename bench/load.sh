#!/usr/bin/env bash
# make bench-load: vulnd side by side with nginx and a minimal Go server
# serving the very same bytes at the same paths, per endpoint class, at
# full NVD scale. See bench/README.md ("Load test") for how to read it.
#
# Steps: generate two days of synthetic feeds (the second with 2% changed,
# so a report exists), build both snapshots (-previous), serve the second
# with vulnd, pick LOAD_PER_CLASS real paths per endpoint class and save
# vulnd's answers (bench/loaddump; NVD's CVE API answers carry the
# snapshot's build time as their timestamp, so they too are the same bytes
# every time, checked below), serve those files with nginx (1
# worker, sendfile, open_file_cache, long keep-alive) and from a map with
# bench/ceiling (Go's own ceiling), then run wrk against each, pinned: the
# servers on LOAD_SERVER_CPU, wrk on LOAD_CLIENT_CPU. LOAD_ROUNDS rounds
# alternate the order; the table shows medians. Last, wrk runs on vulnd
# while LOAD_RELOADS SIGHUPs land, each awaited in vulnd's log, and RSS is
# sampled.
#
# Everything listens on 127.0.0.1 and everything started is stopped on
# exit, Ctrl-C included. Installs wrk and nginx with apt when missing.
#
# Settings (environment, defaults in brackets):
#   LOAD_CVES [400000]      CVEs to generate (bench/synth -cves, -seed 1)
#   LOAD_FEEDS []           first day's feeds already generated with
#                           bench/synth -cves LOAD_CVES -seed 1: used instead
#                           of generating them
#   LOAD_SNAPSHOT []        a snapshot to use: served as is if it holds a
#                           report, otherwise the -previous of a next-day
#                           build (so built from LOAD_CVES, seed 1)
#   LOAD_DURATION [10]      seconds per wrk run (after LOAD_WARMUP seconds)
#   LOAD_WARMUP [2]
#   LOAD_ROUNDS [2]
#   LOAD_CONNS [32]
#   LOAD_PER_CLASS [3000]   paths per class
#   LOAD_CLASSES []         only the classes whose names match this regexp
#   LOAD_RELOADS [20]       SIGHUPs in the reload-under-load test (0: skip)
#   LOAD_RELOAD_CLASSES []  classes (regexp) whose paths wrk asks during
#                           the reloads: all when empty
#   LOAD_SERVER_CPU [0]  LOAD_CLIENT_CPU [1]
#   LOAD_PORT [18480]       vulnd's port; nginx and the Go ceiling use the
#                           next two
#   LOAD_REPORT [/tmp/vulnd-load-<time>.md]
#   LOAD_KEEP [0]           1 keeps the work directory
#   LOAD_CEILING_BARE [0]   1: the Go ceiling sends only Content-Type and
#                           Content-Length, not vulnd's other headers
#   LOAD_PROFILE [0]        1: after the rounds, what one response costs
#                           each server in the classes LOAD_PROFILE_CLASSES
#                           [^(one CVE|CVE page)$]: CPU time (user and
#                           system, from /proc) and system calls (strace
#                           -c, in a second run, as strace slows them)
#   LOAD_BIN_BEFORE []      a second vulnd binary (the build before a
#                           change): served from the same snapshot on
#                           LOAD_PORT+3, its answers checked against
#                           vulnd's, run in the same rounds beside vulnd,
#                           and shown as the column "vulnd-before" with a
#                           per-class after/before ratio. Not reloaded.
#   LOAD_TOGETHER [1]       in each round and class, after the runs one
#                           at a time, vulnd, vulnd-before (if any) and the
#                           Go ceiling also run at the same time, all on
#                           LOAD_SERVER_CPU, each under its own wrk on
#                           LOAD_CLIENT_CPU: they share the core and
#                           whatever else runs on it, so their ratios are
#                           those of their costs per answer, and a busy
#                           machine moves them far less (see README.md);
#                           0: only the runs one at a time
#   LOAD_BEFORE_REF []      a git revision to build LOAD_BIN_BEFORE from
#                           (git archive into the work directory), e.g.
#                           main or a commit; instead of LOAD_BIN_BEFORE
set -euo pipefail
cd "$(dirname "$0")/.."

START=$(date +%s)
LOADAVG_START=$(cut -d' ' -f1-3 /proc/loadavg)
LOAD_CVES=${LOAD_CVES:-400000}
LOAD_FEEDS=${LOAD_FEEDS:-}
LOAD_SNAPSHOT=${LOAD_SNAPSHOT:-}
LOAD_DURATION=${LOAD_DURATION:-10}
LOAD_WARMUP=${LOAD_WARMUP:-2}
LOAD_ROUNDS=${LOAD_ROUNDS:-2}
LOAD_CONNS=${LOAD_CONNS:-32}
LOAD_PER_CLASS=${LOAD_PER_CLASS:-3000}
LOAD_CLASSES=${LOAD_CLASSES:-}
LOAD_RELOADS=${LOAD_RELOADS:-20}
LOAD_RELOAD_CLASSES=${LOAD_RELOAD_CLASSES:-}
LOAD_SERVER_CPU=${LOAD_SERVER_CPU:-0}
LOAD_CLIENT_CPU=${LOAD_CLIENT_CPU:-1}
LOAD_PORT=${LOAD_PORT:-18480}
LOAD_REPORT=${LOAD_REPORT:-/tmp/vulnd-load-$(date -u +%Y%m%dT%H%M%SZ).md}
LOAD_KEEP=${LOAD_KEEP:-0}
LOAD_CEILING_BARE=${LOAD_CEILING_BARE:-0}
LOAD_PROFILE=${LOAD_PROFILE:-0}
LOAD_PROFILE_CLASSES=${LOAD_PROFILE_CLASSES:-^(one CVE|CVE page)\$}
LOAD_BIN_BEFORE=${LOAD_BIN_BEFORE:-}
LOAD_BEFORE_REF=${LOAD_BEFORE_REF:-}
LOAD_TOGETHER=${LOAD_TOGETHER:-1}
BIN=${BIN:-bin/vulnd}

say() { printf 'bench-load: %s\n' "$*" >&2; }
die() {
	say "FAIL: $*"
	exit 1
}

for v in LOAD_CVES LOAD_DURATION LOAD_WARMUP LOAD_ROUNDS LOAD_CONNS LOAD_PER_CLASS LOAD_RELOADS LOAD_SERVER_CPU LOAD_CLIENT_CPU LOAD_PORT LOAD_TOGETHER; do
	[[ ${!v} =~ ^[0-9]+$ ]] || die "$v must be a whole number, got '${!v}'"
done
((LOAD_ROUNDS >= 1 && LOAD_DURATION >= 1 && LOAD_CVES >= 1 && LOAD_PER_CLASS >= 1)) ||
	die "LOAD_ROUNDS, LOAD_DURATION, LOAD_CVES and LOAD_PER_CLASS must be at least 1"
[[ -z $LOAD_FEEDS || -f $LOAD_FEEDS/cwec_synth.xml ]] || die "LOAD_FEEDS=$LOAD_FEEDS holds no cwec_synth.xml (bench/synth's output)"
[[ -z $LOAD_SNAPSHOT || -f $LOAD_SNAPSHOT/manifest.json ]] || die "LOAD_SNAPSHOT=$LOAD_SNAPSHOT holds no manifest.json"
[[ -z $LOAD_BIN_BEFORE || -z $LOAD_BEFORE_REF ]] || die "give LOAD_BIN_BEFORE or LOAD_BEFORE_REF, not both"
[[ -z $LOAD_BIN_BEFORE || -x $LOAD_BIN_BEFORE ]] || die "LOAD_BIN_BEFORE=$LOAD_BIN_BEFORE is not an executable file"
if [[ -n $LOAD_BEFORE_REF ]]; then
	BEFORE_COMMIT=$(git rev-parse --verify -q "$LOAD_BEFORE_REF^{commit}") || die "LOAD_BEFORE_REF=$LOAD_BEFORE_REF is not a git revision here"
fi
BEFORE=0
[[ -n $LOAD_BIN_BEFORE$LOAD_BEFORE_REF ]] && BEFORE=1
PORT_VULND=$LOAD_PORT PORT_NGINX=$((LOAD_PORT + 1)) PORT_GO=$((LOAD_PORT + 2)) PORT_BEFORE=$((LOAD_PORT + 3))
ports=($PORT_VULND $PORT_NGINX $PORT_GO)
((BEFORE)) && ports+=($PORT_BEFORE)
for port in "${ports[@]}"; do
	if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
		die "127.0.0.1:$port is in use; pick other ports with LOAD_PORT"
	fi
done

need=()
command -v wrk >/dev/null || need+=(wrk)
command -v nginx >/dev/null || [[ -x /usr/sbin/nginx ]] || need+=(nginx)
command -v taskset >/dev/null || need+=(util-linux)
command -v curl >/dev/null || need+=(curl)
command -v bc >/dev/null || need+=(bc)
[[ ${LOAD_PROFILE:-0} == 1 ]] && { command -v strace >/dev/null || need+=(strace); }
if ((${#need[@]})); then
	say "installing ${need[*]} with apt"
	apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
fi
NGINX=$(command -v nginx || echo /usr/sbin/nginx)
[[ -x $BIN ]] || make build

# Every long step runs in the background and is waited for, so that a
# signal is acted on at once; cleanup stops whatever is still running.
# Each runs in a session of its own (setsid), so Ctrl-C reaches only this
# script: a child catching SIGINT itself (wrk, nginx, vulnd) would make
# bash carry on.
WORK=$(mktemp -d /tmp/vulnd-load.XXXXXX)
PIDS=()
cleanup() {
	local code=$?
	trap - INT TERM
	for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
	if [[ -f $WORK/nginx.pid ]]; then kill "$(cat "$WORK/nginx.pid")" 2>/dev/null || true; fi
	wait 2>/dev/null || true
	if [[ $LOAD_KEEP == 1 ]]; then say "work directory kept: $WORK"; else rm -rf "$WORK"; fi
	exit "$code"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
run() { # command... (in the background, waited for)
	setsid "$@" &
	local p=$!
	PIDS+=("$p")
	wait "$p"
}

# The expected duration, from the class names in bench/paths.go.
all_classes=("one CVE" "CVE page" "band page" "vendor's CVE page" "product's CVE page"
	"product's CVEs at a version" "CVE details" "one vendor"
	"one product" "one CWE" "CWE's CVE page" "vendor list" "report" "alert's events"
	"a page of 2,000 records" "one record by cveId")
classes_n=0
for c in "${all_classes[@]}"; do [[ -z $LOAD_CLASSES || $c =~ $LOAD_CLASSES ]] && classes_n=$((classes_n + 1)); done
((classes_n > 0)) || die "LOAD_CLASSES='$LOAD_CLASSES' matches no class (${all_classes[*]})"
wrk_s=$(((LOAD_WARMUP + LOAD_DURATION + 1) * (3 + BEFORE + (LOAD_TOGETHER > 0)) * classes_n * LOAD_ROUNDS))
# Measured on 2 shared cores at 400k CVEs: about 3 minutes to generate and
# build both days, 10 s to load, 25 s per reload under load.
data_s=$((LOAD_CVES * 200 / 400000 + BEFORE * LOAD_CVES * 30 / 400000))
[[ -n $LOAD_SNAPSHOT ]] && data_s=$((data_s / 2))
[[ -n $LOAD_SNAPSHOT ]] && grep -Eq '"reports": *[1-9]' "$LOAD_SNAPSHOT/manifest.json" && data_s=0
reload_s=$((LOAD_RELOADS * (LOAD_CVES * 25 / 400000 + 1) + (LOAD_RELOADS ? 10 : 0)))
total_s=$((data_s + LOAD_CVES * 30 / 400000 + 20 + wrk_s + reload_s))
say "work directory $WORK"
say "expected duration: about $(((total_s + 59) / 60)) minutes ($((data_s / 60)) to make the data, $((wrk_s / 60)) of wrk runs ($classes_n classes), $((reload_s / 60)) of reloads); ends about $(date -d "@$((START + total_s))" +%H:%M)"

# 1. Data.
SNAP=$LOAD_SNAPSHOT
SNAP_DESC=${LOAD_SNAPSHOT:+ ($LOAD_SNAPSHOT)}
if [[ -z $SNAP ]] || ! grep -Eq '"reports": *[1-9]' "$SNAP/manifest.json"; then
	go build -C bench -o "$WORK/synth" ./synth
	PREV=$SNAP
	if [[ -z $PREV ]]; then
		FEEDS=$LOAD_FEEDS
		if [[ -z $FEEDS ]]; then
			say "generating the first day: $LOAD_CVES CVEs"
			FEEDS=$WORK/day
			run "$WORK/synth" -o "$FEEDS" -cves "$LOAD_CVES" -seed 1 >&2
		fi
		say "building the first day's snapshot from $FEEDS"
		t0=$(date +%s.%N)
		run "$BIN" build -cwe "$FEEDS/cwec_synth.xml" -o "$WORK/s1" -time 2026-11-22T06:00:00Z "$FEEDS"/nvdcve-2.0-*.json.gz >&2
		BUILD_SECONDS=$(printf "%.1f" "$(echo "$(date +%s.%N) - $t0" | bc)")
		rm -rf "$WORK/day"
		PREV=$WORK/s1
		NEXT_TIME=(-time 2026-11-23T06:00:00Z)
	else
		say "$PREV holds no report: building the next day with -previous $PREV"
		NEXT_TIME=()
	fi
	say "generating the next day (2% changed)"
	run "$WORK/synth" -o "$WORK/next" -cves "$LOAD_CVES" -seed 1 -next -change-rate 0.02 >&2
	run "$BIN" build -cwe "$WORK/next/cwec_synth.xml" -o "$WORK/s2" -previous "$PREV" "${NEXT_TIME[@]}" "$WORK"/next/nvdcve-2.0-*.json.gz >&2
	rm -rf "$WORK/next" "$WORK/s1"
	SNAP=$WORK/s2
	[[ -n $LOAD_SNAPSHOT ]] && SNAP_DESC=" (the next day, built with -previous $LOAD_SNAPSHOT)"
fi

# 2. vulnd.
rss_kb() { awk '/^VmRSS:/ {print $2}' "/proc/$1/status" 2>/dev/null || echo 0; }
hwm_kb() { awk '/^VmHWM:/ {print $2}' "/proc/$1/status" 2>/dev/null || echo 0; }
# vulnd skips a SIGHUP that finds the snapshot it serves, so the reloads
# alternate between the snapshot and a twin whose manifest differs only in
# built_at (a different id, the same data), through a symlink.
SNAP=$(cd "$SNAP" && pwd)
if ((LOAD_RELOADS > 0)); then
	cp -r "$SNAP" "$WORK/twin"
	sed -i -E 's/"built_at": "[^"]*"/"built_at": "2000-01-01 00:00:00Z"/' "$WORK/twin/manifest.json"
fi
ln -sfn "$SNAP" "$WORK/current"
t0=$(date +%s.%N)
setsid taskset -c "$LOAD_SERVER_CPU" "$BIN" serve -snapshot "$WORK/current" -addr "127.0.0.1:$PORT_VULND" 2>"$WORK/vulnd.log" &
VPID=$!
PIDS+=("$VPID")
# await NAME PORT PID LOG [HINT]: wait up to 120 s for the server to
# answer, dying with its log's tail if it exits first.
await() {
	local name=$1 port=$2 pid=$3 log=$4 hint=${5:-}
	for _ in $(seq 1200); do
		curl -sf -o /dev/null "http://127.0.0.1:$port/cwe" && return 0
		kill -0 "$pid" 2>/dev/null || die "$name exited$hint: $(tail -3 "$log")"
		sleep 0.1
	done
	curl -sf -o /dev/null "http://127.0.0.1:$port/cwe" || die "$name does not answer after 120 s"
}
await vulnd "$PORT_VULND" "$VPID" "$WORK/vulnd.log"
LOAD_SECONDS=$(printf "%.2f" "$(echo "$(date +%s.%N) - $t0" | bc)")
say "vulnd answers after ${LOAD_SECONDS}s, RSS $(($(rss_kb "$VPID") / 1024)) MB"

# 2b. vulnd-before (LOAD_BIN_BEFORE or LOAD_BEFORE_REF): the same snapshot
# (not the symlink the reloads move), started once vulnd has loaded.
BEFORE_DESC=
if ((BEFORE)); then
	BIN_BEFORE=$LOAD_BIN_BEFORE
	if [[ -n $LOAD_BEFORE_REF ]]; then
		say "building vulnd-before from $LOAD_BEFORE_REF (${BEFORE_COMMIT:0:12})"
		mkdir -p "$WORK/before-src"
		git archive "$BEFORE_COMMIT" | tar -x -C "$WORK/before-src"
		run go build -C "$WORK/before-src" -buildvcs=false -o "$WORK/vulnd-before" ./cmd/vulnd
		BIN_BEFORE=$WORK/vulnd-before
		BEFORE_DESC="built from $LOAD_BEFORE_REF (${BEFORE_COMMIT:0:12})"
	else
		BEFORE_DESC="$LOAD_BIN_BEFORE ($("$LOAD_BIN_BEFORE" version 2>&1 | head -1))"
	fi
	t0=$(date +%s.%N)
	setsid taskset -c "$LOAD_SERVER_CPU" "$BIN_BEFORE" serve -snapshot "$SNAP" -addr "127.0.0.1:$PORT_BEFORE" 2>"$WORK/vulnd-before.log" &
	BPID=$!
	PIDS+=("$BPID")
	await vulnd-before "$PORT_BEFORE" "$BPID" "$WORK/vulnd-before.log" " (does it read this snapshot's format?)"
	BEFORE_LOAD_SECONDS=$(printf "%.2f" "$(echo "$(date +%s.%N) - $t0" | bc)")
	say "vulnd-before answers after ${BEFORE_LOAD_SECONDS}s, RSS $(($(rss_kb "$BPID") / 1024)) MB"
fi

# 3. The same bytes for nginx and the Go ceiling.
go build -C bench -o "$WORK/loaddump" ./loaddump
go build -C bench -o "$WORK/ceiling" ./ceiling
DUMP=$WORK/dump
run "$WORK/loaddump" -addr "127.0.0.1:$PORT_VULND" -o "$DUMP" -per-class "$LOAD_PER_CLASS"
say "saved $(wc -l <"$DUMP/map.tsv") distinct responses ($(du -sh "$DUMP/files" | cut -f1))"
if ((BEFORE)); then
	# vulnd-before is asked the same paths in the same order, so that
	# both start the rounds having answered the same requests: vulnd's
	# page cache then holds every class's pages, and vulnd-before's
	# would otherwise hold only those of the classes timed, a smaller
	# map that its lookups find in the CPU's caches more often.
	run "$WORK/loaddump" -addr "127.0.0.1:$PORT_BEFORE" -o "$WORK/dump-before" -per-class "$LOAD_PER_CLASS"
	cmp -s "$DUMP/map.tsv" "$WORK/dump-before/map.tsv" || die "vulnd-before's crawl found other paths or headers than vulnd's"
	rm -rf "$WORK/dump-before"
fi

# nginx's worker runs as an unprivileged user: it must be able to read.
chmod 755 "$WORK"
chmod -R a+rX "$DUMP"
mkdir -p "$WORK/nginx-tmp"
cat >"$WORK/nginx.conf" <<EOF
worker_processes 1;
daemon off;
pid $WORK/nginx.pid;
error_log $WORK/nginx-error.log warn;
events { worker_connections 4096; }
http {
    access_log off;
    sendfile on;
    tcp_nopush on;
    open_file_cache max=65536 inactive=600s;
    open_file_cache_valid 600s;
    keepalive_timeout 600s;
    keepalive_requests 100000000;
    types { }
    default_type application/json;
    client_body_temp_path $WORK/nginx-tmp/body;
    proxy_temp_path $WORK/nginx-tmp/proxy;
    fastcgi_temp_path $WORK/nginx-tmp/fastcgi;
    uwsgi_temp_path $WORK/nginx-tmp/uwsgi;
    scgi_temp_path $WORK/nginx-tmp/scgi;
    map_hash_max_size 262144;
    map_hash_bucket_size 256;
    # The request as sent (path and query) -> the file holding vulnd's
    # answer, and the headers vulnd sent with it (nginx omits empty ones).
    include $DUMP/nginx-map.conf;
    server_tokens off;
    etag off;
    server {
        listen 127.0.0.1:$PORT_NGINX;
        root $DUMP;
        location / {
            try_files \$dumpfile =404;
            add_header Vary \$dumpvary;
            add_header ETag \$dumpetag;
            add_header Link \$dumplink;
            add_header X-Total-Count \$dumptotal;
            add_header Cache-Control \$dumpcache;
            add_header X-Snapshot-Id \$dumpsnap;
        }
    }
}
EOF
# -e: nginx opens its error log before reading the config; keep it ours.
setsid taskset -c "$LOAD_SERVER_CPU" "$NGINX" -p "$WORK/" -e "$WORK/nginx-error.log" -c "$WORK/nginx.conf" 2>"$WORK/nginx.stderr" &
NPID=$!
PIDS+=("$NPID")
ceiling_flags=()
[[ $LOAD_CEILING_BARE == 1 ]] && ceiling_flags=(-bare)
setsid taskset -c "$LOAD_SERVER_CPU" "$WORK/ceiling" "${ceiling_flags[@]}" -dir "$DUMP" -addr "127.0.0.1:$PORT_GO" 2>"$WORK/ceiling.log" &
GPID=$!
PIDS+=("$GPID")
for sp in "nginx:$PORT_NGINX:$NPID:nginx.stderr" "Go ceiling:$PORT_GO:$GPID:ceiling.log"; do
	IFS=: read -r name port pid log <<<"$sp"
	for _ in $(seq 600); do
		curl -s -o /dev/null "http://127.0.0.1:$port/" && break
		kill -0 "$pid" 2>/dev/null || die "$name exited: $(tail -3 "$WORK/$log")"
		sleep 0.1
	done
	curl -s -o /dev/null "http://127.0.0.1:$port/" || die "$name does not answer on $port"
done

# The three (four with vulnd-before) must answer the same bytes, with
# vulnd's headers (but Date, and nginx's own Server, Last-Modified,
# Accept-Ranges and Connection): check the first paths of each class.
headers() { # port path
	curl -s -D - -o /dev/null "http://127.0.0.1:$1$2" | tr -d '\r' | sed 's/^[^:]*/\L&/' |
		grep -Ev '^(date|server|last-modified|accept-ranges|connection):|^$' | sort
}
while IFS=$'\t' read -r name file; do
	for p in $(head -3 "$DUMP/$file"); do
		a=$(curl -s "http://127.0.0.1:$PORT_VULND$p" | sha256sum)
		b=$(curl -s "http://127.0.0.1:$PORT_NGINX$p" | sha256sum)
		c=$(curl -s "http://127.0.0.1:$PORT_GO$p" | sha256sum)
		[[ $a == "$b" && $a == "$c" ]] || die "$name: $p: the bodies differ between the servers"
		h=$(headers "$PORT_VULND" "$p")
		[[ $h == "$(headers "$PORT_NGINX" "$p")" ]] || die "$name: $p: nginx's headers differ from vulnd's: $(diff <(echo "$h") <(headers "$PORT_NGINX" "$p"))"
		[[ $LOAD_CEILING_BARE == 1 || $h == "$(headers "$PORT_GO" "$p")" ]] ||
			die "$name: $p: the Go ceiling's headers differ from vulnd's: $(diff <(echo "$h") <(headers "$PORT_GO" "$p"))"
		if ((BEFORE)); then
			[[ $a == "$(curl -s "http://127.0.0.1:$PORT_BEFORE$p" | sha256sum)" ]] || die "$name: $p: vulnd-before's body differs from vulnd's"
			[[ $h == "$(headers "$PORT_BEFORE" "$p")" ]] ||
				die "$name: $p: vulnd-before's headers differ from vulnd's: $(diff <(echo "$h") <(headers "$PORT_BEFORE" "$p"))"
		fi
	done
done <"$DUMP/classes.txt"

# 4. wrk, class by class, the servers alternating.
RESULTS=$WORK/results.tsv
: >"$RESULTS"
# run_wrk port pathfile seconds: sets line to wrk's RESULT line. (Not in a
# $(...): the script would act on a signal only after the run.)
run_wrk() {
	run taskset -c "$LOAD_CLIENT_CPU" wrk -t1 -c"$LOAD_CONNS" -d"$3"s -s bench/load.lua "http://127.0.0.1:$1" -- "$2" >"$WORK/wrk.out"
	line=$(grep '^RESULT' "$WORK/wrk.out") || die "wrk printed no result: $(cat "$WORK/wrk.out")"
}
field() { sed -n "s/.* $1=\([0-9.]*\).*/\1/p" <<<"$2"; }
# together class pathfile round (LOAD_TOGETHER=1): vulnd, vulnd-before
# and the Go ceiling at the same time on the one server CPU, each with a
# wrk of its own on the client CPU, warm-up then the measured run; rows
# in $TOGETHER. (Waited for with wait, so a signal is acted on at once.)
TOGETHER=$WORK/together.tsv
: >"$TOGETHER"
together() {
	local name=$1 file=$2 round=$3 secs sp server port line
	local tservers=("vulnd:$PORT_VULND" "go:$PORT_GO")
	((BEFORE)) && tservers+=("before:$PORT_BEFORE")
	for secs in $LOAD_WARMUP $LOAD_DURATION; do
		((secs > 0)) || continue
		local tp=()
		for sp in "${tservers[@]}"; do
			setsid taskset -c "$LOAD_CLIENT_CPU" wrk -t1 -c"$LOAD_CONNS" -d"$secs"s -s bench/load.lua "http://127.0.0.1:${sp##*:}" -- "$file" >"$WORK/together-${sp%%:*}.out" &
			tp+=($!)
			PIDS+=($!)
		done
		wait "${tp[@]}"
	done
	for sp in "${tservers[@]}"; do
		server=${sp%%:*}
		line=$(grep '^RESULT' "$WORK/together-$server.out") || die "wrk printed no result: $(cat "$WORK/together-$server.out")"
		printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$name" "$server" "$round" \
			"$(field rps "$line")" "$(field p50_us "$line")" "$(field p99_us "$line")" \
			"$(field non2xx "$line")" "$(field errors "$line")" >>"$TOGETHER"
		say "round $round, $name, $server (together): $line"
	done
}
# vulnd's memory under the class runs: VmHWM, reset once it has loaded
# and the answers are saved, is the peak of the runs.
RSS_BEFORE_RUNS=$(rss_kb "$VPID")
HWM_RESET=0
echo 5 2>/dev/null >"/proc/$VPID/clear_refs" && HWM_RESET=1
for round in $(seq "$LOAD_ROUNDS"); do
	# The servers compared most closely run closest in time: vulnd-before
	# right before vulnd, the Go ceiling right after it (nginx last), and
	# the other way round in the even rounds. Each round's ratios are
	# then of runs seconds apart, and the table shows their median.
	servers=
	((BEFORE)) && servers+="before:$PORT_BEFORE "
	servers+="vulnd:$PORT_VULND go:$PORT_GO nginx:$PORT_NGINX"
	((round % 2 == 0)) && servers=$(tr ' ' '\n' <<<"$servers" | tac | tr '\n' ' ')
	while IFS=$'\t' read -r name file; do
		[[ -n $LOAD_CLASSES && ! $name =~ $LOAD_CLASSES ]] && continue
		for sp in $servers; do
			server=${sp%%:*} port=${sp##*:}
			((LOAD_WARMUP > 0)) && run_wrk "$port" "$DUMP/$file" "$LOAD_WARMUP"
			run_wrk "$port" "$DUMP/$file" "$LOAD_DURATION"
			printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$name" "$server" "$round" \
				"$(field rps "$line")" "$(field p50_us "$line")" "$(field p99_us "$line")" \
				"$(field non2xx "$line")" "$(field errors "$line")" >>"$RESULTS"
			say "round $round, $name, $server: $line"
		done
		((LOAD_TOGETHER)) && together "$name" "$DUMP/$file" "$round"
	done <"$DUMP/classes.txt"
done

RSS_AFTER_RUNS=$(rss_kb "$VPID")
if ((HWM_RESET)); then
	RUNS_MEM="RSS before the class runs $((RSS_BEFORE_RUNS / 1024)) MB, peak during them $(($(hwm_kb "$VPID") / 1024)) MB (VmHWM, reset before the first run), at their end $((RSS_AFTER_RUNS / 1024)) MB"
else
	RUNS_MEM="RSS before the class runs $((RSS_BEFORE_RUNS / 1024)) MB, at their end $((RSS_AFTER_RUNS / 1024)) MB (VmHWM could not be reset)"
fi
say "vulnd: $RUNS_MEM"

# 4b. What one response costs each server (LOAD_PROFILE=1).
PROFILE_TEXT=
if ((LOAD_PROFILE)); then
	# pids of a server: nginx's workers (the master only accepts no
	# requests), or the process itself.
	server_pids() {
		case $1 in
		nginx) pgrep -P "$(cat "$WORK/nginx.pid")" | tr '\n' ' ' ;;
		vulnd) echo "$VPID" ;;
		before) echo "$BPID" ;;
		go) echo "$GPID" ;;
		esac
	}
	cpu_ticks() { # pids: utime and stime, summed
		local u=0 s=0 f
		for p in "$@"; do
			read -ra f <"/proc/$p/stat"
			u=$((u + f[13])) s=$((s + f[14]))
		done
		echo "$u $s"
	}
	HZ=$(getconf CLK_TCK)
	PROFILE_TEXT="| class | server | req/s | CPU µs per response: user / system | system calls per response |"$'\n'"|---|---|---:|---|---|"
	while IFS=$'\t' read -r name file; do
		[[ $name =~ $LOAD_PROFILE_CLASSES ]] || continue
		profiled=("vulnd:$PORT_VULND" "nginx:$PORT_NGINX" "go:$PORT_GO")
		((BEFORE)) && profiled+=("before:$PORT_BEFORE")
		for sp in "${profiled[@]}"; do
			server=${sp%%:*} port=${sp##*:}
			read -ra pids <<<"$(server_pids "$server")"
			run_wrk "$port" "$DUMP/$file" 2
			read -r u0 s0 <<<"$(cpu_ticks "${pids[@]}")"
			run_wrk "$port" "$DUMP/$file" "$LOAD_DURATION"
			read -r u1 s1 <<<"$(cpu_ticks "${pids[@]}")"
			n=$(field requests "$line") rps=$(field rps "$line")
			user=$(echo "scale=1; ($u1 - $u0) * 1000000 / $HZ / $n" | bc)
			sys=$(echo "scale=1; ($s1 - $s0) * 1000000 / $HZ / $n" | bc)
			# strace -c over a short run: calls by name, per response.
			strace_args=()
			for p in "${pids[@]}"; do strace_args+=(-p "$p"); done
			strace -c -f -q -o "$WORK/strace.out" "${strace_args[@]}" &
			spid=$!
			sleep 1
			run_wrk "$port" "$DUMP/$file" 3
			kill -INT "$spid"
			wait "$spid" || true
			n2=$(field requests "$line")
			calls=$(awk -v n="$n2" '$NF ~ /^[a-z_0-9]+$/ && $(NF-1) ~ /^[0-9]+$/ && $NF != "total" {
				c = ($(NF-2) ~ /^[0-9]+$/ && NF >= 6) ? $(NF-2) : $(NF-1)
				if (c / n >= 0.05) { printf "%s%s %.2f", sep, $NF, c / n; sep = ", " }
			}' "$WORK/strace.out")
			PROFILE_TEXT+=$'\n'"| $name | $server | ${rps%.*} | ${user/#./0.} / ${sys/#./0.} | $calls |"
			say "profile, $name, $server: user ${user} µs, system ${sys} µs per response; $calls"
		done
	done <"$DUMP/classes.txt"
fi

# The mean of the middle two is printed with %.1f: awk's default (%.6g)
# writes 1,725,549.5 as 1.72555e+06, which bc cannot read.
median() { sort -n | awk '{a[NR]=$1} END {if (NR == 0) print 0; else if (NR % 2) print a[(NR+1)/2]; else printf "%.1f\n", (a[NR/2]+a[NR/2+1])/2}'; }
med() { # class server column
	awk -F'\t' -v c="$1" -v s="$2" -v k="$3" '$1 == c && $2 == s {print $k}' "$RESULTS" | median
}
# spread: the largest max/min of req/s over the rounds, of the three servers.
spread() {
	awk -F'\t' -v c="$1" '$1 == c {
		if (!($2 in lo) || $4 < lo[$2]) lo[$2] = $4
		if ($4 > hi[$2]) hi[$2] = $4
	} END {
		m = 1
		for (s in lo) if (lo[s] > 0 && hi[s] / lo[s] > m) m = hi[s] / lo[s]
		printf "%.2f", m
	}' "$RESULTS"
}
ratio() { if [[ $(echo "$2 == 0" | bc) == 1 ]]; then echo 0; else echo "scale=3; $1 / $2" | bc; fi; }
# rounds class a b [file]: server a's req/s over server b's in each round
# (of file, $RESULTS by default), then
# "median (min-max)" of those ratios. A round's two runs are seconds
# apart, so a busy minute moves both; the ratio of the two medians
# (a's best rounds against b's) is not what the table shows.
rounds() {
	awk -F'\t' -v c="$1" -v a="$2" -v b="$3" '$1 == c && $2 == a {x[$3] = $4} $1 == c && $2 == b {y[$3] = $4}
		END {for (r in x) if ((r in y) && y[r] > 0) printf "%.4f\n", x[r] / y[r]}' "${4:-$RESULTS}" |
		sort -n | awk '{a[NR] = $1} END {
			if (NR == 0) { print "-"; exit }
			m = (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2
			printf "%.2f (%.2f-%.2f)", m, a[1], a[NR]
		}'
}
# byround class a b [file]: each round's ratio of a over b, in round order.
byround() {
	awk -F'\t' -v c="$1" -v a="$2" -v b="$3" '$1 == c && $2 == a {x[$3] = $4} $1 == c && $2 == b {y[$3] = $4}
		END {for (r = 1; r in x; r++) if ((r in y) && y[r] > 0) printf "%s%.2f", (r > 1 ? " " : ""), x[r] / y[r]}' "${4:-$RESULTS}"
}

# 5. Reload under load.
RELOAD_TEXT="(skipped: LOAD_RELOADS=0)"
if ((LOAD_RELOADS > 0)); then
	: >"$WORK/reload.paths"
	while IFS=$'\t' read -r name file; do
		[[ -n $LOAD_RELOAD_CLASSES && ! $name =~ $LOAD_RELOAD_CLASSES ]] && continue
		cat "$DUMP/$file" >>"$WORK/reload.paths"
	done <"$DUMP/classes.txt"
	[[ -s $WORK/reload.paths ]] || die "LOAD_RELOAD_CLASSES='$LOAD_RELOAD_CLASSES' matches no class"
	run_wrk "$PORT_VULND" "$WORK/reload.paths" 3 # warm
	(
		peak=0
		while kill -0 "$VPID" 2>/dev/null; do
			r=$(rss_kb "$VPID")
			((r > peak)) && peak=$r && echo "$peak" >"$WORK/peak"
			sleep 0.05
		done
	) &
	PIDS+=($!)
	setsid taskset -c "$LOAD_CLIENT_CPU" wrk -t1 -c"$LOAD_CONNS" -d3600s -s bench/load.lua "http://127.0.0.1:$PORT_VULND" -- "$WORK/reload.paths" >"$WORK/reload-wrk.txt" &
	WPID=$!
	PIDS+=("$WPID")
	sleep 2
	# Steady: under the same load, before the first reload. Writing 5 to
	# clear_refs resets VmHWM, so VmHWM at the end is the true peak of
	# the reloads, not of the first load.
	steady=$(rss_kb "$VPID")
	rm -f "$WORK/peak"
	hwm_reset=0
	echo 5 2>/dev/null >"/proc/$VPID/clear_refs" && hwm_reset=1
	t0=$(date +%s)
	loaded=$(grep -c 'snapshot loaded' "$WORK/vulnd.log" || true)
	failed=$(grep -c 'reload failed' "$WORK/vulnd.log" || true)
	for i in $(seq "$LOAD_RELOADS"); do
		if ((i % 2)); then ln -sfn "$WORK/twin" "$WORK/current.tmp"; else ln -sfn "$SNAP" "$WORK/current.tmp"; fi
		mv -T "$WORK/current.tmp" "$WORK/current"
		kill -HUP "$VPID"
		for _ in $(seq 1800); do
			(($(grep -c 'snapshot loaded' "$WORK/vulnd.log" || true) > loaded)) && break
			(($(grep -c 'reload failed' "$WORK/vulnd.log" || true) > failed)) &&
				die "reload $i failed: $(grep 'reload failed' "$WORK/vulnd.log" | tail -1)"
			kill -0 "$VPID" 2>/dev/null || die "vulnd exited during reload $i: $(tail -3 "$WORK/vulnd.log")"
			sleep 0.1
		done
		(($(grep -c 'snapshot loaded' "$WORK/vulnd.log" || true) > loaded)) || die "reload $i did not finish in 180 s"
		loaded=$((loaded + 1))
		say "reload $i of $LOAD_RELOADS done after $(($(date +%s) - t0))s, RSS $(($(rss_kb "$VPID") / 1024)) MB"
		sleep 0.5
	done
	reload_seconds=$(($(date +%s) - t0))
	sleep 1
	hwm=$(hwm_kb "$VPID")
	kill -INT "$WPID"
	wait "$WPID" || true
	line=$(grep '^RESULT' "$WORK/reload-wrk.txt" || true)
	[[ -n $line ]] || die "wrk printed no result during the reloads: $(cat "$WORK/reload-wrk.txt")"
	# VmHWM can miss memory Go returned with madvise before it was
	# counted, and sampling can miss a short peak: take the larger.
	peak=$(cat "$WORK/peak" 2>/dev/null || echo 0)
	peak_how="VmRSS sampled every 50 ms"
	if ((hwm_reset)); then
		peak_how="the larger of VmHWM, reset before the first reload ($((hwm / 1024)) MB), and $peak_how ($((peak / 1024)) MB)"
		((hwm > peak)) && peak=$hwm
	fi
	after=$(rss_kb "$VPID")
	RELOAD_TEXT="$LOAD_RELOADS SIGHUPs in ${reload_seconds}s under wrk ($LOAD_CONNS connections, the paths of ${LOAD_RELOAD_CLASSES:-every class}): $(field requests "$line") requests at $(field rps "$line") req/s, non-2xx $(field non2xx "$line"), socket errors $(field errors "$line") (of which timeouts over wrk's 2 s: $(field timeouts "$line")); RSS steady $((steady / 1024)) MB, peak $((peak / 1024)) MB ($(printf %.2f "$(ratio "$peak" "$steady")")x steady; $peak_how), after $((after / 1024)) MB"
	say "$RELOAD_TEXT"
fi

# 6. Report.
settings=()
for v in LOAD_CVES LOAD_FEEDS LOAD_SNAPSHOT LOAD_DURATION LOAD_WARMUP LOAD_ROUNDS LOAD_CONNS LOAD_PER_CLASS LOAD_CLASSES LOAD_RELOADS LOAD_RELOAD_CLASSES LOAD_SERVER_CPU LOAD_CLIENT_CPU LOAD_CEILING_BARE LOAD_PROFILE LOAD_BIN_BEFORE LOAD_BEFORE_REF LOAD_TOGETHER; do
	if [[ ${!v} =~ ^[A-Za-z0-9_./:=,+-]+$ ]]; then
		settings+=("$v=${!v}")
	elif [[ -n ${!v} ]]; then
		settings+=("$v='${!v//\'/\'\\\'\'}'")
	fi
done
ms() { echo "scale=2; $1 / 1000" | bc | sed 's/^\./0./'; }
{
	echo "# make bench-load, $(date -u +'%Y-%m-%d %H:%M UTC')"
	echo
	echo "Machine: $(nproc) CPUs ($(sed -n 's/^model name[^:]*: //p' /proc/cpuinfo | head -1)), $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo), Linux $(uname -r); load average at the start $LOADAVG_START, at the end $(cut -d' ' -f1-3 /proc/loadavg)."
	echo "Software: vulnd $(git rev-parse --short HEAD 2>/dev/null || echo '?')$(git diff --quiet HEAD 2>/dev/null || echo ' (with uncommitted changes)'), $(go version | cut -d' ' -f3), $("$NGINX" -v 2>&1 | sed 's/.*: //'), $(wrk -v 2>&1 | head -1 | cut -d' ' -f1-2)."
	((BEFORE)) && echo "vulnd-before: $BEFORE_DESC, serving the same snapshot on its own port, pinned like vulnd; answered ${BEFORE_LOAD_SECONDS}s after start; its bodies and headers checked equal to vulnd's; not reloaded. after/before is vulnd's req/s over vulnd-before's."
	echo "Snapshot: $(grep -o '"cves": [0-9]*' "$SNAP/manifest.json" | head -1 | grep -o '[0-9]*') CVEs$SNAP_DESC; ${BUILD_SECONDS:+first-day build ${BUILD_SECONDS}s; }vulnd answered ${LOAD_SECONDS}s after start; $(wc -l <"$DUMP/map.tsv") distinct responses saved."
	echo "Servers pinned to CPU $LOAD_SERVER_CPU, wrk to CPU $LOAD_CLIENT_CPU: 1 thread, $LOAD_CONNS connections, random paths of the class ($LOAD_PER_CLASS per class), ${LOAD_WARMUP}s warm-up then ${LOAD_DURATION}s, $LOAD_ROUNDS alternating rounds (vulnd-before, vulnd, the Go ceiling, nginx, and the other way round). req/s, p50 and p99: medians over the rounds; ratios: the median of the rounds' ratios (each of two runs seconds apart), with their lowest and highest. Spread: the largest max/min of one server's req/s over the rounds."
	echo "nginx and the Go ceiling send vulnd's bodies with vulnd's Content-Type, Vary, ETag, Link, X-Total-Count, Cache-Control and X-Snapshot-Id$([[ $LOAD_CEILING_BARE == 1 ]] && echo " (the Go ceiling: Content-Type and Content-Length only)"); nginx also its Server, Last-Modified and Accept-Ranges."
	echo "Command: \`${settings[*]} make bench-load\` (took $((($(date +%s) - START) / 60))m$((($(date +%s) - START) % 60))s)."
	echo
	if ((BEFORE)); then
		echo "| class | vulnd req/s | vulnd-before req/s | after/before | nginx req/s | Go ceiling req/s | vulnd/nginx | vulnd/Go | vulnd-before/Go | p50 ms vulnd / before / nginx / Go | p99 ms vulnd / before / nginx / Go | non-2xx + errors | spread |"
		echo "|---|---:|---:|---|---:|---:|---|---|---|---|---|---:|---:|"
	else
		echo "| class | vulnd req/s | nginx req/s | Go ceiling req/s | vulnd/nginx | vulnd/Go | p50 ms vulnd / nginx / Go | p99 ms vulnd / nginx / Go | non-2xx + errors | spread |"
		echo "|---|---:|---:|---:|---|---|---|---|---:|---:|"
	fi
	while IFS=$'\t' read -r name file; do
		[[ -n $LOAD_CLASSES && ! $name =~ $LOAD_CLASSES ]] && continue
		v=$(med "$name" vulnd 4) n=$(med "$name" nginx 4) g=$(med "$name" go 4)
		bad=$(awk -F'\t' -v c="$name" '$1 == c {s += $7 + $8} END {print s + 0}' "$RESULTS")
		if ((BEFORE)); then
			b=$(med "$name" before 4)
			printf '| %s | %.0f | %.0f | %s | %.0f | %.0f | %s | %s | %s | %s / %s / %s / %s | %s / %s / %s / %s | %s | %s |\n' "$name" "$v" "$b" \
				"$(rounds "$name" vulnd before)" "$n" "$g" "$(rounds "$name" vulnd nginx)" "$(rounds "$name" vulnd go)" "$(rounds "$name" before go)" \
				"$(ms "$(med "$name" vulnd 5)")" "$(ms "$(med "$name" before 5)")" "$(ms "$(med "$name" nginx 5)")" "$(ms "$(med "$name" go 5)")" \
				"$(ms "$(med "$name" vulnd 6)")" "$(ms "$(med "$name" before 6)")" "$(ms "$(med "$name" nginx 6)")" "$(ms "$(med "$name" go 6)")" "$bad" "$(spread "$name")"
			continue
		fi
		printf '| %s | %.0f | %.0f | %.0f | %s | %s | %s / %s / %s | %s / %s / %s | %s | %s |\n' "$name" "$v" "$n" "$g" \
			"$(rounds "$name" vulnd nginx)" "$(rounds "$name" vulnd go)" \
			"$(ms "$(med "$name" vulnd 5)")" "$(ms "$(med "$name" nginx 5)")" "$(ms "$(med "$name" go 5)")" \
			"$(ms "$(med "$name" vulnd 6)")" "$(ms "$(med "$name" nginx 6)")" "$(ms "$(med "$name" go 6)")" "$bad" "$(spread "$name")"
	done <"$DUMP/classes.txt"
	echo
	echo "By round (round 1 first):"
	echo
	if ((BEFORE)); then
		echo "| class | vulnd/Go | vulnd-before/Go | after/before |"
		echo "|---|---|---|---|"
	else
		echo "| class | vulnd/Go | vulnd/nginx |"
		echo "|---|---|---|"
	fi
	while IFS=$'\t' read -r name file; do
		[[ -n $LOAD_CLASSES && ! $name =~ $LOAD_CLASSES ]] && continue
		if ((BEFORE)); then
			echo "| $name | $(byround "$name" vulnd go) | $(byround "$name" before go) | $(byround "$name" vulnd before) |"
		else
			echo "| $name | $(byround "$name" vulnd go) | $(byround "$name" vulnd nginx) |"
		fi
	done <"$DUMP/classes.txt"
	if ((LOAD_TOGETHER)); then
		echo
		echo "Side by side (LOAD_TOGETHER=1): in each round, $([[ $BEFORE == 1 ]] && echo "vulnd, vulnd-before and the Go ceiling" || echo "vulnd and the Go ceiling") at the same time, all on CPU $LOAD_SERVER_CPU, each under a wrk of its own on CPU $LOAD_CLIENT_CPU (same settings): sharing the core and whatever else ran on it, each server's req/s is about its share of the core over its cost per answer. req/s: medians; ratios: median (lowest-highest) of the rounds', then each round's."
		echo
		if ((BEFORE)); then
			echo "| class | vulnd req/s | vulnd-before req/s | Go ceiling req/s | vulnd/Go | vulnd-before/Go | after/before | vulnd/Go by round | after/before by round | non-2xx + errors |"
			echo "|---|---:|---:|---:|---|---|---|---|---|---:|"
		else
			echo "| class | vulnd req/s | Go ceiling req/s | vulnd/Go | vulnd/Go by round | non-2xx + errors |"
			echo "|---|---:|---:|---|---|---:|"
		fi
		while IFS=$'\t' read -r name file; do
			[[ -n $LOAD_CLASSES && ! $name =~ $LOAD_CLASSES ]] && continue
			tmed() { awk -F'\t' -v c="$1" -v s="$2" '$1 == c && $2 == s {print $4}' "$TOGETHER" | median; }
			bad=$(awk -F'\t' -v c="$name" '$1 == c {s += $7 + $8} END {print s + 0}' "$TOGETHER")
			if ((BEFORE)); then
				printf '| %s | %.0f | %.0f | %.0f | %s | %s | %s | %s | %s | %s |\n' "$name" "$(tmed "$name" vulnd)" "$(tmed "$name" before)" "$(tmed "$name" go)" \
					"$(rounds "$name" vulnd go "$TOGETHER")" "$(rounds "$name" before go "$TOGETHER")" "$(rounds "$name" vulnd before "$TOGETHER")" \
					"$(byround "$name" vulnd go "$TOGETHER")" "$(byround "$name" vulnd before "$TOGETHER")" "$bad"
			else
				printf '| %s | %.0f | %.0f | %s | %s | %s |\n' "$name" "$(tmed "$name" vulnd)" "$(tmed "$name" go)" \
					"$(rounds "$name" vulnd go "$TOGETHER")" "$(byround "$name" vulnd go "$TOGETHER")" "$bad"
			fi
		done <"$DUMP/classes.txt"
	fi
	echo
	echo "vulnd's memory under the class runs: $RUNS_MEM."
	echo
	echo "Reload under load: $RELOAD_TEXT."
	if [[ -n $PROFILE_TEXT ]]; then
		echo
		echo "What one response costs (LOAD_PROFILE=1: CPU time of the server's processes from /proc over one ${LOAD_DURATION}s run, divided by its responses; system calls counted by strace -c -f over a separate 3 s run, those of at least 0.05 per response):"
		echo
		echo "$PROFILE_TEXT"
	fi
} | tee "$LOAD_REPORT"
say "report: $LOAD_REPORT"
