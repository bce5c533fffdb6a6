#!/usr/bin/env bash
# make bench-scale: what CVE JSON 5 records cost at NVD's scale (issue 26
# item 8), in one run. See bench/README.md ("Scale with records").
#
# 1. Generates one data set with bench/synth -cve5 (a record for every
#    CVE, a share of them in NVD's backlog: no configurations in the
#    feeds) and builds two snapshots of it, alternated SCALE_BUILDS times,
#    each build pinned to SCALE_BUILD_CPUS under /usr/bin/time (wall time,
#    CPU time and peak RSS): "nvd" from the feeds alone, "records" from the
#    feeds and cves.zip. A build runs on as many cores as it is given (Go
#    takes GOMAXPROCS from the CPUs it may run on): one by default, every
#    core of the machine in production; the report says which. Both get synth's EPSS file (-epss), or neither with
#    SCALE_EPSS=0, so the two differ by the records alone.
# 2. Loads each snapshot SCALE_LOADS times, alternated: `vulnd serve`
#    pinned to SCALE_CPU; the load time is the duration of its "snapshot
#    loaded" log line, the RSS VmRSS SCALE_SETTLE seconds after its
#    "warm-up done" line (the vendor, product and ?version= tables built
#    after /readyz answers, and their garbage handed back: read before,
#    the RSS caught the warm-up's peak at 400k).
# 3. Picks with bench/scalepick, in the records snapshot, a product whose
#    CVEs come mostly from the records' entries and one of similar size
#    whose CVEs come from NVD's CPEs, at versions matching a similar
#    number of CVEs, and runs wrk (bench/load.lua, pinned to
#    SCALE_CLIENT_CPU, 1 thread, SCALE_CONNS connections) on each
#    ?version= query in turn, SCALE_ROUNDS alternating rounds.
# 4. Prints a table of medians with the ratios records/nvd against the
#    15 % budget, and the ?version= ratio against the 10 % one, to stdout
#    and SCALE_REPORT (Markdown, for bench/RESULTS.md).
#
# Everything listens on 127.0.0.1; every step is bounded in time
# (SCALE_STEP_TIMEOUT per generation or build, SCALE_READY_TIMEOUT per
# load) and everything started is stopped on exit, Ctrl-C included.
#
# Settings (environment, defaults in brackets):
#   SCALE_CVES [400000]     CVEs to generate (bench/synth -seed 1 -cve5)
#   SCALE_SMOKE [0]         1: a smoke run; SCALE_CVES, SCALE_DURATION,
#                           SCALE_WARMUP and SCALE_ROUNDS default to
#                           20000, 3, 1 and 2
#   SCALE_DATA []           a directory bench/synth -cve5 wrote (feeds,
#                           cves.zip, catalog, EPSS file): used instead of
#                           generating one
#   SCALE_EPSS [1]          1: -epss with synth's EPSS file in both
#                           builds; 0: in neither
#   SCALE_BUILDS [3]        builds of each snapshot (medians)
#   SCALE_LOADS [3]         loads of each snapshot (medians)
#   SCALE_SETTLE [1]        seconds from serve's "warm-up done" line to
#                           reading VmRSS
#   SCALE_CPU [0]           CPU of vulnd serve (loads and ?version=)
#   SCALE_BUILD_CPUS [0]    CPUs of vulnd build (taskset -c list: 0,1
#                           gives both builds both cores of this machine)
#   SCALE_CLIENT_CPU [1]    CPU of wrk
#   SCALE_DURATION [10]     seconds per wrk run, after SCALE_WARMUP [2]
#   SCALE_ROUNDS [3]        alternating wrk rounds
#   SCALE_CONNS [32]
#   SCALE_POOL [500]        products scalepick considers (the largest)
#   SCALE_PORT [18580]      vulnd's port; its admin port is the next one
#   SCALE_STEP_TIMEOUT [1800]  SCALE_READY_TIMEOUT [600]  (seconds)
#   SCALE_REPORT [/tmp/vulnd-scale-<time>.md]
#   SCALE_KEEP [0]          1 keeps the work directory (data, snapshots)
#   BIN [bin/vulnd]         the binary measured (default: made from the
#                           work tree); the report names its commit
set -euo pipefail
cd "$(dirname "$0")/.."

