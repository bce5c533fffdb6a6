#!/usr/bin/env bash
# make bench-load: vulnd side by side with nginx and a minimal Go server
# serving the very same bytes at the same paths, per endpoint class, at
# full NVD scale. See bench/README.md ("Load test") for how to read it.
#
# Steps: generate two days of synthetic feeds (the second with 2% changed,
# so a report exists), build both snapshots (-previous), serve the second
# with vulnd, pick LOAD_PER_CLASS real paths per endpoint class and save
# vulnd's answers (bench/loaddump), serve those files with nginx (1
# worker, sendfile, open_file_cache, long keep-alive) and from a map with
# bench/ceiling (Go's own ceiling), then run wrk against each, pinned: the
# servers on LOAD_SERVER_CPU, wrk on LOAD_CLIENT_CPU. LOAD_ROUNDS rounds
# alternate the order; the table shows medians. Last, wrk runs on vulnd
# while LOAD_RELOADS SIGHUPs land, and RSS is sampled.
#
# Everything listens on 127.0.0.1 and everything started is stopped on
# exit, Ctrl-C included. Installs wrk and nginx with apt when missing.
#
# Settings (environment, defaults in brackets):
#   LOAD_CVES [400000]      CVEs to generate
#   LOAD_SNAPSHOT []        use this snapshot (it must hold a report) instead
#                           of generating and building one
#   LOAD_DURATION [10]      seconds per wrk run (after LOAD_WARMUP seconds)
#   LOAD_WARMUP [2]
#   LOAD_ROUNDS [2]
#   LOAD_CONNS [32]
#   LOAD_PER_CLASS [3000]   paths per class
#   LOAD_CLASSES []         only the classes whose names match this regexp
#   LOAD_RELOADS [20]       SIGHUPs in the reload-under-load test (0: skip)
#   LOAD_SERVER_CPU [0]  LOAD_CLIENT_CPU [1]
#   LOAD_REPORT [/tmp/vulnd-load-<time>.md]
#   LOAD_KEEP [0]           1 keeps the work directory
set -euo pipefail
cd "$(dirname "$0")/.."

LOAD_CVES=${LOAD_CVES:-400000}
LOAD_SNAPSHOT=${LOAD_SNAPSHOT:-}
LOAD_DURATION=${LOAD_DURATION:-10}
LOAD_WARMUP=${LOAD_WARMUP:-2}
LOAD_ROUNDS=${LOAD_ROUNDS:-2}
LOAD_CONNS=${LOAD_CONNS:-32}
LOAD_PER_CLASS=${LOAD_PER_CLASS:-3000}
LOAD_CLASSES=${LOAD_CLASSES:-}
LOAD_RELOADS=${LOAD_RELOADS:-20}
LOAD_SERVER_CPU=${LOAD_SERVER_CPU:-0}
LOAD_CLIENT_CPU=${LOAD_CLIENT_CPU:-1}
LOAD_REPORT=${LOAD_REPORT:-/tmp/vulnd-load-$(date -u +%Y%m%dT%H%M%SZ).md}
LOAD_KEEP=${LOAD_KEEP:-0}
BIN=${BIN:-bin/vulnd}
PORT_VULND=18480 PORT_NGINX=18481 PORT_GO=18482

say() { printf 'bench-load: %s\n' "$*" >&2; }
die() { say "FAIL: $*"; exit 1; }

for v in LOAD_CVES LOAD_DURATION LOAD_WARMUP LOAD_ROUNDS LOAD_CONNS LOAD_PER_CLASS LOAD_RELOADS LOAD_SERVER_CPU LOAD_CLIENT_CPU; do
	[[ ${!v} =~ ^[0-9]+$ ]] || die "$v must be a whole number, got '${!v}'"
done
((LOAD_ROUNDS >= 1 && LOAD_DURATION >= 1)) || die "LOAD_ROUNDS and LOAD_DURATION must be at least 1"

