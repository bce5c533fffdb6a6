#!/usr/bin/env bash
# Reload storm ("make soak"): vulnd under wrk load while SOAK_RELOADS
# SIGHUPs alternate two snapshots A and B, with SOAK_CORRUPT corrupt ones
# mixed in, and a checker verifies that every 200 comes entirely from the
# snapshot its ETag names. It exits 1 on any failed request, any mixed
# response, a corrupt snapshot accepted (or a good one refused), or RSS not
# back within SOAK_RSS_TOL of the baseline. bench/README.md ("Reload
# storm") says how to read the report. Everything listens on 127.0.0.1
# only; everything this script starts is stopped on exit, Ctrl-C included.
#
# Settings (environment, defaults in brackets):
#   SOAK_CVES [20000]        CVEs in the synthetic feeds
#   SOAK_SEED [1]            synth seed
#   SOAK_CHANGE_RATE [0.05]  share of CVEs that differ between A and B
#   SOAK_RELOADS [100]       SIGHUPs in the storm, corrupt ones included
#   SOAK_CORRUPT [10]        how many of them point at a corrupt snapshot;
#                            SOAK_RELOADS - SOAK_CORRUPT must be even, so
#                            that the storm ends on A, the baseline's snapshot
#   SOAK_CONNS [32]          wrk connections (one wrk thread)
#   SOAK_CHECKERS [4]        concurrent checker clients
#   SOAK_PATHS [3000]        paths crawled per snapshot (the union is used)
#   SOAK_WARM [10]           seconds of wrk on A before the baseline
#   SOAK_DWELL [0.5]         seconds between a reload's log line and the next SIGHUP
#   SOAK_SETTLE [15]         idle seconds after the reload of A that precedes
#                            "RSS baseline" and "RSS after"
#   SOAK_RSS_TOL [10]        % over the baseline that "RSS after" may be
#   SOAK_RELOAD_TIMEOUT [60] seconds one reload may take
#   SOAK_TIMEOUT [900]       seconds the whole run may take
#   SOAK_SERVER_CPU [0]      CPU vulnd is pinned to
#   SOAK_LOAD_CPU [1]        CPU wrk and the checker are pinned to
#   SOAK_REPORT [/tmp/vulnd-soak-<time>.md]  the markdown report; vulnd's
#                            log is kept beside it as <report>.vulnd.log
#   SOAK_KEEP [0]            1 keeps the work directory (feeds, snapshots, logs)
#   BIN []                   the vulnd binary; when unset, ./cmd/vulnd is
#                            built into the work directory
set -euo pipefail
cd "$(dirname "$0")/.."

SOAK_CVES=${SOAK_CVES:-20000}
SOAK_SEED=${SOAK_SEED:-1}
SOAK_CHANGE_RATE=${SOAK_CHANGE_RATE:-0.05}
SOAK_RELOADS=${SOAK_RELOADS:-100}
SOAK_CORRUPT=${SOAK_CORRUPT:-10}
SOAK_CONNS=${SOAK_CONNS:-32}
SOAK_CHECKERS=${SOAK_CHECKERS:-4}
SOAK_PATHS=${SOAK_PATHS:-3000}
SOAK_WARM=${SOAK_WARM:-10}
SOAK_DWELL=${SOAK_DWELL:-0.5}
SOAK_SETTLE=${SOAK_SETTLE:-15}
SOAK_RSS_TOL=${SOAK_RSS_TOL:-10}
SOAK_RELOAD_TIMEOUT=${SOAK_RELOAD_TIMEOUT:-60}
SOAK_TIMEOUT=${SOAK_TIMEOUT:-900}
SOAK_SERVER_CPU=${SOAK_SERVER_CPU:-0}
SOAK_LOAD_CPU=${SOAK_LOAD_CPU:-1}
SOAK_REPORT=${SOAK_REPORT:-/tmp/vulnd-soak-$(date -u +%Y%m%dT%H%M%SZ).md}
SOAK_KEEP=${SOAK_KEEP:-0}

say() { printf 'soak: %s\n' "$*" >&2; }
die() { say "FAIL: $*"; exit 1; }
source bench/lib.sh