START=$(date +%s)
LOADAVG_START=$(cut -d' ' -f1-3 /proc/loadavg)
SCALE_SMOKE=${SCALE_SMOKE:-0}
if [[ $SCALE_SMOKE == 1 ]]; then
	SCALE_CVES=${SCALE_CVES:-20000} SCALE_DURATION=${SCALE_DURATION:-3}
	SCALE_WARMUP=${SCALE_WARMUP:-1} SCALE_ROUNDS=${SCALE_ROUNDS:-2}
fi
SCALE_CVES=${SCALE_CVES:-400000}
SCALE_DATA=${SCALE_DATA:-}
SCALE_EPSS=${SCALE_EPSS:-1}
SCALE_BUILDS=${SCALE_BUILDS:-3}
SCALE_LOADS=${SCALE_LOADS:-3}
SCALE_SETTLE=${SCALE_SETTLE:-1}
SCALE_CPU=${SCALE_CPU:-0}
SCALE_BUILD_CPUS=${SCALE_BUILD_CPUS:-0}
SCALE_CLIENT_CPU=${SCALE_CLIENT_CPU:-1}
SCALE_DURATION=${SCALE_DURATION:-10}
SCALE_WARMUP=${SCALE_WARMUP:-2}
SCALE_ROUNDS=${SCALE_ROUNDS:-3}
SCALE_CONNS=${SCALE_CONNS:-32}
SCALE_POOL=${SCALE_POOL:-500}
SCALE_PORT=${SCALE_PORT:-18580}
SCALE_STEP_TIMEOUT=${SCALE_STEP_TIMEOUT:-1800}
SCALE_READY_TIMEOUT=${SCALE_READY_TIMEOUT:-600}
SCALE_REPORT=${SCALE_REPORT:-/tmp/vulnd-scale-$(date -u +%Y%m%dT%H%M%SZ).md}
SCALE_KEEP=${SCALE_KEEP:-0}
BIN=${BIN:-bin/vulnd}

say() { printf 'bench-scale: %s\n' "$*" >&2; }
die() {
	say "FAIL: $*"
	exit 1
}

for v in SCALE_CVES SCALE_BUILDS SCALE_LOADS SCALE_SETTLE SCALE_CPU SCALE_CLIENT_CPU SCALE_DURATION SCALE_WARMUP SCALE_ROUNDS SCALE_CONNS SCALE_POOL SCALE_PORT SCALE_STEP_TIMEOUT SCALE_READY_TIMEOUT; do
	[[ ${!v} =~ ^[0-9]+$ ]] || die "$v must be a whole number, got '${!v}'"
done
for v in SCALE_EPSS SCALE_KEEP SCALE_SMOKE; do
	[[ ${!v} == 0 || ${!v} == 1 ]] || die "$v must be 0 or 1, got '${!v}'"
done
[[ $SCALE_BUILD_CPUS =~ ^[0-9]+([,-][0-9]+)*$ ]] || die "SCALE_BUILD_CPUS must be a taskset CPU list such as 0 or 0,1, got '$SCALE_BUILD_CPUS'"
((SCALE_CVES >= 1 && SCALE_BUILDS >= 1 && SCALE_LOADS >= 1 && SCALE_ROUNDS >= 1 && SCALE_DURATION >= 1 && SCALE_CONNS >= 1)) ||
	die "SCALE_CVES, SCALE_BUILDS, SCALE_LOADS, SCALE_ROUNDS, SCALE_DURATION and SCALE_CONNS must be at least 1"
((SCALE_PORT >= 1024 && SCALE_PORT < 65535)) || die "SCALE_PORT must be in 1024..65534, got $SCALE_PORT"
if [[ -n $SCALE_DATA ]]; then
	[[ -f $SCALE_DATA/cwec_synth.xml && -f $SCALE_DATA/cves.zip ]] ||
		die "SCALE_DATA=$SCALE_DATA holds no cwec_synth.xml and cves.zip (bench/synth -cve5's output)"
	SCALE_DATA=$(cd "$SCALE_DATA" && pwd)
fi
PORT=$SCALE_PORT ADMIN=$((SCALE_PORT + 1))
for port in $PORT $ADMIN; do
	if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
		die "127.0.0.1:$port is in use; pick other ports with SCALE_PORT"
	fi
done
for t in wrk taskset curl bc timeout; do
	command -v "$t" >/dev/null || die "$t is missing (apt-get install wrk util-linux curl bc coreutils)"