need=()
command -v wrk >/dev/null || need+=(wrk)
command -v nginx >/dev/null || [[ -x /usr/sbin/nginx ]] || need+=(nginx)
command -v taskset >/dev/null || need+=(util-linux)
command -v curl >/dev/null || need+=(curl)
command -v bc >/dev/null || need+=(bc)
if ((${#need[@]})); then
	say "installing ${need[*]} with apt"
	apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
fi
NGINX=$(command -v nginx || echo /usr/sbin/nginx)
[[ -x $BIN ]] || make build

WORK=$(mktemp -d /tmp/vulnd-load.XXXXXX)
PIDS=()
cleanup() {
	local code=$?
	for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
	[[ -f $WORK/nginx.pid ]] && kill "$(cat "$WORK/nginx.pid")" 2>/dev/null || true
	wait 2>/dev/null || true
	if [[ $LOAD_KEEP == 1 ]]; then say "work directory kept: $WORK"; else rm -rf "$WORK"; fi
	exit $code
}
trap cleanup EXIT
trap 'exit 130' INT TERM

classes_n=12
est=$(((LOAD_WARMUP + LOAD_DURATION + 1) * 3 * classes_n * LOAD_ROUNDS / 60))
say "work directory $WORK; the wrk runs alone take about $est minutes"

# 1. Data.
SNAP=$LOAD_SNAPSHOT
if [[ -z $SNAP ]]; then
	say "generating $LOAD_CVES CVEs, two days"
	go run ./bench/synth -o "$WORK/day" -cves "$LOAD_CVES" -seed 1 >&2
	go run ./bench/synth -o "$WORK/next" -cves "$LOAD_CVES" -seed 1 -next -change-rate 0.02 >&2
	t0=$(date +%s.%N)
	"$BIN" build -cwe "$WORK/day/cwec_synth.xml" -o "$WORK/s1" -time 2026-11-22T06:00:00Z "$WORK"/day/nvdcve-2.0-*.json.gz >&2
	t1=$(date +%s.%N)
	"$BIN" build -cwe "$WORK/next/cwec_synth.xml" -o "$WORK/s2" -previous "$WORK/s1" -time 2026-11-23T06:00:00Z "$WORK"/next/nvdcve-2.0-*.json.gz >&2
	BUILD_SECONDS=$(printf "%.1f" "$(echo "$t1 - $t0" | bc)")
	rm -rf "$WORK/day" "$WORK/next"
	SNAP=$WORK/s2
fi

# 2. vulnd.
rss_kb() { awk '/^VmRSS:/ {print $2}' "/proc/$1/status" 2>/dev/null || echo 0; }
t0=$(date +%s.%N)
taskset -c "$LOAD_SERVER_CPU" "$BIN" serve -snapshot "$SNAP" -addr 127.0.0.1:$PORT_VULND 2>"$WORK/vulnd.log" &
VPID=$!
PIDS+=("$VPID")
for _ in $(seq 1200); do
	curl -sf -o /dev/null "http://127.0.0.1:$PORT_VULND/cwe" && break
	kill -0 "$VPID" 2>/dev/null || die "vulnd exited: $(tail -3 "$WORK/vulnd.log")"
	sleep 0.1
done
LOAD_SECONDS=$(printf "%.2f" "$(echo "$(date +%s.%N) - $t0" | bc)")
say "vulnd answers after ${LOAD_SECONDS}s, RSS $(($(rss_kb "$VPID") / 1024)) MB"

# 3. The same bytes for nginx and the Go ceiling.
go build -o "$WORK/loaddump" ./bench/loaddump
go build -o "$WORK/ceiling" ./bench/ceiling
DUMP=$WORK/dump
"$WORK/loaddump" -addr 127.0.0.1:$PORT_VULND -o "$DUMP" -per-class "$LOAD_PER_CLASS"
say "saved $(wc -l <"$DUMP/map.tsv") responses ($(du -sh "$DUMP/files" | cut -f1))"

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
    include $DUMP/nginx-map.conf;
    server {
        listen 127.0.0.1:$PORT_NGINX;
        root $DUMP;
        location / { try_files \$dumpfile =404; }
    }
}
EOF
taskset -c "$LOAD_SERVER_CPU" "$NGINX" -p "$WORK" -c "$WORK/nginx.conf" 2>>"$WORK/nginx-error.log" &
PIDS+=($!)
taskset -c "$LOAD_SERVER_CPU" "$WORK/ceiling" -dir "$DUMP" -addr 127.0.0.1:$PORT_GO 2>"$WORK/ceiling.log" &
PIDS+=($!)
for port in $PORT_NGINX $PORT_GO; do
	for _ in $(seq 300); do
		curl -s -o /dev/null "http://127.0.0.1:$port/" && break
		sleep 0.1
	done
done

# The three must answer the same bytes: check the first paths of each class.
while IFS=$'\t' read -r name file; do
	for p in $(head -3 "$DUMP/$file"); do
		a=$(curl -s "http://127.0.0.1:$PORT_VULND$p" | sha256sum)
		b=$(curl -s "http://127.0.0.1:$PORT_NGINX$p" | sha256sum)
		c=$(curl -s "http://127.0.0.1:$PORT_GO$p" | sha256sum)
		[[ $a == "$b" && $a == "$c" ]] || die "$name: $p differs between the servers"
	done
done <"$DUMP/classes.txt"

# 4. wrk, class by class, the servers alternating.
RESULTS=$WORK/results.tsv
: >"$RESULTS"
run_wrk() { # port pathfile seconds -> RESULT line
	taskset -c "$LOAD_CLIENT_CPU" wrk -t1 -c"$LOAD_CONNS" -d"$3"s -s bench/load.lua "http://127.0.0.1:$1" -- "$2" | grep '^RESULT'
}
field() { sed -n "s/.* $1=\([0-9.]*\).*/\1/p" <<<"$2"; }
for round in $(seq "$LOAD_ROUNDS"); do
	servers="vulnd:$PORT_VULND nginx:$PORT_NGINX go:$PORT_GO"
	((round % 2 == 0)) && servers="go:$PORT_GO nginx:$PORT_NGINX vulnd:$PORT_VULND"
	while IFS=$'\t' read -r name file; do
		[[ -n $LOAD_CLASSES && ! $name =~ $LOAD_CLASSES ]] && continue
		for sp in $servers; do
			server=${sp%%:*} port=${sp##*:}
			run_wrk "$port" "$DUMP/$file" "$LOAD_WARMUP" >/dev/null
			line=$(run_wrk "$port" "$DUMP/$file" "$LOAD_DURATION")
			printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$name" "$server" "$round" \
				"$(field rps "$line")" "$(field p50_us "$line")" "$(field p99_us "$line")" \
				"$(field non2xx "$line")" "$(field errors "$line")" >>"$RESULTS"
			say "round $round, $name, $server: $line"
		done
	done <"$DUMP/classes.txt"
done

median() { sort -n | awk '{a[NR]=$1} END {if (NR == 0) print 0; else if (NR % 2) print a[(NR+1)/2]; else print (a[NR/2]+a[NR/2+1])/2}'; }
stat() { # class server column
	awk -F'\t' -v c="$1" -v s="$2" -v k="$3" '$1 == c && $2 == s {print $k}' "$RESULTS" | median
}

# 5. Reload under load.
RELOAD_TEXT="(skipped: LOAD_RELOADS=0)"
if ((LOAD_RELOADS > 0)); then
	cat "$DUMP"/*.paths >"$WORK/all.paths"
	run_wrk $PORT_VULND "$WORK/all.paths" 3 >/dev/null # warm
	steady=$(rss_kb "$VPID")
	(
		peak=0
		while kill -0 "$VPID" 2>/dev/null; do
			r=$(rss_kb "$VPID")
			((r > peak)) && peak=$r && echo "$peak" >"$WORK/peak"
			sleep 0.05
		done
	) &
	PIDS+=($!)
	taskset -c "$LOAD_CLIENT_CPU" wrk -t1 -c"$LOAD_CONNS" -d3600s -s bench/load.lua "http://127.0.0.1:$PORT_VULND" -- "$WORK/all.paths" >"$WORK/reload-wrk.txt" &
	WPID=$!
	PIDS+=("$WPID")
	sleep 2
	t0=$(date +%s)
	for i in $(seq "$LOAD_RELOADS"); do
		before=$(grep -c 'snapshot loaded' "$WORK/vulnd.log" || true)
		kill -HUP "$VPID"
		for _ in $(seq 1200); do
			(($(grep -c 'snapshot loaded\|reload failed' "$WORK/vulnd.log" || true) > before)) && break
			sleep 0.1
		done
		(($(grep -c 'snapshot loaded' "$WORK/vulnd.log" || true) > before)) || die "reload $i did not finish in 120 s"
		sleep 0.5
	done
	reload_seconds=$(($(date +%s) - t0))
	sleep 1
	kill -INT "$WPID"
	wait "$WPID" || true
	line=$(grep '^RESULT' "$WORK/reload-wrk.txt" || true)
	[[ -n $line ]] || die "wrk printed no result during the reloads: $(cat "$WORK/reload-wrk.txt")"
	peak=$(cat "$WORK/peak" 2>/dev/null || echo 0)
	after=$(rss_kb "$VPID")
	ratio=$(echo "scale=2; $peak / $steady" | bc)
	RELOAD_TEXT="$LOAD_RELOADS SIGHUPs in ${reload_seconds}s under wrk ($LOAD_CONNS connections, all classes' paths): $(field requests "$line") requests at $(field rps "$line") req/s, non-2xx $(field non2xx "$line"), socket errors $(field errors "$line") (of which timeouts over wrk's 2 s: $(field timeouts "$line")); RSS steady $((steady / 1024)) MB, peak $((peak / 1024)) MB (${ratio}x), after $((after / 1024)) MB"
	say "$RELOAD_TEXT"
fi

# 6. Report.
{
	echo "# make bench-load, $(date -u +'%Y-%m-%d %H:%M UTC')"
	echo
	echo "Machine: $(nproc) CPUs ($(sed -n 's/^model name[^:]*: //p' /proc/cpuinfo | head -1)), $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo), load average before: $(cut -d' ' -f1-3 /proc/loadavg)."
	echo "Snapshot: $(grep -o '"cves": [0-9]*' "$SNAP/manifest.json" | head -1 | grep -o '[0-9]*') CVEs; ${BUILD_SECONDS:+first-day build ${BUILD_SECONDS}s; }vulnd answered ${LOAD_SECONDS}s after start."
	echo "Servers pinned to CPU $LOAD_SERVER_CPU, wrk to CPU $LOAD_CLIENT_CPU: 1 thread, $LOAD_CONNS connections, random paths of the class ($LOAD_PER_CLASS per class), ${LOAD_WARMUP}s warm-up then ${LOAD_DURATION}s, $LOAD_ROUNDS alternating rounds; medians."
	echo "Command: \`${LOAD_SNAPSHOT:+LOAD_SNAPSHOT=$LOAD_SNAPSHOT }LOAD_CVES=$LOAD_CVES LOAD_DURATION=$LOAD_DURATION LOAD_ROUNDS=$LOAD_ROUNDS make bench-load\`"
	echo
	echo "| class | vulnd req/s | nginx req/s | Go ceiling req/s | vulnd/nginx | vulnd/Go | p50 ms vulnd / nginx / Go | p99 ms vulnd / nginx / Go | non-2xx + errors |"
	echo "|---|---:|---:|---:|---:|---:|---|---|---:|"
	while IFS=$'\t' read -r name file; do
		[[ -n $LOAD_CLASSES && ! $name =~ $LOAD_CLASSES ]] && continue
		v=$(stat "$name" vulnd 4) n=$(stat "$name" nginx 4) g=$(stat "$name" go 4)
		ms() { echo "scale=2; $1 / 1000" | bc | sed 's/^\./0./'; }
		bad=$(awk -F'\t' -v c="$name" '$1 == c {s += $7 + $8} END {print s + 0}' "$RESULTS")
		printf '| %s | %.0f | %.0f | %.0f | %.2f | %.2f | %s / %s / %s | %s / %s / %s | %s |\n' "$name" "$v" "$n" "$g" \
			"$(echo "scale=3; $v / $n" | bc)" "$(echo "scale=3; $v / $g" | bc)" \
			"$(ms "$(stat "$name" vulnd 5)")" "$(ms "$(stat "$name" nginx 5)")" "$(ms "$(stat "$name" go 5)")" \
			"$(ms "$(stat "$name" vulnd 6)")" "$(ms "$(stat "$name" nginx 6)")" "$(ms "$(stat "$name" go 6)")" "$bad"
	done <"$DUMP/classes.txt"
	echo
	echo "Reload under load: $RELOAD_TEXT."
} | tee "$LOAD_REPORT"
say "report: $LOAD_REPORT"