for v in SOAK_CVES SOAK_RELOADS SOAK_CORRUPT SOAK_CONNS SOAK_CHECKERS SOAK_PATHS SOAK_WARM SOAK_SETTLE SOAK_RSS_TOL SOAK_RELOAD_TIMEOUT SOAK_TIMEOUT; do
	[[ ${!v} =~ ^[0-9]+$ ]] || die "$v must be a whole number, got '${!v}'"
done
((SOAK_RELOADS >= 2)) || die "SOAK_RELOADS must be at least 2"
((SOAK_CORRUPT < SOAK_RELOADS)) || die "SOAK_CORRUPT must be below SOAK_RELOADS"
(((SOAK_RELOADS - SOAK_CORRUPT) % 2 == 0)) || die "SOAK_RELOADS - SOAK_CORRUPT must be even, so that the storm ends on A"

# ---- processes and cleanup ------------------------------------------------

WORK=
VULND_PID= WRK_PID= CHECK_PID= SAMPLER_PID= PREP_A_PID= PREP_B_PID=

cleanup() {
	local rc=$?
	trap - EXIT INT TERM
	# wrk prints its counts on SIGINT (it ignores nothing else gracefully).
	stop "$WRK_PID" INT
	stop "$CHECK_PID" TERM
	stop "$SAMPLER_PID" TERM
	stop "$PREP_A_PID" TERM
	stop "$PREP_B_PID" TERM
	stop "$VULND_PID" TERM
	if [[ -n $WORK && -d $WORK ]]; then
		if [[ -f $WORK/vulnd.log ]]; then cp "$WORK/vulnd.log" "$SOAK_REPORT.vulnd.log" 2>/dev/null || true; fi
		if [[ $SOAK_KEEP == 1 ]]; then
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

# deadline: fail once the run has taken SOAK_TIMEOUT seconds.
deadline() { ((SECONDS < SOAK_TIMEOUT)) || die "the run took over SOAK_TIMEOUT (${SOAK_TIMEOUT}s)"; }

# ---- tools ----------------------------------------------------------------

command -v go >/dev/null || die "go is not installed"
command -v taskset >/dev/null || die "taskset (util-linux) is not installed"
if ! command -v wrk >/dev/null; then
	say "installing wrk with apt"
	sudo=
	[[ $(id -u) == 0 ]] || sudo=sudo
	$sudo apt-get update -qq && $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq wrk >/dev/null
	command -v wrk >/dev/null || die "could not install wrk"
fi
if (($(nproc) < 2)); then
	say "only one CPU: vulnd and the load share CPU 0"
	SOAK_SERVER_CPU=0 SOAK_LOAD_CPU=0
fi

WORK=$(mktemp -d /tmp/vulnd-soak.XXXXXX)
mkdir -p "$WORK/bin"
if [[ -z ${BIN:-} ]]; then
	BIN=$WORK/bin/vulnd
	go build -o "$BIN" ./cmd/vulnd
fi
[[ -x $BIN ]] || die "$BIN is not an executable"
BIN=$(realpath "$BIN")
go build -C bench -o "$WORK/bin/soakcheck" ./soakcheck
go build -C bench -o "$WORK/bin/synth" ./synth
CHECK=$WORK/bin/soakcheck

# ---- data: feeds, snapshots A and B (see ab_snapshots), corrupt snapshots -

say "generating $SOAK_CVES CVEs (seed $SOAK_SEED) and building snapshots in $WORK"
ab_snapshots "$SOAK_CVES" "$SOAK_SEED" "$SOAK_CHANGE_RATE"

flip_byte() { # flip_byte FILE: xor the middle byte with 0xff, size unchanged
	local f=$1 off b
	off=$(($(stat -c %s "$f") / 2))
	b=$(od -An -tu1 -j "$off" -N1 "$f" | tr -d ' ')
	printf "\\$(printf %03o $((b ^ 255)))" | dd of="$f" bs=1 seek="$off" conv=notrunc status=none
}
# Corrupt copies of B, one per kind (snapshots/FORMAT.md, version 4). The
# error each refusal logs must name the file that was broken (ERR_FILE).
CORRUPT_KINDS=(flip trunc version missing flip-ids)
declare -A CORRUPT_WHAT=(
	[flip]="cves.jsonl.zst with its middle byte flipped"
	[trunc]="cves.jsonl.zst truncated to half its size"
	[version]="manifest.json with version 99"
	[missing]="metrics.jsonl.zst removed"
	[flip-ids]="ids.jsonl.zst (checksummed, not decoded, by serve) with its middle byte flipped"
)
declare -A ERR_FILE=([flip]=cves.jsonl.zst [trunc]=cves.jsonl.zst [version]=manifest.json [missing]=metrics.jsonl.zst [flip-ids]=ids.jsonl.zst)
for k in "${CORRUPT_KINDS[@]}"; do
	d=$WORK/bad-$k
	cp -r "$WORK/B" "$d"
	# Its own built_at, so its manifest is not B's: a SIGHUP that finds
	# the manifest of the snapshot served is skipped without a load.
	sed -i -E 's/"built_at": "[^"]*"/"built_at": "2000-01-01 00:00:00Z"/' "$d/manifest.json"
	case $k in
	flip) flip_byte "$d/cves.jsonl.zst" ;;
	trunc) truncate -s $(($(stat -c %s "$d/cves.jsonl.zst") / 2)) "$d/cves.jsonl.zst" ;;
	version)
		sed -i -E 's/"version": *[0-9]+/"version": 99/' "$d/manifest.json"
		grep -q '"version": 99' "$d/manifest.json" || die "could not rewrite the manifest's version"
		;;
	missing) rm "$d/metrics.jsonl.zst" ;;
	flip-ids) flip_byte "$d/ids.jsonl.zst" ;;
	esac