done
[[ -x /usr/bin/time ]] || die "/usr/bin/time is missing (apt-get install time): it gives a build's peak RSS"
[[ -x $BIN ]] || make build

# Long steps run in the background in a session of their own and are
# waited for, so a signal is acted on at once (see bench/load.sh);
# cleanup stops whatever is still running.
WORK=$(mktemp -d /tmp/vulnd-scale.XXXXXX)
PIDS=()
cleanup() {
	local code=$? p
	trap - INT TERM
	for p in "${PIDS[@]}"; do kill -- "-$p" 2>/dev/null || kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	if [[ $SCALE_KEEP == 1 ]]; then say "work directory kept: $WORK"; else rm -rf "$WORK"; fi
	exit "$code"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
run() { # command... : in the background, bounded by SCALE_STEP_TIMEOUT
	setsid timeout "$SCALE_STEP_TIMEOUT" "$@" &
	local p=$! code=0
	PIDS+=("$p")
	wait "$p" || code=$?
	((code != 124)) || die "$1 took longer than SCALE_STEP_TIMEOUT=${SCALE_STEP_TIMEOUT}s: $*"
	return "$code"
}
median() { tr ' ' '\n' | grep . | sort -g | awk '{a[NR]=$1} END {if (NR == 0) print 0; else if (NR % 2) print a[(NR+1)/2]; else print (a[NR/2]+a[NR/2+1])/2}'; }
ratio() { echo "scale=6; $1 / $2" | bc; }
# cpu_count LIST: how many CPUs a taskset list ("0", "0,1", "0-3,6") names.
cpu_count() {
	local n=0 part
	for part in ${1//,/ }; do
		if [[ $part == *-* ]]; then n=$((n + ${part#*-} - ${part%-*} + 1)); else n=$((n + 1)); fi
	done
	echo "$n"
}
# bin_commit BIN: the commit BIN was built from, as Go stamped it in the
# binary (vcs.revision, vcs.modified), not the work tree's.
bin_commit() {
	local info rev
	info=$(go version -m "$1" 2>/dev/null) || true
	rev=$(sed -n 's/^[[:space:]]*build[[:space:]]*vcs.revision=//p' <<<"$info" | head -1)
	if [[ -z $rev ]]; then
		echo "$1 (no commit stamped in it)"
		return
	fi
	echo "${rev:0:7}$([[ $(sed -n 's/^[[:space:]]*build[[:space:]]*vcs.modified=//p' <<<"$info") == true ]] && echo ' (with uncommitted changes)') ($1)"
}
# seconds GO_DURATION: "1m2.5s", "850ms", "3.2s", "900µs" -> seconds.
seconds() {
	local d=$1 total=0 n u
	while [[ $d =~ ^([0-9.]+)(h|ms|us|µs|ns|m|s)([0-9].*)?$ ]]; do
		n=${BASH_REMATCH[1]} u=${BASH_REMATCH[2]} d=${BASH_REMATCH[3]}
		case $u in
		h) total=$(echo "$total + $n * 3600" | bc) ;;
		m) total=$(echo "$total + $n * 60" | bc) ;;
		s) total=$(echo "$total + $n" | bc) ;;
		ms) total=$(echo "scale=6; $total + $n / 1000" | bc) ;;
		us | µs) total=$(echo "scale=6; $total + $n / 1000000" | bc) ;;
		ns) total=$(echo "scale=9; $total + $n / 1000000000" | bc) ;;
		esac
	done
	[[ -z $d ]] || return 1
	echo "$total"
}

say "work directory $WORK"
# Measured on this 2-CPU machine at 400k: ~1 min to generate, builds of
# ~1.5 (NVD) to ~3 min (records) on one CPU, ~15 s a load.
est=$((SCALE_CVES * (60 + SCALE_BUILDS * 270 + SCALE_LOADS * 40) / 400000 + 2 * SCALE_ROUNDS * (SCALE_WARMUP + SCALE_DURATION + 1) + 20))
say "expected duration: about $(((est + 59) / 60)) minutes; ends about $(date -d "@$((START + est))" +%H:%M)"

# 1. Data.
DATA=$SCALE_DATA
if [[ -z $DATA ]]; then
	go build -C bench -o "$WORK/synth" ./synth
	say "generating $SCALE_CVES CVEs with their CVE JSON 5 records"
	DATA=$WORK/data
	run "$WORK/synth" -o "$DATA" -cves "$SCALE_CVES" -seed 1 -cve5 >&2
