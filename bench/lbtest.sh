#!/usr/bin/env bash
# Load-balancer test ("make lb-test"): two vulnd replicas behind nginx, wrk
# sending traffic through nginx for LB_DURATION seconds while the script
# rolls snapshots through the replicas (each round: swap replica 1's
# snapshot, SIGHUP, wait until it answers with the new ETag, then replica
# 2) and then restarts each replica in turn (SIGTERM: /readyz turns 503,
# it drains and exits 0; start it again; wait for /readyz 200 and for
# nginx to send it traffic). It exits 1 if any request through nginx
# failed (a non-2xx answer or a socket error at wrk, a 5xx in nginx's
# access log, a body that is not its ETag's snapshot's) or a replica did
# not reload, drain or exit as it should. bench/README.md ("Load-balancer
# test") says how to read it. Everything listens on 127.0.0.1 only;
# everything this script starts is stopped on exit, Ctrl-C included.
#
# Settings (environment, defaults in brackets):
#   LB_CVES [2000]          CVEs in the synthetic feeds
#   LB_SEED [1]             synth seed
#   LB_CHANGE_RATE [0.05]   share of CVEs that differ between A and B
#   LB_PATHS [2000]         paths crawled per snapshot (the union is used)
#   LB_DURATION [60]        seconds of wrk; the roll must end within it
#   LB_THREADS [2]          wrk threads
#   LB_CONNS [32]           wrk connections
#   LB_CHECKERS [2]         clients checking each body against its ETag's
#                           snapshot (bench/soakcheck), 0 for none
#   LB_ROUNDS [4]           rolling reloads (A -> B, B -> A, ...)
#   LB_DWELL [2]            seconds between two steps of the roll
#   LB_RESTART [auto]       the rolling restart: 1 does it, 0 skips it,
#                           auto does it when `vulnd serve` has -drain-wait
#   LB_DRAIN_WAIT [2s]      the replicas' -drain-wait
#   LB_DRAIN_TIMEOUT [10s]  the replicas' -drain-timeout
#   LB_TIMEOUT [280]        seconds the whole run may take
#   LB_KEEP [0]             1 keeps the work directory (snapshots, logs)
#   BIN [bin/vulnd]         the vulnd binary (built when missing)
set -euo pipefail
cd "$(dirname "$0")/.."

LB_CVES=${LB_CVES:-2000}
LB_SEED=${LB_SEED:-1}
LB_CHANGE_RATE=${LB_CHANGE_RATE:-0.05}
LB_PATHS=${LB_PATHS:-2000}
LB_DURATION=${LB_DURATION:-60}
LB_THREADS=${LB_THREADS:-2}
LB_CONNS=${LB_CONNS:-32}
LB_CHECKERS=${LB_CHECKERS:-2}
LB_ROUNDS=${LB_ROUNDS:-4}
LB_DWELL=${LB_DWELL:-2}
LB_RESTART=${LB_RESTART:-auto}
LB_DRAIN_WAIT=${LB_DRAIN_WAIT:-2s}
LB_DRAIN_TIMEOUT=${LB_DRAIN_TIMEOUT:-10s}
LB_TIMEOUT=${LB_TIMEOUT:-280}
LB_KEEP=${LB_KEEP:-0}
BIN=${BIN:-bin/vulnd}

say() { printf 'lbtest: %s\n' "$*" >&2; }
die() { say "FAIL: $*"; exit 1; }
source bench/lib.sh
STOP_SECONDS=15 # a replica may be draining

for v in LB_CVES LB_PATHS LB_DURATION LB_THREADS LB_CONNS LB_CHECKERS LB_ROUNDS LB_DWELL LB_TIMEOUT; do
	[[ ${!v} =~ ^[0-9]+$ ]] || die "$v must be a whole number, got '${!v}'"
done
[[ $LB_RESTART =~ ^(auto|0|1)$ ]] || die "LB_RESTART must be auto, 0 or 1, got '$LB_RESTART'"
((LB_CONNS >= LB_THREADS && LB_THREADS >= 1)) || die "LB_CONNS must be at least LB_THREADS, and LB_THREADS at least 1"

# ---- processes and cleanup ------------------------------------------------

WORK=
NGINX_PID='' WRK_PID='' CHECK_PID='' PREP_A_PID='' PREP_B_PID=''
PID=([1]='' [2]='')