done
for s in A B; do
	"$BIN" validate "$WORK/$s" >/dev/null 2>&1 || die "snapshot $s does not validate"
done
for k in "${CORRUPT_KINDS[@]}"; do
	if "$BIN" validate "$WORK/bad-$k" >/dev/null 2>&1; then die "corrupt snapshot bad-$k validates"; fi
done
say "data ready after ${SECONDS}s"
deadline

# ---- helpers --------------------------------------------------------------

rss_kb() { # rss_kb PID [FIELD]: VmRSS (or FIELD) of PID in kB, 0 if gone
	local k v _ field=${2:-VmRSS}
	if [[ -r /proc/$1/status ]]; then
		while read -r k v _; do
			if [[ $k == "$field:" ]]; then
				echo "$v"
				return
			fi
		done <"/proc/$1/status"
	fi
	echo 0
}
mib() { awk -v k="$1" 'BEGIN { printf "%.1f", k / 1024 }'; }

# wait_ready PID ADDR: until the server answers 200 with an ETag.
wait_ready() {
	local pid=$1 addr=$2 i
	for ((i = 0; i < 600; i++)); do
		alive "$pid" || die "the server on $addr exited"
		[[ -n $("$CHECK" etag -addr "$addr" 2>/dev/null || true) ]] && return 0
		sleep 0.1
	done
	die "the server on $addr did not become ready in 60 s"
}


# ---- record what each snapshot answers ------------------------------------

PORT_A=$("$CHECK" freeport)
PORT_B=$("$CHECK" freeport)
"$BIN" serve -snapshot "$WORK/A" -addr "127.0.0.1:$PORT_A" 2>"$WORK/prep-A.log" &
PREP_A_PID=$!
"$BIN" serve -snapshot "$WORK/B" -addr "127.0.0.1:$PORT_B" 2>"$WORK/prep-B.log" &
PREP_B_PID=$!
wait_ready "$PREP_A_PID" "127.0.0.1:$PORT_A"
wait_ready "$PREP_B_PID" "127.0.0.1:$PORT_B"
"$CHECK" prepare -a "127.0.0.1:$PORT_A" -b "127.0.0.1:$PORT_B" -o "$WORK/prep" -n "$SOAK_PATHS" -seed "$SOAK_SEED" >"$WORK/prep.txt" ||
	die "recording the expected bodies failed"
stop "$PREP_A_PID" TERM
stop "$PREP_B_PID" TERM
PREP_A_PID= PREP_B_PID=
PATHS=$WORK/prep/paths.txt
declare -A ETAG=([A]=$(kv etag_a "$WORK/prep.txt") [B]=$(kv etag_b "$WORK/prep.txt"))
for s in A B; do # the ETag is the quoted first 24 hex digits of sha256(manifest.json)
	id=$(sha256sum "$WORK/$s/manifest.json" | cut -c1-24)
	[[ ${ETAG[$s]} == "\"$id\"" ]] || die "ETag ${ETAG[$s]} of $s is not \"$id\", from sha256(manifest.json)"
