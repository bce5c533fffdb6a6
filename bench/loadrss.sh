#!/usr/bin/env bash
# bench/loadrss.sh: load time and memory of vulnd binaries side by side.
#
#   bash bench/loadrss.sh [-rounds N] [-cpu C] NAME=BINARY:SNAPSHOT...
#
# For each round, and in each round for each NAME in turn (so the
# candidates alternate under the same machine load), it starts
# `BINARY serve -snapshot SNAPSHOT` pinned to CPU C (default 0) on
# 127.0.0.1, times it from exec to the first 200 of /readyz, waits 3 s,
# reads VmRSS and VmHWM, then stops it. It prints one line per start and,
# at the end, the median of each NAME. Use it to compare two builds of
# the same feeds (format changes) or two binaries on one snapshot.
#
# With -load S (and -paths FILE, one path a line, e.g. bench-load's
# class files or a mix of CVEs and pages), it then runs wrk on those
# paths for S seconds (1 thread, 32 connections, pinned to -wrk-cpu,
# default 1) with GODEBUG=gctrace=1 and reports req/s, p99, the peak
# RSS during the run (VmHWM, reset after the load), the collections
# during the run and their mark CPU (gctrace's background, assist and
# idle mark times, summed): what the GC costs a replica under load.
# Only loopback is used; every process it starts is stopped on exit.
set -euo pipefail

rounds=3 cpu=0 load=0 paths= wrkcpu=1
while [[ $# -gt 0 && $1 == -* ]]; do
	case $1 in
	-rounds) rounds=$2; shift 2 ;;
	-cpu) cpu=$2; shift 2 ;;
	-load) load=$2; shift 2 ;;
	-paths) paths=$2; shift 2 ;;
	-wrk-cpu) wrkcpu=$2; shift 2 ;;
	*) echo "loadrss: unknown flag $1" >&2; exit 2 ;;
	esac
done
[[ $# -gt 0 ]] || { sed -n '2,22p' "$0" >&2; exit 2; }
if ((load > 0)); then
	[[ -s $paths ]] || { echo "loadrss: -load needs -paths FILE" >&2; exit 2; }
	command -v wrk >/dev/null || { echo "loadrss: -load needs wrk" >&2; exit 2; }
fi

pid=
cleanup() { [[ -n $pid ]] && kill -KILL "$pid" 2>/dev/null || true; }
trap cleanup EXIT

now_ms() { date +%s%3N; }
declare -A times rss hwm rps p99 lpeak gcs mark
for ((r = 1; r <= rounds; r++)); do
	for spec in "$@"; do
		name=${spec%%=*} rest=${spec#*=}
		bin=${rest%%:*} snap=${rest#*:}
		port=$((20000 + RANDOM % 20000)) admin=$((40000 + RANDOM % 20000))
		log=$(mktemp)
		t0=$(now_ms)
		GODEBUG=gctrace=1 taskset -c "$cpu" "$bin" serve -snapshot "$snap" -addr "127.0.0.1:$port" -admin-addr "127.0.0.1:$admin" -drain-wait 0s >"$log" 2>&1 &
		pid=$!
		ok=
		for ((i = 0; i < 6000; i++)); do
			if curl -fs -o /dev/null "http://127.0.0.1:$admin/readyz"; then ok=1; break; fi
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.02
		done
		t1=$(now_ms)
		[[ -n $ok ]] || { echo "loadrss: $name did not get ready: $(tail -3 "$log")" >&2; exit 1; }
		sleep 3
		r_kb=$(awk '/^VmRSS/{print $2}' "/proc/$pid/status")
		h_kb=$(awk '/^VmHWM/{print $2}' "/proc/$pid/status")
		extra=
		if ((load > 0)); then
			echo 5 >"/proc/$pid/clear_refs" # VmHWM from here on
			g0=$(grep -c '^gc ' "$log" || true)
			line=$(taskset -c "$wrkcpu" wrk -t1 -c32 -d"$load"s -s "$(dirname "$0")/load.lua" "http://127.0.0.1:$port" -- "$paths" | grep '^RESULT') ||
				{ echo "loadrss: wrk failed against $name" >&2; exit 1; }
			l_kb=$(awk '/^VmHWM/{print $2}' "/proc/$pid/status")
			# gctrace: "... ms clock, A+B/C/D+E ms cpu, ...": B, C and D are
			# the assist, background and idle mark CPU.
			read -r n m < <(awk -v skip="$g0" '/^gc / && ++k > skip {
				split($0, a, " ms clock, "); split(a[2], b, " ms cpu"); split(b[1], c, "+"); split(c[2], d, "/")
				n++; m += d[1] + d[2] + d[3]
			} END {printf "%d %.0f\n", n, m}' "$log")
			x_rps=$(sed -n 's/.* rps=\([0-9]*\).*/\1/p' <<<"$line") x_p99=$(sed -n 's/.* p99_us=\([0-9]*\).*/\1/p' <<<"$line")
			extra=$(printf '  under load: %6d req/s  p99 %6.2f ms  peak %6d MB  %d GCs, %d ms mark CPU' "$x_rps" "$(echo "scale=2; $x_p99 / 1000" | bc)" $((l_kb / 1024)) "$n" "$m")
			rps[$name]+="$x_rps " p99[$name]+="$x_p99 " lpeak[$name]+="$((l_kb / 1024)) " gcs[$name]+="$n " mark[$name]+="$m "
		fi
		kill -TERM "$pid"; wait "$pid" 2>/dev/null || true; pid=
		rm -f "$log"
		ms=$((t1 - t0))
		printf 'round %d %-10s ready %6d ms  RSS %6d MB  peak %6d MB%s\n' "$r" "$name" "$ms" $((r_kb / 1024)) $((h_kb / 1024)) "$extra"
		times[$name]+="$ms " rss[$name]+="$((r_kb / 1024)) " hwm[$name]+="$((h_kb / 1024)) "
	done
done
median() { tr ' ' '\n' | grep . | sort -n | awk '{a[NR]=$1} END{print (NR%2)?a[(NR+1)/2]:(a[NR/2]+a[NR/2+1])/2}'; }
echo "medians over $rounds rounds (serve pinned to CPU $cpu):"
for spec in "$@"; do
	name=${spec%%=*}
	extra=
	if ((load > 0)); then
		extra=$(printf '  under load: %6s req/s  p99 %6s ms  peak %6s MB  %s GCs, %s ms mark CPU' "$(echo "${rps[$name]}" | median)" \
			"$(echo "scale=2; $(echo "${p99[$name]}" | median) / 1000" | bc)" "$(echo "${lpeak[$name]}" | median)" \
			"$(echo "${gcs[$name]}" | median)" "$(echo "${mark[$name]}" | median)")
	fi
	printf '%-10s ready %6s ms  RSS %6s MB  peak %6s MB%s\n' "$name" \
		"$(echo "${times[$name]}" | median)" "$(echo "${rss[$name]}" | median)" "$(echo "${hwm[$name]}" | median)" "$extra"
done
