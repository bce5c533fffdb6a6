#!/usr/bin/env bash
# Metrics overhead ("make bench-metrics"): one vulnd binary and snapshot,
# served by two processes: one with the admin listener (so every request
# is counted and timed for /metrics) and one without (no metrics at all).
# wrk drives each in turn, OVH_ROUNDS alternating rounds of OVH_SECS
# seconds, with the servers pinned to CPU 0 and wrk to CPU 1, and the
# script prints each round's req/s and the medians. Loopback only; it
# stops everything it started.
#
# Settings (environment, defaults in brackets):
#   OVH_SNAPSHOT [snapshots/demo]  the snapshot both serve
#   OVH_ROUNDS [5]                 rounds per server
#   OVH_SECS [10]                  seconds of wrk per round
#   OVH_CONNS [32]                 wrk connections (one thread)
#   OVH_ACCEPT []                  Accept-Encoding wrk sends (none: identity)
#   BIN [bin/vulnd]
set -euo pipefail
cd "$(dirname "$0")/.."
OVH_SNAPSHOT=${OVH_SNAPSHOT:-snapshots/demo}
OVH_ROUNDS=${OVH_ROUNDS:-5}
OVH_SECS=${OVH_SECS:-10}
OVH_CONNS=${OVH_CONNS:-32}
OVH_ACCEPT=${OVH_ACCEPT:-}
BIN=${BIN:-bin/vulnd}
say() { printf 'overhead: %s\n' "$*" >&2; }

if ! command -v wrk >/dev/null || ! command -v curl >/dev/null; then
	say "installing wrk and curl"
	apt-get update -qq && apt-get install -y -qq wrk curl >/dev/null
fi
work=$(mktemp -d /tmp/vulnd-overhead.XXXXXX)
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	rm -rf "$work"
}
trap cleanup EXIT INT TERM

port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
on=$(port) admin=$(port) off=$(port)
taskset -c 0 "$BIN" serve -snapshot "$OVH_SNAPSHOT" -addr "127.0.0.1:$on" -admin-addr "127.0.0.1:$admin" 2>"$work/on.log" &
pids+=($!)
taskset -c 0 "$BIN" serve -snapshot "$OVH_SNAPSHOT" -addr "127.0.0.1:$off" 2>"$work/off.log" &
pids+=($!)
for p in $on $off; do
	for _ in $(seq 600); do curl -fs -o /dev/null "http://127.0.0.1:$p/cve" && break; sleep 0.1; done
done
curl -fs "http://127.0.0.1:$admin/metrics" | grep -q vulnd_http_requests_total || { say "no /metrics on the measured server"; exit 1; }
curl -fs -o /dev/null -w '' "http://127.0.0.1:$off/cve" || { say "the plain server does not answer"; exit 1; }

# The paths: the first pages of every paged list, the CVEs, vendors and
# products they name: the mix of bench/load.sh's classes, small.
python3 - "http://127.0.0.1:$on" >"$work/paths" <<'PY'
import json, sys, urllib.request
base = sys.argv[1]
get = lambda p: json.load(urllib.request.urlopen(base + p))
out = []
for page in range(1, 11):
    out.append("/cve?page=%d" % page)
    for c in get("/cve?page=%d" % page):
        out.append("/cve/" + c["name"])
for page in range(1, 4):
    out.append("/vendors?page=%d" % page)
    for v in get("/vendors?page=%d" % page):
        n = urllib.parse.quote(v["name"], safe="")
        out += ["/vendors/" + n, "/vendors/" + n + "/cve", "/vendors/" + n + "/products"]
for c in get("/cwe")[:20]:
    out += ["/cwe/" + c["name"], "/cwe/" + c["name"] + "/cve"]
for band in ("low", "medium", "high"):
    out.append("/cve?cvss=" + band)
print("\n".join(out))
PY
say "$(wc -l <"$work/paths") paths, ${OVH_ROUNDS}x${OVH_SECS}s per server, $OVH_CONNS connections, Accept-Encoding '${OVH_ACCEPT:-identity}'"
hdr=()
[ -n "$OVH_ACCEPT" ] && hdr=(-H "Accept-Encoding: $OVH_ACCEPT")
run() { # run PORT -> req/s
	taskset -c 1 wrk -t1 -c"$OVH_CONNS" -d"${OVH_SECS}s" "${hdr[@]}" -s bench/load.lua "http://127.0.0.1:$1" -- "$work/paths" |
		sed -n 's/^RESULT .* rps=\([0-9]*\) .* non2xx=\([0-9]*\) errors=\([0-9]*\).*/\1 \2 \3/p'
}
median() { sort -n | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
: >"$work/on.rps"
: >"$work/off.rps"
for r in $(seq "$OVH_ROUNDS"); do
	for which in on off; do
		p=$on
		[ $which = off ] && p=$off
		read -r rps non2xx errors < <(run "$p")
		[ "$non2xx" = 0 ] && [ "$errors" = 0 ] || { say "round $r $which: $non2xx non-2xx, $errors errors"; exit 1; }
		echo "$rps" >>"$work/$which.rps"
		say "round $r: metrics $which: $rps req/s"
	done
done
m_on=$(median <"$work/on.rps")
m_off=$(median <"$work/off.rps")
echo "RESULT metrics_on_rps=$m_on metrics_off_rps=$m_off ratio=$(awk -v a="$m_on" -v b="$m_off" 'BEGIN {printf "%.3f", a/b}')"