done
say "recorded $(kv paths "$WORK/prep.txt") paths ($(kv paths_differ "$WORK/prep.txt") differ between A and B); A=${ETAG[A]} B=${ETAG[B]}"
say "paths per endpoint (number:paths/differing): $(kv kinds "$WORK/prep.txt")"
deadline

# ---- the server under test ------------------------------------------------

# The reload log lines of cmd/vulnd/serve.go (Main.Reload).
LOADED='msg="snapshot loaded"'
REFUSED='msg="reload failed'
UNCHANGED='msg="snapshot unchanged'
events() { grep -c -e "$LOADED" -e "$REFUSED" -e "$UNCHANGED" "$LOG" || true; }
now_ms() { echo $(($(date +%s%N) / 1000000)); }
FAILS=()

# hup: SIGHUP vulnd and wait for its reload log line; sets LINE (that
# line) and WALL (ms from the signal to the line).
seen=0
hup() {
	local t0 n
	t0=$(now_ms)
	kill -HUP "$VULND_PID"
	while (($(events) <= seen)); do
		alive "$VULND_PID" || die "vulnd exited during a reload; log tail: $(tail -n 5 "$LOG")"
		(($(now_ms) - t0 < SOAK_RELOAD_TIMEOUT * 1000)) || die "a reload was not logged within ${SOAK_RELOAD_TIMEOUT}s"
		sleep 0.02
	done
	WALL=$(($(now_ms) - t0))
	n=$(events)
	((n == seen + 1)) || FAILS+=("$((n - seen)) reload log lines for one SIGHUP")
	seen=$n
	LINE=$(grep -e "$LOADED" -e "$REFUSED" -e "$UNCHANGED" "$LOG" | tail -n1)
}

# settled_rss: reload A (the server frees memory to the OS after each
# reload), stay idle SOAK_SETTLE seconds, then set RSS (kB). Baseline and
# "after" are both taken this way: the RSS of a Go server under traffic
# sits anywhere between its live set and about twice that (GOGC=100),
# depending on when the last GC ran, so two raw samples differ by far more
# than a leak would add.
settled_rss() {
	ln -sfn "$WORK/A" "$WORK/current.tmp"
	mv -T "$WORK/current.tmp" "$WORK/current"
	hup
	# A when A is served already: not loaded again, memory still freed.
	[[ $LINE == *"$LOADED"* || $LINE == *"$UNCHANGED"* ]] || die "reloading A failed: $LINE"
	sleep "$SOAK_SETTLE"
	RSS=$(rss_kb "$VULND_PID")
}

ADDR=127.0.0.1:$("$CHECK" freeport)
URL=http://$ADDR
LOG=$WORK/vulnd.log
ln -sfn "$WORK/A" "$WORK/current"
taskset -c "$SOAK_SERVER_CPU" "$BIN" serve -snapshot "$WORK/current" -addr "$ADDR" 2>"$LOG" &
VULND_PID=$!
wait_ready "$VULND_PID" "$ADDR"
[[ $("$CHECK" etag -addr "$ADDR") == "${ETAG[A]}" ]] || die "the server does not answer with A's ETag"

say "warming up: wrk ${SOAK_WARM}s on A, then ${SOAK_SETTLE}s idle"
taskset -c "$SOAK_LOAD_CPU" wrk -t1 -c"$SOAK_CONNS" -d"${SOAK_WARM}s" --timeout 5s -s bench/soak.lua "$URL" -- "$PATHS" >"$WORK/wrk-warm.txt" 2>&1 ||
	die "wrk warm-up failed: $(cat "$WORK/wrk-warm.txt")"
grep -q '^SOAKWRK ' "$WORK/wrk-warm.txt" || die "wrk warm-up printed no counts: $(cat "$WORK/wrk-warm.txt")"
seen=$(events)
settled_rss
RSS_BASE=$RSS
say "baseline RSS $(mib "$RSS_BASE") MiB"

# ---- the storm ------------------------------------------------------------