cleanup() {
	local rc=$?
	trap - EXIT INT TERM
	stop "$WRK_PID" INT # wrk prints its counts on SIGINT
	stop "$CHECK_PID" TERM
	stop "$PREP_A_PID" TERM
	stop "$PREP_B_PID" TERM
	stop "${PID[1]}" TERM
	stop "${PID[2]}" TERM
	stop "$NGINX_PID" TERM
	if [[ -n $WORK && -d $WORK ]]; then
		if [[ $LB_KEEP == 1 ]]; then
			say "kept $WORK"
		else
			rm -rf "$WORK"
		fi
	fi
	exit "$rc"
}
trap cleanup EXIT
trap 'say interrupted; exit 130' INT
trap 'say terminated; exit 143' TERM

# deadline: fail once the run has taken LB_TIMEOUT seconds.
deadline() { ((SECONDS < LB_TIMEOUT)) || die "the run took over LB_TIMEOUT (${LB_TIMEOUT}s)"; }
now_ms() { echo $(($(date +%s%N) / 1000000)); }

# ---- tools ----------------------------------------------------------------

command -v go >/dev/null || die "go is not installed"
need_tools wrk nginx curl

if [[ ! -x $BIN ]]; then
	say "building $BIN"
	go build -o "$BIN" ./cmd/vulnd
fi
BIN=$(realpath "$BIN")
DRAIN_FLAGS=()
SERVE_HELP=$("$BIN" serve -h 2>&1 || true)
if [[ $SERVE_HELP == *-drain-wait* ]]; then
	DRAIN_FLAGS=(-drain-wait "$LB_DRAIN_WAIT" -drain-timeout "$LB_DRAIN_TIMEOUT")
	[[ $LB_RESTART == auto ]] && LB_RESTART=1
else
	if [[ $LB_RESTART == auto ]]; then
		say "vulnd serve has no -drain-wait: skipping the rolling restart (LB_RESTART=1 forces it)"
		LB_RESTART=0
	fi
	if [[ $SERVE_HELP == *-drain-timeout* ]]; then DRAIN_FLAGS=(-drain-timeout "$LB_DRAIN_TIMEOUT"); fi
fi

WORK=$(mktemp -d /tmp/vulnd-lbtest.XXXXXX)
mkdir -p "$WORK/bin"
go build -C bench -o "$WORK/bin/soakcheck" ./soakcheck
go build -C bench -o "$WORK/bin/synth" ./synth
CHECK=$WORK/bin/soakcheck

# ---- data: snapshots A and B (see ab_snapshots in bench/lib.sh) ----------

say "generating $LB_CVES CVEs (seed $LB_SEED) and building snapshots A and B in $WORK"
ab_snapshots "$LB_CVES" "$LB_SEED" "$LB_CHANGE_RATE"
for s in A B; do
	"$BIN" validate "$WORK/$s" >/dev/null 2>&1 || die "snapshot $s does not validate"
done
deadline

# ---- helpers --------------------------------------------------------------

etag_of() { "$CHECK" etag -addr "$1" 2>/dev/null || true; } # etag_of HOST:PORT: empty unless 200

# wait_etag ADDR ETAG PID: until ADDR answers 200 with ETAG (60 s at most).
wait_etag() {
	local addr=$1 want=$2 pid=$3 i
	for ((i = 0; i < 1200; i++)); do
		alive "$pid" || die "the server on $addr exited"
		[[ $(etag_of "$addr") == "$want" ]] && return 0
		sleep 0.05
	done
	die "$addr did not answer with ETag $want within 60 s (it answers '$(etag_of "$addr")')"
}


# ---- record what each snapshot answers ------------------------------------

PORT_A=$(freeport)
PORT_B=$(freeport)
"$BIN" serve -snapshot "$WORK/A" -addr "127.0.0.1:$PORT_A" 2>"$WORK/prep-A.log" &
PREP_A_PID=$!
"$BIN" serve -snapshot "$WORK/B" -addr "127.0.0.1:$PORT_B" 2>"$WORK/prep-B.log" &
PREP_B_PID=$!
for p in "$PORT_A:$PREP_A_PID" "$PORT_B:$PREP_B_PID"; do
	for ((i = 0; i < 600; i++)); do
		alive "${p#*:}" || die "the server on port ${p%%:*} exited: $(tail -n 3 "$WORK"/prep-*.log)"
		[[ -n $(etag_of "127.0.0.1:${p%%:*}") ]] && break
		sleep 0.1
	done