fi
EPSS_FLAGS=()
EPSS_DESC="neither build has EPSS scores (SCALE_EPSS=0)"
if [[ $SCALE_EPSS == 1 ]]; then
	epss=$(compgen -G "$DATA/epss_scores-*.csv.gz" | head -1 || true)
	[[ -n $epss ]] || die "$DATA holds no epss_scores-*.csv.gz (set SCALE_EPSS=0 to build without)"
	EPSS_FLAGS=(-epss "$epss")
	EPSS_DESC="both builds read synth's EPSS file ($(basename "$epss"))"
fi
shopt -s nullglob
FEEDS=("$DATA"/nvdcve-2.0-*.json.gz)
shopt -u nullglob
((${#FEEDS[@]})) || die "$DATA holds no nvdcve-2.0-*.json.gz"
feeds_mb=$(du -cm "${FEEDS[@]}" | tail -1 | cut -f1)
zip_mb=$(du -m "$DATA/cves.zip" | cut -f1)

# 2. Builds, alternated: nvd, records, then records, nvd, ...
declare -A B_WALL B_CPU B_RSS B_READ L_SEC L_RSS L_HWM L_READY
build() { # build KIND ROUND
	local kind=$1 r=$2 out=$WORK/snap-$1 inputs=("${FEEDS[@]}")
	[[ $kind == records ]] && inputs+=("$DATA/cves.zip")
	rm -rf "$out"
	run /usr/bin/time -f '%e %M %U %S' -o "$WORK/time-$kind" taskset -c "$SCALE_BUILD_CPUS" "$BIN" build -cwe "$DATA/cwec_synth.xml" "${EPSS_FLAGS[@]}" \
		-o "$out" -time 2026-11-22T06:00:00Z "${inputs[@]}" >"$WORK/build-$kind.log" 2>&1 ||
		die "vulnd build ($kind) failed: $(tail -3 "$WORK/build-$kind.log")"
	local wall kb user sys cpu read=
	read -r wall kb user sys <"$WORK/time-$kind"
	cpu=$(echo "$user + $sys" | bc)
	B_WALL[$kind]+="$wall " B_RSS[$kind]+="$((kb / 1024)) " B_CPU[$kind]+="$cpu "
	if [[ $kind == records ]]; then
		# The stages that read the records (vulnd build's stderr): on
		# more than one core, what is left of their read once the
		# feeds are read ("... beside the feeds"), then their merge.
		read=0
		while read -r d; do
			d=$(seconds "$d") && read=$(echo "$read + $d" | bc)
		done < <(sed -n 's/^vulnd build: read CVE JSON 5 records\( beside the feeds\)\{0,1\}: \([^ ]*\) .*/\2/p' "$WORK/build-$kind.log")
		B_READ[$kind]+="$read "
	fi
	say "build $r $kind: ${wall}s (CPU ${cpu}s), peak RSS $((kb / 1024)) MB${read:+, records read in ${read}s} ($(grep '^wrote' "$WORK/build-$kind.log" || true))"
}
for ((r = 1; r <= SCALE_BUILDS; r++)); do
	if ((r % 2)); then order=(nvd records); else order=(records nvd); fi
	for kind in "${order[@]}"; do build "$kind" "$r"; done
done
cves_of() { grep -o '"cves": *[0-9]*' "$WORK/snap-$1/manifest.json" | head -1 | grep -o '[0-9]*$'; }
counts_of() { grep '^wrote' "$WORK/build-$1.log" | sed 's/^wrote [^:]*: //; s/ in [^ ]*$//'; }

# 3. Loads, alternated the same way.
VPID=
rss_kb() { awk '/^VmRSS:/ {print $2}' "/proc/$1/status" 2>/dev/null || echo 0; }
hwm_kb() { awk '/^VmHWM:/ {print $2}' "/proc/$1/status" 2>/dev/null || echo 0; }
serve() { # serve KIND LOG: starts vulnd on the snapshot, waits for /readyz
	local kind=$1 log=$2 i
	setsid taskset -c "$SCALE_CPU" "$BIN" serve -snapshot "$WORK/snap-$kind" -addr "127.0.0.1:$PORT" -admin-addr "127.0.0.1:$ADMIN" -drain-wait 0s >"$log" 2>&1 &
	VPID=$!
	PIDS+=("$VPID")
	T0=$(date +%s.%N)
	for ((i = 0; i < SCALE_READY_TIMEOUT * 20; i++)); do
		[[ $(curl -s -o /dev/null -w '%{http_code}' --max-time 2 "http://127.0.0.1:$ADMIN/readyz" 2>/dev/null) == 200 ]] && return 0
		kill -0 "$VPID" 2>/dev/null || die "vulnd serve ($kind) exited: $(tail -3 "$log")"
		sleep 0.05
	done
	die "vulnd serve ($kind) not ready after SCALE_READY_TIMEOUT=${SCALE_READY_TIMEOUT}s"
}
unserve() { # stops VPID: SIGTERM, then SIGKILL after 30 s
	local i
	kill -TERM "$VPID" 2>/dev/null || true
	for ((i = 0; i < 300; i++)); do
		kill -0 "$VPID" 2>/dev/null || break
		sleep 0.1
	done
	kill -KILL "$VPID" 2>/dev/null || true
	wait "$VPID" 2>/dev/null || true
	VPID=
}
for ((r = 1; r <= SCALE_LOADS; r++)); do
	if ((r % 2)); then order=(nvd records); else order=(records nvd); fi
	for kind in "${order[@]}"; do
		log=$WORK/serve-$kind-$r.log
		serve "$kind" "$log"
		ready=$(printf '%.2f' "$(echo "$(date +%s.%N) - $T0" | bc)")
		line=$(grep 'msg="snapshot loaded"' "$log" | head -1)
		dur=$(sed -n 's/.* duration=\([^ ]*\).*/\1/p' <<<"$line")
		sec=$(seconds "$dur") || die "cannot read the load duration '$dur' of: $line"
		for ((i = 0; i < SCALE_READY_TIMEOUT * 20; i++)); do
			grep -q 'msg="warm-up done"' "$log" && break
			kill -0 "$VPID" 2>/dev/null || die "vulnd serve ($kind) exited: $(tail -3 "$log")"
			sleep 0.05
		done
		grep -q 'msg="warm-up done"' "$log" || die "vulnd serve ($kind): no \"warm-up done\" line after SCALE_READY_TIMEOUT=${SCALE_READY_TIMEOUT}s"
		warm=$(printf '%.2f' "$(echo "$(date +%s.%N) - $T0" | bc)")
		sleep "$SCALE_SETTLE"
		rss=$(($(rss_kb "$VPID") / 1024)) hwm=$(($(hwm_kb "$VPID") / 1024))
		unserve
		L_SEC[$kind]+="$sec " L_RSS[$kind]+="$rss " L_HWM[$kind]+="$hwm " L_READY[$kind]+="$ready "
		say "load $r $kind: loaded in $dur (ready after ${ready}s, warm after ${warm}s), RSS $rss MB ${SCALE_SETTLE}s after, peak $hwm MB"
	done
done

# 4. ?version= on a product of CNA data against one of NVD data.
go build -C bench -o "$WORK/scalepick" ./scalepick
say "picking the ?version= queries from the records snapshot"
run "$WORK/scalepick" -snapshot "$WORK/snap-records" -pool "$SCALE_POOL" >"$WORK/picks.txt" || die "scalepick failed"
field() { sed -n "s/.* $1=\([^ ]*\).*/\1/p" <<<"$2"; }
PICK_CNA=$(grep '^PICK class=cna ' "$WORK/picks.txt") PICK_NVD=$(grep '^PICK class=nvd ' "$WORK/picks.txt")
for c in cna nvd; do
	p=PICK_${c^^}
	say "$c: $(cut -d' ' -f3- <<<"${!p}")"
	field path "${!p}" >"$WORK/paths-$c.txt"
done
serve records "$WORK/serve-version.log"
for c in cna nvd; do
	p=PICK_${c^^}
	url="http://127.0.0.1:$PORT$(cat "$WORK/paths-$c.txt")"
	total=$(curl -s -D - -o /dev/null --max-time 30 "$url" | tr -d '\r' | sed -n 's/^[Xx]-[Tt]otal-[Cc]ount: //p')
	[[ $total == "$(field matches "${!p}")" ]] || die "$url answers X-Total-Count '$total', scalepick counted $(field matches "${!p}")"
done
declare -A W_RPS W_P50 W_P99 W_BAD
wrk_run() { # wrk_run SECONDS CLASS: sets LINE to wrk's RESULT line
	setsid timeout $(($1 + 30)) taskset -c "$SCALE_CLIENT_CPU" wrk -t1 -c"$SCALE_CONNS" -d"$1"s -s bench/load.lua "http://127.0.0.1:$PORT" -- "$WORK/paths-$2.txt" >"$WORK/wrk.txt" 2>&1 &
	local p=$!
	PIDS+=("$p")
	wait "$p" || die "wrk failed: $(tail -3 "$WORK/wrk.txt")"
	LINE=$(grep '^RESULT' "$WORK/wrk.txt") || die "wrk printed no result: $(tail -3 "$WORK/wrk.txt")"
}
for ((r = 1; r <= SCALE_ROUNDS; r++)); do
	if ((r % 2)); then order=(cna nvd); else order=(nvd cna); fi
	for c in "${order[@]}"; do
		if ((SCALE_WARMUP > 0)); then wrk_run "$SCALE_WARMUP" "$c"; fi
		wrk_run "$SCALE_DURATION" "$c"
		line=$LINE
		rps=$(field rps "$line") p50=$(field p50_us "$line") p99=$(field p99_us "$line")
		W_RPS[$c]+="$rps " W_P50[$c]+="$p50 " W_P99[$c]+="$p99 " W_BAD[$c]+="$(($(field non2xx "$line") + $(field errors "$line"))) "
		say "round $r $c: $rps req/s, p50 $p50 µs, p99 $p99 µs"
	done
done
unserve

# 5. Report.
settings=()
for v in SCALE_CVES SCALE_SMOKE SCALE_DATA SCALE_EPSS SCALE_BUILDS SCALE_LOADS SCALE_SETTLE SCALE_CPU SCALE_BUILD_CPUS SCALE_CLIENT_CPU SCALE_DURATION SCALE_WARMUP SCALE_ROUNDS SCALE_CONNS SCALE_POOL; do
	settings+=("$v=${!v}")
done
med() { echo "$1" | median; }
# row NAME UNIT FORMAT NVD_VALUES RECORDS_VALUES: medians, ratio, within 15 %?
row() {
	local n r q
	n=$(med "$4") r=$(med "$5")
	q=$(ratio "$r" "$n")
	printf "| %s | $3 %s | $3 %s | %.3f | %s |\n" "$1" "$n" "$2" "$r" "$2" "$q" \
		"$([[ $(echo "$q <= 1.15" | bc) == 1 ]] && echo within || echo OVER)"
}
sum() { tr ' ' '+' <<<"$1" | sed 's/+$//' | bc; }
{
	echo "# make bench-scale, $(date -u +'%Y-%m-%d %H:%M UTC')"
	echo
	echo "Machine: $(nproc) CPUs ($(sed -n 's/^model name[^:]*: //p' /proc/cpuinfo | head -1)), $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo), Linux $(uname -r); load average at the start $LOADAVG_START, at the end $(cut -d' ' -f1-3 /proc/loadavg)."
	echo "Software: vulnd $(bin_commit "$BIN"), $(go version | cut -d' ' -f3), $(wrk -v 2>&1 | head -1 | cut -d' ' -f1-2)."
	echo "Data: $(cves_of records) CVEs, $([[ -n $SCALE_DATA ]] && echo "bench/synth -cve5's output in $SCALE_DATA" || echo "\`bench/synth -cves $SCALE_CVES -seed 1 -cve5\`"): feeds $feeds_mb MB, cves.zip $zip_mb MB. nvd = the feeds alone ($(counts_of nvd)); records = the feeds and cves.zip ($(counts_of records)); $EPSS_DESC."
	echo "Builds: $SCALE_BUILDS of each, alternated, pinned to CPUs $SCALE_BUILD_CPUS (SCALE_BUILD_CPUS: $(cpu_count "$SCALE_BUILD_CPUS") of the machine's $(nproc), so GOMAXPROCS $(cpu_count "$SCALE_BUILD_CPUS")); wall time, CPU time (user + sys) and peak RSS (maximum resident set) from /usr/bin/time. Loads: $SCALE_LOADS of each, alternated, \`vulnd serve\` pinned to CPU $SCALE_CPU; load time from its \"snapshot loaded\" line (duration=), RSS (VmRSS) ${SCALE_SETTLE}s after its \"warm-up done\" line. Medians."
	echo "Command: \`${settings[*]} make bench-scale\` (took $((($(date +%s) - START) / 60))m$((($(date +%s) - START) % 60))s)."
	echo
	echo "| measure | nvd | records | records/nvd | budget 1.15 |"
	echo "|---|---:|---:|---:|---|"
	row "build wall time (CPUs $SCALE_BUILD_CPUS)" s %.2f "${B_WALL[nvd]}" "${B_WALL[records]}"
	row "build peak RSS" MB %.0f "${B_RSS[nvd]}" "${B_RSS[records]}"
	row "load time" s %.3f "${L_SEC[nvd]}" "${L_SEC[records]}"
	row "RSS after load" MB %.0f "${L_RSS[nvd]}" "${L_RSS[records]}"
	echo
	printf 'Build CPU time (user + sys): %.2f s / %.2f s (nvd / records), %.3f; CPU time over wall time (the cores a build kept busy, of %s): %.2f / %.2f; the records build'"'"'s stages "read CVE JSON 5 records" (beside the feeds and after): %.2f s.\n' \
		"$(med "${B_CPU[nvd]}")" "$(med "${B_CPU[records]}")" "$(ratio "$(med "${B_CPU[records]}")" "$(med "${B_CPU[nvd]}")")" "$(cpu_count "$SCALE_BUILD_CPUS")" \
		"$(ratio "$(med "${B_CPU[nvd]}")" "$(med "${B_WALL[nvd]}")")" "$(ratio "$(med "${B_CPU[records]}")" "$(med "${B_WALL[records]}")")" "$(med "${B_READ[records]}")"
	echo
	echo "Also: ready (exec to /readyz 200) $(med "${L_READY[nvd]}") s / $(med "${L_READY[records]}") s, peak RSS of the load (VmHWM) $(med "${L_HWM[nvd]}") MB / $(med "${L_HWM[records]}") MB (nvd / records). Each run: builds ${B_WALL[nvd]}/ ${B_WALL[records]}s (CPU ${B_CPU[nvd]}/ ${B_CPU[records]}s); build RSS ${B_RSS[nvd]}/ ${B_RSS[records]}MB; loads $(printf '%.3f ' ${L_SEC[nvd]})/ $(printf '%.3f ' ${L_SEC[records]})s; RSS ${L_RSS[nvd]}/ ${L_RSS[records]}MB (nvd / records)."
	echo
	echo "?version= in the records snapshot (bench/scalepick's picks; wrk pinned to CPU $SCALE_CLIENT_CPU, 1 thread, $SCALE_CONNS connections, the one path, ${SCALE_WARMUP}s warm-up then ${SCALE_DURATION}s, $SCALE_ROUNDS alternating rounds; medians):"
	echo
	echo "| product | from | CVEs (from entries) | version | matches (from entries) | req/s | p50 ms | p99 ms | non-2xx + errors |"
	echo "|---|---|---:|---|---:|---:|---:|---:|---:|"
	for c in cna nvd; do
		p=PICK_${c^^}
		printf '| %s/%s | %s | %s (%s) | %s | %s (%s) | %.0f | %.2f | %.2f | %s |\n' "$(field vendor "${!p}")" "$(field product "${!p}")" \
			"$([[ $c == cna ]] && echo "CNA data" || echo "NVD data")" "$(field cves "${!p}")" "$(field from_entries "${!p}")" \
			"$(field version "${!p}")" "$(field matches "${!p}")" "$(field matches_from_entries "${!p}")" \
			"$(med "${W_RPS[$c]}")" "$(echo "scale=3; $(med "${W_P50[$c]}") / 1000" | bc)" "$(echo "scale=3; $(med "${W_P99[$c]}") / 1000" | bc)" "$(sum "${W_BAD[$c]}")"
	done
	q=$(ratio "$(med "${W_RPS[cna]}")" "$(med "${W_RPS[nvd]}")")
	echo
	printf 'CNA data / NVD data req/s: %.3f (budget: at least 0.90: %s); per round: %s/ %s req/s.\n' "$q" \
		"$([[ $(echo "$q >= 0.90" | bc) == 1 ]] && echo within || echo OVER)" "${W_RPS[cna]}" "${W_RPS[nvd]}"
} | tee "$SCALE_REPORT"
say "report: $SCALE_REPORT"