# Which SIGHUPs point at a corrupt snapshot: evenly spread, kinds in turn.
declare -A BAD_AT=()
for ((k = 1; k <= SOAK_CORRUPT; k++)); do
	pos=$((k * SOAK_RELOADS / (SOAK_CORRUPT + 1)))
	((pos >= 1)) || pos=1
	while [[ -n ${BAD_AT[$pos]:-} ]]; do pos=$((pos + 1)); done
	BAD_AT[$pos]=${CORRUPT_KINDS[$(((k - 1) % ${#CORRUPT_KINDS[@]}))]}
done

( # RSS every 100 ms
	trap 'exit 0' TERM
	while alive "$VULND_PID"; do
		rss_kb "$VULND_PID"
		sleep 0.1
	done
) >"$WORK/rss.txt" &
SAMPLER_PID=$!
taskset -c "$SOAK_LOAD_CPU" wrk -t1 -c"$SOAK_CONNS" -d3600s --timeout 5s -s bench/soak.lua "$URL" -- "$PATHS" >"$WORK/wrk.txt" 2>&1 &
WRK_PID=$!
taskset -c "$SOAK_LOAD_CPU" "$CHECK" check -addr "$ADDR" -expect "$WORK/prep/expect.json" -c "$SOAK_CHECKERS" -out "$WORK/check.txt" >/dev/null 2>"$WORK/check.log" &
CHECK_PID=$!
sleep 1
LOAD_BEFORE=$(cut -d' ' -f1-3 /proc/loadavg)

say "storm: $SOAK_RELOADS SIGHUPs ($SOAK_CORRUPT corrupt) under wrk -c$SOAK_CONNS and $SOAK_CHECKERS checkers"
declare -A WHY=() # corrupt kind -> the error its first refusal logged
ok=0 refused=0 want_ok=0 want_refused=0
cur=A next=B
: >"$WORK/reloads.tsv"
STORM_START=$(now_ms)
for ((i = 1; i <= SOAK_RELOADS; i++)); do
	kind=${BAD_AT[$i]:-}
	if [[ -n $kind ]]; then
		target=bad-$kind want=refused
		want_refused=$((want_refused + 1))
	else
		target=$next want=loaded
		want_ok=$((want_ok + 1))
	fi
	ln -sfn "$WORK/$target" "$WORK/current.tmp"
	mv -T "$WORK/current.tmp" "$WORK/current"
	hup
	line=$LINE
	dur=-
	if [[ $line == *"$LOADED"* ]]; then
		got=loaded ok=$((ok + 1))
		dur=$(sed -n 's/.* duration=\([^ ]*\).*/\1/p' <<<"$line")
		id=$(sed -n 's/.* id=\([0-9a-f]*\).*/\1/p' <<<"$line")
		[[ $want != loaded || "\"$id\"" == "${ETAG[$target]}" ]] || FAILS+=("reload $i: loaded id $id, want ${ETAG[$target]} of $target")
	else
		got=refused refused=$((refused + 1))
	fi
	if [[ $got != "$want" ]]; then
		FAILS+=("reload $i (to $target): $got, want $want: $line")
	elif [[ $got == loaded ]]; then
		cur=$target
		[[ $cur == A ]] && next=B || next=A
	else
		why=$(sed -n 's/.* err=//p' <<<"$line")
		[[ -n ${WHY[$kind]:-} ]] || WHY[$kind]=$why
		[[ $why == *"${ERR_FILE[$kind]}"* ]] || FAILS+=("reload $i (to $target): the error does not name ${ERR_FILE[$kind]}: $why")
	fi
	# The server must now answer from the snapshot it should hold.
	e=$("$CHECK" etag -addr "$ADDR" 2>&1 || true)
	[[ $e == "${ETAG[$cur]}" ]] || FAILS+=("after reload $i (to $target, $got): the server answers ETag '$e', want ${ETAG[$cur]} ($cur)")
	printf '%d\t%s\t%s\t%s\t%s\t%d\n' "$i" "$target" "$want" "$got" "$dur" "$WALL" >>"$WORK/reloads.tsv"
	if ((i % 10 == 0)); then
		say "  $i/$SOAK_RELOADS reloads ($ok loaded, $refused refused), RSS $(mib "$(rss_kb "$VULND_PID")") MiB"
	fi
	deadline
	sleep "$SOAK_DWELL"
done
STORM_S=$((($(now_ms) - STORM_START) / 1000))

stop "$WRK_PID" INT
WRK_PID=
stop "$CHECK_PID" TERM
CHECK_PID=
stop "$SAMPLER_PID" TERM
SAMPLER_PID=
grep -q '^SOAKWRK ' "$WORK/wrk.txt" || die "wrk printed no counts: $(cat "$WORK/wrk.txt")"
[[ -s $WORK/check.txt ]] || die "the checker wrote no counts: $(cat "$WORK/check.log")"
RSS_PEAK=$(sort -n "$WORK/rss.txt" | tail -n1)
RSS_MEAN=$(awk '{ s += $1 } END { printf "%.0f", s / NR }' "$WORK/rss.txt")
RSS_HWM=$(rss_kb "$VULND_PID" VmHWM)

say "storm over after ${STORM_S}s; reloading A, then ${SOAK_SETTLE}s idle"
settled_rss
RSS_AFTER=$RSS

# Stop vulnd the way an operator would; it must drain and exit 0.
kill -TERM "$VULND_PID"
vulnd_rc=0
wait "$VULND_PID" || vulnd_rc=$?
VULND_PID=
((vulnd_rc == 0)) || FAILS+=("vulnd exited $vulnd_rc after SIGTERM")

# ---- checks and the report ------------------------------------------------

W=$WORK/wrk.txt
C=$WORK/check.txt
wrk_req=$(wrkv requests "$W")
wrk_rps=$(awk -v r="$wrk_req" -v us="$(wrkv duration_us "$W")" 'BEGIN { printf "%.0f", r / (us / 1e6) }')
wrk_non2xx=$(wrkv non2xx "$W")
wrk_sock=$(($(wrkv connect "$W") + $(wrkv read "$W") + $(wrkv write "$W") + $(wrkv timeout "$W")))
warm_bad=$(($(wrkv non2xx "$WORK/wrk-warm.txt") + $(wrkv connect "$WORK/wrk-warm.txt") + $(wrkv read "$WORK/wrk-warm.txt") + $(wrkv write "$WORK/wrk-warm.txt") + $(wrkv timeout "$WORK/wrk-warm.txt")))
chk_req=$(kv check_requests "$C")
chk_mixed=$(kv check_mismatch "$C")
chk_non200=$(kv check_non200 "$C")
chk_err=$(kv check_errors "$C")
other_errors=$(grep 'level=ERROR' "$LOG" | grep -vc "$REFUSED" || true)
panics=$(grep -c -e '^panic' -e 'fatal error' "$LOG" || true)
dur_stats=$(awk -F'\t' '$5 != "-" { d = $5
		if (d ~ /ms$/) { sub(/ms$/, "", d) } else if (d ~ /µs$/) { sub(/µs$/, "", d); d /= 1000 } else if (d ~ /s$/) { sub(/s$/, "", d); d *= 1000 }
		print d }' "$WORK/reloads.tsv" | sort -n |
	awk '{ a[NR] = $1 } END { if (NR) printf "min %d ms, median %d ms, max %d ms", a[1], a[int((NR + 1) / 2)], a[NR]; else print "-" }')
pct() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%+.0f%%", (a - b) * 100 / b }'; }
ratio=$(awk -v a="$RSS_PEAK" -v b="$RSS_BASE" 'BEGIN { printf "%.2f", a / b }')
rss_ok=$(awk -v a="$RSS_AFTER" -v b="$RSS_BASE" -v t="$SOAK_RSS_TOL" 'BEGIN { print (a <= b * (1 + t / 100)) ? 1 : 0 }')

((wrk_non2xx == 0)) || FAILS+=("wrk: $wrk_non2xx non-2xx responses (first: $(sed -n 's/^SOAKWRK_FIRST_BAD //p' "$W"))")
((wrk_sock == 0)) || FAILS+=("wrk: $wrk_sock socket errors")
((warm_bad == 0)) || FAILS+=("wrk warm-up: $warm_bad non-2xx responses or socket errors")
((chk_mixed == 0)) || FAILS+=("checker: $chk_mixed responses whose body is not their ETag's snapshot's ($(kv check_other_snapshot_body "$C") with the other snapshot's body, $(kv check_unknown_etag "$C") unknown ETags)")
((chk_non200 == 0)) || FAILS+=("checker: $chk_non200 non-200 responses")
((chk_err == 0)) || FAILS+=("checker: $chk_err request errors")
((ok == want_ok && refused == want_refused)) || FAILS+=("reloads: $ok loaded / $refused refused, want $want_ok / $want_refused")
((other_errors == 0)) || FAILS+=("vulnd log: $other_errors ERROR lines besides refused reloads")
((panics == 0)) || FAILS+=("vulnd log: a panic or fatal error")
((chk_req > 0 && wrk_req > 0)) || FAILS+=("no traffic was measured")
((rss_ok == 1)) || FAILS+=("RSS after the storm $(mib "$RSS_AFTER") MiB is over the baseline $(mib "$RSS_BASE") MiB + ${SOAK_RSS_TOL}%")

result=PASS
((${#FAILS[@]} == 0)) || result="FAIL (${#FAILS[@]} problems)"

{
	echo "## vulnd reload storm, $(date -u +%Y-%m-%dT%H:%M:%SZ)"
	echo
	echo "$SOAK_CVES synthetic CVEs (seed $SOAK_SEED); A = next day with $(awk -v r="$SOAK_CHANGE_RATE" 'BEGIN { printf "%g", r * 100 }')% changed, B = first day again built with \`-previous A\`."
	echo "$(kv paths "$WORK/prep.txt") paths over all 15 endpoints, $(kv paths_differ "$WORK/prep.txt") of them with different bodies in A and B."
	echo "vulnd on CPU $SOAK_SERVER_CPU; wrk (1 thread, $SOAK_CONNS connections) and the checker ($SOAK_CHECKERS clients) on CPU $SOAK_LOAD_CPU; load average before the storm: $LOAD_BEFORE."
	echo
	echo "| what | value |"
	echo "|---|---|"
	echo "| storm | ${STORM_S} s, $SOAK_RELOADS SIGHUPs, ${SOAK_DWELL} s apart (plus one reload of A before and one after, for RSS) |"
	echo "| reloads ok / refused | $ok / $refused (want $want_ok / $want_refused) |"
	echo "| reload time | $dur_stats |"
	echo "| requests | wrk $wrk_req ($wrk_rps req/s), checker $chk_req |"
	echo "| wrk latency | p50 $(wrkv p50_ms "$W") ms, p99 $(wrkv p99_ms "$W") ms, max $(wrkv max_ms "$W") ms |"
	echo "| non-2xx | wrk $wrk_non2xx, checker $chk_non200 |"
	echo "| socket errors | wrk $wrk_sock (connect $(wrkv connect "$W"), read $(wrkv read "$W"), write $(wrkv write "$W"), timeout $(wrkv timeout "$W")), checker $chk_err |"
	echo "| mixed bodies found | $chk_mixed of $chk_req checked (ETag A $(kv check_snap_A "$C"), B $(kv check_snap_B "$C"); $(kv check_discriminating "$C") on paths whose body differs) |"
	echo "| RSS baseline | $(mib "$RSS_BASE") MiB (after ${SOAK_WARM} s of wrk: SIGHUP to A, ${SOAK_SETTLE} s idle) |"
	echo "| RSS during the storm | mean $(mib "$RSS_MEAN") MiB, peak $(mib "$RSS_PEAK") MiB (100 ms samples; VmHWM $(mib "$RSS_HWM") MiB) |"
	echo "| RSS after | $(mib "$RSS_AFTER") MiB, $(pct "$RSS_AFTER" "$RSS_BASE") vs baseline (taken the same way: SIGHUP to A, ${SOAK_SETTLE} s idle; allowed +${SOAK_RSS_TOL}%) |"
	echo "| peak / steady | $ratio (peak over baseline) |"
	echo "| result | **$result** |"
	echo
	echo "Corrupt snapshots, each refused with (first time):"
	echo
	for k in "${CORRUPT_KINDS[@]}"; do
		if [[ -n ${WHY[$k]:-} ]]; then echo "- ${CORRUPT_WHAT[$k]}: \`${WHY[$k]}\`"; fi
	done
	if ((${#FAILS[@]} > 0)); then
		echo
		echo "Failures:"
		echo
		for f in "${FAILS[@]}"; do echo "- $f"; done
		if [[ -s $WORK/check.log ]]; then
			echo
			echo "First checker complaints:"
			echo
			echo '```'
			head -n 20 "$WORK/check.log"
			echo '```'
		fi
	fi
} >"$SOAK_REPORT"

echo
cat "$SOAK_REPORT"
echo
say "report: $SOAK_REPORT; vulnd's log: $SOAK_REPORT.vulnd.log"
[[ $result == PASS ]]
