# shellcheck shell=bash
# bench/lib.sh: what bench/soak.sh and bench/lbtest.sh share. Sourced, not
# run: it expects say and die defined, and WORK and BIN set before the
# functions are called.

alive() { [[ -n ${1:-} ]] && kill -0 "$1" 2>/dev/null; }

# need_tools TOOL...: installs with apt the Debian packages of the same
# names that are not on PATH (nginx may be in /usr/sbin), then fails if
# one is still missing; sets NGINX to nginx's path.
need_tools() {
	local t need=() sudo=
	for t in "$@"; do
		command -v "$t" >/dev/null || { [[ $t == nginx && -x /usr/sbin/nginx ]]; } || need+=("$t")
	done
	if ((${#need[@]})); then
		say "installing ${need[*]} with apt"
		[[ $(id -u) == 0 ]] || sudo=sudo
		$sudo apt-get update -qq && $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
	fi
	NGINX=$(command -v nginx || echo /usr/sbin/nginx)
	for t in "$@"; do
		[[ $t == nginx ]] && t=$NGINX
		command -v "$t" >/dev/null || die "could not install $t"
	done
}

# freeport: a free 127.0.0.1 port not handed out before in this run
# ($CHECK is bench/soakcheck).
declare -A TAKEN=()
freeport() {
	local p i
	for ((i = 0; i < 50; i++)); do
		p=$("$CHECK" freeport)
		if [[ -z ${TAKEN[$p]:-} ]]; then
			TAKEN[$p]=1
			echo "$p"
			return
		fi
	done
	die "no free port"
}

# code_of URL: the HTTP status of a GET, or nothing.
code_of() { curl -s -o /dev/null -w '%{http_code}' --max-time 2 "$1" 2>/dev/null || true; }

# stop PID [SIGNAL]: signal it, wait up to STOP_SECONDS (10), then SIGKILL.
stop() {
	local pid=$1 sig=${2:-TERM} i
	alive "$pid" || return 0
	kill "-$sig" "$pid" 2>/dev/null || true
	for ((i = 0; i < ${STOP_SECONDS:-10} * 10; i++)); do
		alive "$pid" || break
		sleep 0.1
	done
	if alive "$pid"; then kill -KILL "$pid" 2>/dev/null || true; fi
	wait "$pid" 2>/dev/null || true
}

kv() { sed -n "s/^$1=//p" "$2" | head -n1; }                                  # kv KEY FILE
wrkv() { grep '^SOAKWRK ' "$2" | tr ' ' '\n' | sed -n "s/^$1=//p" | head -n1; } # wrkv KEY FILE

# ab_snapshots CVES SEED CHANGE_RATE: synthetic feeds and three snapshots
# in $WORK, built with $BIN ($WORK/bin/synth must exist):
#
#   s0 = day feeds,                    built 2026-11-22 (no reports)
#   A  = next-day feeds, -previous s0, built 2026-11-23 (1 report)
#   B  = day feeds again, -previous A, built 2026-11-24 (2 reports)
#
# So A and B differ in CHANGE_RATE of the CVEs, in every list those touch,
# and in their reports, and every endpoint answers 200 on both.
ab_snapshots() {
	local cves=$1 seed=$2 rate=$3
	"$WORK/bin/synth" -o "$WORK/feeds/day" -cves "$cves" -seed "$seed" >/dev/null
	"$WORK/bin/synth" -o "$WORK/feeds/next" -cves "$cves" -seed "$seed" -next -change-rate "$rate" >/dev/null
	ab_build s0 2026-11-22T06:00:00Z "$WORK/feeds/day"
	ab_build A 2026-11-23T06:00:00Z "$WORK/feeds/next" s0
	ab_build B 2026-11-24T06:00:00Z "$WORK/feeds/day" A
}

ab_build() { # ab_build OUT TIME FEEDDIR [PREVIOUS]
	local out=$1 at=$2 feeds=$3 prev=${4:-}
	"$BIN" build -cwe "$feeds/cwec_synth.xml" -o "$WORK/$out" ${prev:+-previous "$WORK/$prev"} -time "$at" "$feeds"/nvdcve-2.0-*.json.gz \
		>"$WORK/build-$out.log" 2>&1 || die "vulnd build $out failed: $(cat "$WORK/build-$out.log")"
}