done
"$CHECK" prepare -a "127.0.0.1:$PORT_A" -b "127.0.0.1:$PORT_B" -o "$WORK/prep" -n "$LB_PATHS" -seed "$LB_SEED" >"$WORK/prep.txt" ||
	die "recording the expected bodies failed"
stop "$PREP_A_PID" TERM
stop "$PREP_B_PID" TERM
PREP_A_PID='' PREP_B_PID=''
PATHS=$WORK/prep/paths.txt
declare -A ETAG=([A]=$(kv etag_a "$WORK/prep.txt") [B]=$(kv etag_b "$WORK/prep.txt"))
[[ -n ${ETAG[A]} && -n ${ETAG[B]} && ${ETAG[A]} != "${ETAG[B]}" ]] || die "A and B need two different ETags, got '${ETAG[A]}' and '${ETAG[B]}'"
say "recorded $(kv paths "$WORK/prep.txt") paths ($(kv paths_differ "$WORK/prep.txt") differ between A and B); A=${ETAG[A]} B=${ETAG[B]}"
deadline

# ---- two replicas behind nginx ----------------------------------------------

declare -A API=() ADMIN=() SNAP=()
for i in 1 2; do
	API[$i]=$(freeport)
	ADMIN[$i]=$(freeport)
	mkdir -p "$WORK/r$i"
	ln -sfn "$WORK/A" "$WORK/r$i/current"
	SNAP[$i]=A
done
PORT_LB=$(freeport)

# start_replica I: serve replica I's snapshot link; its log is appended to.
start_replica() {
	local i=$1
	"$BIN" serve -snapshot "$WORK/r$i/current" -addr "127.0.0.1:${API[$i]}" -admin-addr "127.0.0.1:${ADMIN[$i]}" "${DRAIN_FLAGS[@]}" 2>>"$WORK/r$i.log" &
	PID[i]=$!
}
# wait_readyz I: until replica I's /readyz answers 200 (60 s at most).
wait_readyz() {
	local i=$1 k
	for ((k = 0; k < 1200; k++)); do
		alive "${PID[$i]}" || die "replica $i exited: $(tail -n 3 "$WORK/r$i.log")"
		[[ $(code_of "http://127.0.0.1:${ADMIN[$i]}/readyz") == 200 ]] && return 0
		sleep 0.05
	done
	die "replica $i: /readyz did not answer 200 within 60 s"
}
for i in 1 2; do start_replica "$i"; done
for i in 1 2; do
	wait_readyz "$i"
	wait_etag "127.0.0.1:${API[$i]}" "${ETAG[A]}" "${PID[$i]}"
done

