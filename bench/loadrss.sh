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
# Only loopback is used; every process it starts is stopped on exit.
set -euo pipefail

rounds=3 cpu=0
while [[ $# -gt 0 && $1 == -* ]]; do
	case $1 in
	-rounds) rounds=$2; shift 2 ;;
	-cpu) cpu=$2; shift 2 ;;
	*) echo "loadrss: unknown flag $1" >&2; exit 2 ;;
	esac
done
[[ $# -gt 0 ]] || { sed -n '2,13p' "$0" >&2; exit 2; }

pid=
cleanup() { [[ -n $pid ]] && kill -KILL "$pid" 2>/dev/null || true; }
trap cleanup EXIT

now_ms() { date +%s%3N; }
declare -A times rss hwm
for ((r = 1; r <= rounds; r++)); do
	for spec in "$@"; do
		name=${spec%%=*} rest=${spec#*=}
		bin=${rest%%:*} snap=${rest#*:}
		port=$((20000 + RANDOM % 20000)) admin=$((40000 + RANDOM % 20000))
		log=$(mktemp)
		t0=$(now_ms)
		taskset -c "$cpu" "$bin" serve -snapshot "$snap" -addr "127.0.0.1:$port" -admin-addr "127.0.0.1:$admin" -drain-wait 0s >"$log" 2>&1 &
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
		kill -TERM "$pid"; wait "$pid" 2>/dev/null || true; pid=
		rm -f "$log"
		ms=$((t1 - t0))
		printf 'round %d %-10s ready %6d ms  RSS %6d MB  peak %6d MB\n' "$r" "$name" "$ms" $((r_kb / 1024)) $((h_kb / 1024))
		times[$name]+="$ms " rss[$name]+="$((r_kb / 1024)) " hwm[$name]+="$((h_kb / 1024)) "
	done
done
median() { tr ' ' '\n' | grep . | sort -n | awk '{a[NR]=$1} END{print (NR%2)?a[(NR+1)/2]:(a[NR/2]+a[NR/2+1])/2}'; }
echo "medians over $rounds rounds (serve pinned to CPU $cpu):"
for spec in "$@"; do
	name=${spec%%=*}
	printf '%-10s ready %6s ms  RSS %6s MB  peak %6s MB\n' "$name" \
		"$(echo "${times[$name]}" | median)" "$(echo "${rss[$name]}" | median)" "$(echo "${hwm[$name]}" | median)"
done