# nginx open source has no active health checks: it learns that a replica
# is gone from failed connections (max_fails, fail_timeout) and retries
# such a request on the other one (proxy_next_upstream). Its idle
# keep-alive to the replicas (60 s) is shorter than vulnd's (120 s), so
# vulnd never closes a connection nginx is about to reuse, except when
# it drains.
chmod 755 "$WORK" # nginx's worker may run as another user
mkdir -p "$WORK/nginx-tmp"
LOG_SEP='|'
cat >"$WORK/nginx.conf" <<EOF
worker_processes 1;
daemon off;
pid $WORK/nginx.pid;
error_log $WORK/nginx-error.log warn;
events { worker_connections 1024; }
http {
    log_format lb '\$status$LOG_SEP\$upstream_status$LOG_SEP\$upstream_addr$LOG_SEP\$request_time$LOG_SEP\$request_uri';
    access_log $WORK/nginx-access.log lb buffer=64k flush=1s;
    client_body_temp_path $WORK/nginx-tmp/body;
    proxy_temp_path $WORK/nginx-tmp/proxy;
    fastcgi_temp_path $WORK/nginx-tmp/fastcgi;
    uwsgi_temp_path $WORK/nginx-tmp/uwsgi;
    scgi_temp_path $WORK/nginx-tmp/scgi;
    server_tokens off;
    keepalive_requests 1000000;
    upstream vulnd {
        server 127.0.0.1:${API[1]} max_fails=1 fail_timeout=2s;
        server 127.0.0.1:${API[2]} max_fails=1 fail_timeout=2s;
        keepalive 32;
        keepalive_timeout 60s;
        keepalive_requests 1000000;
    }
    server {
        listen 127.0.0.1:$PORT_LB;
        location / {
            proxy_pass http://vulnd;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_set_header Host \$host;
            proxy_connect_timeout 1s;
            proxy_read_timeout 10s;
            proxy_next_upstream error timeout http_502 http_503 http_504;
            proxy_next_upstream_tries 2;
            proxy_next_upstream_timeout 5s;
            proxy_max_temp_file_size 0;
        }
    }
}
EOF
# -e: nginx opens its error log before reading the config; keep it ours.
"$NGINX" -p "$WORK/" -e "$WORK/nginx-error.log" -c "$WORK/nginx.conf" 2>"$WORK/nginx.stderr" &
NGINX_PID=$!
LB=127.0.0.1:$PORT_LB
for ((i = 0; i < 100; i++)); do
	alive "$NGINX_PID" || die "nginx exited: $(cat "$WORK/nginx.stderr" "$WORK/nginx-error.log" 2>/dev/null | tail -n 5)"
	[[ $(etag_of "$LB") == "${ETAG[A]}" ]] && break
	sleep 0.1
done
[[ $(etag_of "$LB") == "${ETAG[A]}" ]] || die "nginx on $LB does not answer with A's ETag"
say "replicas on 127.0.0.1:${API[1]} and :${API[2]} (admin :${ADMIN[1]}, :${ADMIN[2]}), nginx on $LB; ready after ${SECONDS}s"

# ---- traffic and the roll -------------------------------------------------

FAILS=()
ALOG=$WORK/nginx-access.log

# lb_all ETAG: 10 GETs through nginx all answer with ETAG.
lb_all() {
	local k e
	for ((k = 0; k < 10; k++)); do
		e=$(etag_of "$LB")
		[[ $e == "$1" ]] || { FAILS+=("through nginx: ETag '$e' after the round, want $1"); return; }
	done
}

# wait_traffic I: until nginx's log shows 20 requests answered by replica I
# (20 s at most): nginx routes to it again.
wait_traffic() {
	local i=$1 from=$2 k n
	for ((k = 0; k < 200; k++)); do
		n=$(tail -n "+$((from + 1))" "$ALOG" 2>/dev/null | awk -F"$LOG_SEP" -v a="127.0.0.1:${API[$i]}" '{ k = split($3, u, ", ") } u[k] == a && $1 ~ /^2/' | wc -l)
		((n >= 20)) && return 0
		sleep 0.1
	done
	FAILS+=("replica $i: nginx sent it under 20 requests in the 20 s after its restart")
}
alines() { wc -l <"$ALOG" 2>/dev/null || echo 0; }

say "wrk: ${LB_DURATION}s, $LB_THREADS threads, $LB_CONNS connections through nginx; $LB_CHECKERS checkers"
wrk -t"$LB_THREADS" -c"$LB_CONNS" -d"${LB_DURATION}s" --timeout 5s -s bench/soak.lua "http://$LB" -- "$PATHS" >"$WORK/wrk.txt" 2>&1 &
WRK_PID=$!
if ((LB_CHECKERS > 0)); then
	"$CHECK" check -addr "$LB" -expect "$WORK/prep/expect.json" -c "$LB_CHECKERS" -out "$WORK/check.txt" >/dev/null 2>"$WORK/check.log" &
	CHECK_PID=$!
fi
T0=$SECONDS
sleep "$LB_DWELL"

RELOAD_MS=()
cur=A
for ((r = 1; r <= LB_ROUNDS; r++)); do
	[[ $cur == A ]] && next=B || next=A
	for i in 1 2; do
		ln -sfn "$WORK/$next" "$WORK/r$i/current.tmp"
		mv -T "$WORK/r$i/current.tmp" "$WORK/r$i/current"
		t=$(now_ms)
		kill -HUP "${PID[$i]}"
		wait_etag "127.0.0.1:${API[$i]}" "${ETAG[$next]}" "${PID[$i]}"
		RELOAD_MS+=($(($(now_ms) - t)))
		SNAP[$i]=$next
		deadline
		sleep "$LB_DWELL"
	done
	lb_all "${ETAG[$next]}"
	say "  round $r: both replicas serve $next (${ETAG[$next]}) after $((SECONDS - T0))s of traffic"
	cur=$next
done

RESTART_NOTES=()
if [[ $LB_RESTART == 1 ]]; then
	for i in 1 2; do
		t=$(now_ms)
		kill -TERM "${PID[$i]}"
		not_ready=- k=0
		while alive "${PID[$i]}"; do
			if [[ $not_ready == - && $(code_of "http://127.0.0.1:${ADMIN[$i]}/readyz") == 503 ]]; then
				not_ready=$(($(now_ms) - t))
			fi
			((++k < 1200)) || die "replica $i did not exit within 60 s of SIGTERM"
			sleep 0.05
		done
		rc=0
		wait "${PID[$i]}" || rc=$?
		gone=$(($(now_ms) - t))
		((rc == 0)) || FAILS+=("replica $i exited $rc after SIGTERM")
		if [[ $not_ready == - && ${#DRAIN_FLAGS[@]} -gt 2 ]]; then
			FAILS+=("replica $i: /readyz never answered 503 while it drained")
		fi
		from=$(alines)
		start_replica "$i"
		wait_readyz "$i"
		ready=$(($(now_ms) - t))
		wait_etag "127.0.0.1:${API[$i]}" "${ETAG[${SNAP[$i]}]}" "${PID[$i]}"
		wait_traffic "$i" "$from"
		RESTART_NOTES+=("replica $i: /readyz 503 after ${not_ready} ms, exit $rc after $gone ms, /readyz 200 again after $ready ms")
		say "  restart $i: ${RESTART_NOTES[-1]} ($((SECONDS - T0))s of traffic)"
		deadline
		sleep "$LB_DWELL"
	done
fi
ROLL_S=$((SECONDS - T0))
alive "$WRK_PID" || FAILS+=("wrk ended before the roll did (after ${ROLL_S}s): raise LB_DURATION")

wrk_rc=0
wait "$WRK_PID" || wrk_rc=$?
WRK_PID=
((wrk_rc == 0)) || FAILS+=("wrk exited $wrk_rc: $(tail -n 3 "$WORK/wrk.txt")")
if [[ -n $CHECK_PID ]]; then
	stop "$CHECK_PID" TERM
	CHECK_PID=
fi
for i in 1 2; do
	kill -TERM "${PID[$i]}"
	rc=0
	wait "${PID[$i]}" || rc=$?
	PID[i]=
	((rc == 0)) || FAILS+=("replica $i exited $rc after the final SIGTERM")
done
stop "$NGINX_PID" QUIT # graceful: flushes the access log
NGINX_PID=

# ---- checks and the report ------------------------------------------------

W=$WORK/wrk.txt
grep -q '^SOAKWRK ' "$W" || die "wrk printed no counts: $(cat "$W")"
req=$(wrkv requests "$W")
rps=$(awk -v r="$req" -v us="$(wrkv duration_us "$W")" 'BEGIN { printf "%.0f", r / (us / 1e6) }')
non2xx=$(wrkv non2xx "$W")
sock=$(($(wrkv connect "$W") + $(wrkv read "$W") + $(wrkv write "$W") + $(wrkv timeout "$W")))
# nginx's log: status|upstream_status|upstream_addr|request_time|uri. 499
# is a request wrk or the checker dropped when it stopped: not a failure.
read -r logged s5xx s502 sother s499 retried r1 r2 < <(awk -F"$LOG_SEP" -v a1="127.0.0.1:${API[1]}" -v a2="127.0.0.1:${API[2]}" '
	{ n++; k = split($3, u, ", "); last = u[k] }
	$1 >= 500 { s5++ }
	$1 == 502 { s502++ }
	$1 == 499 { s499++ }
	($1 < 200 || $1 > 299) && $1 != 499 && $1 < 500 { other++ }
	$2 ~ /,/ { retried++ }
	$1 ~ /^2/ && last == a1 { r1++ }
	$1 ~ /^2/ && last == a2 { r2++ }
	END { printf "%d %d %d %d %d %d %d %d\n", n, s5, s502, other, s499, retried, r1, r2 }' "$ALOG")
upstream_errors=$(grep -c 'upstream' "$WORK/nginx-error.log" 2>/dev/null || true)
vulnd_errors=$(cat "$WORK"/r[12].log | grep -c -e 'level=ERROR' -e '"level":"ERROR"' -e '^panic' -e 'fatal error' || true)

((non2xx == 0)) || FAILS+=("wrk: $non2xx non-2xx responses (first: $(sed -n 's/^SOAKWRK_FIRST_BAD //p' "$W"))")
((sock == 0)) || FAILS+=("wrk: $sock socket errors")
((s5xx == 0)) || FAILS+=("nginx: $s5xx answers 5xx ($s502 of them 502); first: $(awk -F"$LOG_SEP" '$1 >= 500' "$ALOG" | head -n 3 | tr '\n' ' ')")
((sother == 0)) || FAILS+=("nginx: $sother answers neither 2xx, 5xx nor 499")
((vulnd_errors == 0)) || FAILS+=("replica logs: $vulnd_errors ERROR, panic or fatal lines")
((req > 0 && r1 > 0 && r2 > 0)) || FAILS+=("traffic did not reach both replicas (replica 1: $r1, replica 2: $r2)")
check_line=
if ((LB_CHECKERS > 0)); then
	C=$WORK/check.txt
	if [[ -s $C ]]; then
		creq=$(kv check_requests "$C") cmixed=$(kv check_mismatch "$C") cnon200=$(kv check_non200 "$C") cerr=$(kv check_errors "$C")
		check_line="checker: $creq requests, $cmixed bodies not their ETag's snapshot's, $cnon200 non-200, $cerr errors (A $(kv check_snap_A "$C"), B $(kv check_snap_B "$C"))"
		((cmixed == 0)) || FAILS+=("checker: $cmixed bodies not their ETag's snapshot's")
		((cnon200 == 0)) || FAILS+=("checker: $cnon200 non-200 responses")
		((cerr == 0)) || FAILS+=("checker: $cerr request errors: $(head -n 3 "$WORK/check.log" | tr '\n' ' ')")
	else
		FAILS+=("the checker wrote no counts: $(head -n 3 "$WORK/check.log" | tr '\n' ' ')")
	fi
fi
reload_stats=$(printf '%s\n' "${RELOAD_MS[@]}" | sort -n | awk '{ a[NR] = $1 } END { if (NR) printf "median %d ms, max %d ms", a[int((NR + 1) / 2)], a[NR]; else print "-" }')

echo
echo "lb-test: 2 vulnd replicas behind nginx $("$NGINX" -v 2>&1 | sed 's/.*nginx\///'), wrk -t$LB_THREADS -c$LB_CONNS -d${LB_DURATION}s, $(kv paths "$WORK/prep.txt") paths, load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "requests: $req ($rps req/s); answered by replica 1 $r1, replica 2 $r2 (nginx's log, $logged lines)"
echo "failures: wrk non-2xx $non2xx, socket errors $sock (connect $(wrkv connect "$W"), read $(wrkv read "$W"), write $(wrkv write "$W"), timeout $(wrkv timeout "$W")); nginx 5xx $s5xx (502: $s502), other non-2xx $sother"
echo "retried: $retried requests met an upstream error and nginx answered them from the other replica ($upstream_errors upstream lines in nginx's error log); 499 (dropped by the clients at their end) $s499"
echo "latency: p50 $(wrkv p50_ms "$W") ms, p99 $(wrkv p99_ms "$W") ms, max $(wrkv max_ms "$W") ms"
echo "reloads: $LB_ROUNDS rounds, $((LB_ROUNDS * 2)) SIGHUPs, SIGHUP to new ETag $reload_stats"
if [[ $LB_RESTART == 1 ]]; then
	for n in "${RESTART_NOTES[@]}"; do echo "restart: $n"; done
else
	echo "restart: skipped (LB_RESTART=0, or vulnd serve has no -drain-wait)"
fi
[[ -z $check_line ]] || echo "$check_line"
if ((${#FAILS[@]} > 0)); then
	for f in "${FAILS[@]}"; do echo "FAIL: $f"; done
	echo "result: FAIL (${#FAILS[@]} problems)"
	exit 1
fi
echo "result: PASS"
