#!/usr/bin/env bash
# Fleet test ("make fleet-test"): the whole data pipeline on 127.0.0.1.
#
#   nginx serves a feed site (synthetic feeds laid out as nvd.nist.gov's,
#   with .meta files, and a CWE catalog zip: bench/feedsite) and balances
#   FT_REPLICAS vulnd replicas; the CNCF distribution registry (Debian's
#   docker-registry) holds the snapshots. The operator's cycle
#   (vulnd fetch -> build -previous -> publish, which checks the snapshot's
#   sums and sends only the chunks the registry lacks) runs once,
#   the replicas start empty with serve -pull and fill themselves, then
#   wrk sends traffic through nginx while:
#     1. the site changes and the cycle runs again, twice: two hours
#        later (the modified and recent feeds change) and on a new day
#        (every feed): every replica must serve the new snapshot within
#        one poll interval plus its load; the time from the site changing
#        to the last replica serving it is the freshness figure, by stage,
#        with the bytes publish sent and each replica fetched (the chunks
#        it did not hold) and copied from its own disk;
#     2. a corrupt artifact is tagged latest: every replica must count it
#        (vulnd_pull_total{outcome="invalid"}) and keep serving;
#     3. the registry stops: every replica must count it
#        (outcome="unreachable") and keep serving.
#   It exits 1 if any request through nginx failed or a check did not hold.
#
# Settings (environment, defaults in brackets):
#   FT_CVES [20000]      CVEs in the synthetic feeds (400000 for the figure
#                        at full NVD scale: about 4 minutes more)
#   FT_SEED [1]          synth seed
#   FT_CHANGE_RATE [0.02] share of CVEs the next day changes
#   FT_CVE5 [0]          1: synth writes every CVE's JSON 5 record too, and
#                        the site serves them as a cvelistV5 release that
#                        fetch mirrors and build reads (a new baseline each
#                        day; two hours later an hourly delta of the next
#                        day's changed records)
#   FT_REPLICAS [3]      replicas behind nginx
#   FT_EVERY [5s]        the replicas' -pull-every
#   FT_TIMEOUT [900]     seconds the whole run may take
#   FT_KEEP [0]          1 keeps the work directory
#   BIN [bin/vulnd]      the vulnd binary (built when missing)
set -euo pipefail
cd "$(dirname "$0")/.."

FT_CVES=${FT_CVES:-20000}
FT_SEED=${FT_SEED:-1}
FT_CHANGE_RATE=${FT_CHANGE_RATE:-0.02}
FT_CVE5=${FT_CVE5:-0}
FT_REPLICAS=${FT_REPLICAS:-3}
FT_EVERY=${FT_EVERY:-5s}
FT_TIMEOUT=${FT_TIMEOUT:-900}
FT_KEEP=${FT_KEEP:-0}
BIN=${BIN:-bin/vulnd}

say() { printf 'fleettest: %s\n' "$*" >&2; }
die() { say "FAIL: $*"; exit 1; }
source bench/lib.sh
STOP_SECONDS=15

[[ $FT_REPLICAS =~ ^[1-9][0-9]*$ ]] || die "FT_REPLICAS must be a whole number from 1"
[[ $FT_EVERY =~ ^[0-9]+s$ ]] || die "FT_EVERY must be whole seconds, such as 5s"
[[ $FT_CVE5 =~ ^[01]$ ]] || die "FT_CVE5 must be 0 or 1"
SYNTH_CVE5=()
((FT_CVE5)) && SYNTH_CVE5=(-cve5)
EVERY_S=${FT_EVERY%s}

WORK='' NGINX_PID='' REG_PID='' WRK_PID=''
declare -A PID=()
cleanup() {
	local rc=$?
	trap - EXIT INT TERM
	stop "$WRK_PID" INT
	for i in "${!PID[@]}"; do stop "${PID[$i]}" TERM; done
	stop "$NGINX_PID" QUIT
	stop "$REG_PID" TERM
	if [[ -n $WORK && -d $WORK ]]; then
		if [[ $FT_KEEP == 1 ]]; then say "kept $WORK"; else rm -rf "$WORK"; fi
	fi
	exit "$rc"
}
trap cleanup EXIT
trap 'say interrupted; exit 130' INT
trap 'say terminated; exit 143' TERM
deadline() { ((SECONDS < FT_TIMEOUT)) || die "the run took over FT_TIMEOUT (${FT_TIMEOUT}s)"; }
now_ms() { echo $(($(date +%s%N) / 1000000)); }

# ---- tools ----------------------------------------------------------------

need_tools wrk nginx curl docker-registry
[[ -x $BIN ]] || go build -o "$BIN" ./cmd/vulnd
BIN=$(realpath "$BIN")

WORK=$(mktemp -d /tmp/vulnd-fleettest.XXXXXX)
chmod 755 "$WORK"
mkdir -p "$WORK/bin" "$WORK/site" "$WORK/op/feeds" "$WORK/nginx-tmp"
for t in soakcheck synth feedsite; do go build -C bench -o "$WORK/bin/$t" "./$t"; done
CHECK=$WORK/bin/soakcheck
# snapshot_of PORT: the snapshot id the replica's /status gives, or "".
snapshot_of() { curl -s --max-time 2 "http://127.0.0.1:$1/status" 2>/dev/null | sed -n 's/^{"snapshot_id":"\([^"]*\)".*/\1/p'; }
# pulls_of ADMIN OUTCOME: the replica's vulnd_pull_total{outcome}.
pulls_of() { curl -s --max-time 2 "http://127.0.0.1:$1/metrics" | awk -v o="vulnd_pull_total{outcome=\"$2\"}" '$1 == o { print $2 }'; }

# ---- the feeds, the site, the registry ---------------------------------------

say "generating $FT_CVES CVEs (seed $FT_SEED), a first and a next day, in $WORK"
"$WORK/bin/synth" -o "$WORK/synth/day" -cves "$FT_CVES" -seed "$FT_SEED" "${SYNTH_CVE5[@]}" >/dev/null
"$WORK/bin/synth" -o "$WORK/synth/next" -cves "$FT_CVES" -seed "$FT_SEED" -next -change-rate "$FT_CHANGE_RATE" "${SYNTH_CVE5[@]}" >/dev/null
"$WORK/bin/feedsite" -from "$WORK/synth/day" -to "$WORK/site" -time 2026-11-22T06:00:00Z >&2

REG_PORT=$(freeport) SITE_PORT=$(freeport) LB_PORT=$(freeport)
cat >"$WORK/registry.yml" <<EOF
version: 0.1
log:
  level: error
storage:
  filesystem:
    rootdirectory: $WORK/registry
http:
  addr: 127.0.0.1:$REG_PORT
EOF
docker-registry serve "$WORK/registry.yml" >"$WORK/registry.log" 2>&1 &
REG_PID=$!
REG=127.0.0.1:$REG_PORT
REPO=oci://$REG/vulnd/snapshots
for ((i = 0; i < 200; i++)); do [[ $(code_of "http://$REG/v2/") == 200 ]] && break; sleep 0.05; done
[[ $(code_of "http://$REG/v2/") == 200 ]] || die "the registry did not start: $(tail -n 3 "$WORK/registry.log")"

# ---- the operator's cycle -----------------------------------------------------

# cycle TAG: fetch, build (-previous when there is a snapshot), publish
# TAG and latest (publish checks the snapshot's sums first, and sends the
# chunks the registry does not hold); sets T_FETCH T_BUILD T_PUBLISH (ms),
# NEW_ID and SENT (what publish says it sent).
cycle() {
	local tag=$1 t prev=()
	t=$(now_ms)
	# -max-age 1s: check the yearly feeds every run too, so a test cycle
	# does not wait eight days; only changed ones are downloaded.
	# The EPSS file and the cvelistV5 release from the site when
	# bench/feedsite laid them out (bench/synth wrote them), else off:
	# never the real hosts.
	local sources=(-epss-url - -cve5-url -)
	[[ -f $WORK/site/epss_scores-current.csv.gz ]] && sources[1]="http://127.0.0.1:$SITE_PORT/epss_scores-current.csv.gz"
	[[ -f $WORK/site/cve5/releases/latest ]] && sources[3]="http://127.0.0.1:$SITE_PORT/cve5/"
	"$BIN" fetch -dir "$WORK/op/feeds" -base-url "http://127.0.0.1:$SITE_PORT/" \
		-cwe-url "http://127.0.0.1:$SITE_PORT/cwec_latest.xml.zip" "${sources[@]}" -years 2002-2026 -max-age 1s \
		>>"$WORK/op.log" 2>&1 || die "vulnd fetch failed: $(tail -n 3 "$WORK/op.log")"
	T_FETCH=$(($(now_ms) - t)) t=$(now_ms)
	[[ -d $WORK/op/current ]] && prev=(-previous "$WORK/op/current")
	rm -rf "$WORK/op/next"
	# shellcheck disable=SC2046
	"$BIN" build -cwe "$WORK/op/feeds/cwec_latest.xml.zip" "${prev[@]}" -o "$WORK/op/next" \
		$("$BIN" feeds "$WORK/op/feeds" 2>/dev/null) >>"$WORK/op.log" 2>&1 || die "vulnd build failed: $(tail -n 3 "$WORK/op.log")"
	T_BUILD=$(($(now_ms) - t)) t=$(now_ms)
	rm -rf "$WORK/op/prev"
	[[ -d $WORK/op/current ]] && mv "$WORK/op/current" "$WORK/op/prev"
	mv "$WORK/op/next" "$WORK/op/current"
	"$BIN" publish -plain-http -to "$REPO:$tag" "$WORK/op/current" >"$WORK/publish-$tag.txt" 2>"$WORK/publish-$tag.log" ||
		die "vulnd publish failed: $(tail -n 3 "$WORK/publish-$tag.log")"
	T_PUBLISH=$(($(now_ms) - t))
	cat "$WORK/publish-$tag.log" >>"$WORK/op.log"
	SENT=$(sed -n 's/^vulnd publish: [^:]*: \(sent .*\), tagged .*/\1/p' "$WORK/publish-$tag.log")
	NEW_ID=$(awk '{ print $3 }' "$WORK/publish-$tag.txt")
}

# The site (nginx) must be up for the first fetch; the balancer part of
# the same nginx waits for replicas that do not exist yet.
declare -A API=() ADMIN=()
for ((i = 1; i <= FT_REPLICAS; i++)); do API[$i]=$(freeport) ADMIN[$i]=$(freeport); done
upstreams=$(for ((i = 1; i <= FT_REPLICAS; i++)); do echo "        server 127.0.0.1:${API[$i]} max_fails=1 fail_timeout=2s;"; done)
cat >"$WORK/nginx.conf" <<EOF
worker_processes 1;
daemon off;
pid $WORK/nginx.pid;
error_log $WORK/nginx-error.log warn;
events { worker_connections 1024; }
http {
    log_format lb '\$status|\$upstream_status|\$upstream_addr|\$request_uri';
    client_body_temp_path $WORK/nginx-tmp/body;
    proxy_temp_path $WORK/nginx-tmp/proxy;
    fastcgi_temp_path $WORK/nginx-tmp/fastcgi;
    uwsgi_temp_path $WORK/nginx-tmp/uwsgi;
    scgi_temp_path $WORK/nginx-tmp/scgi;
    server_tokens off;
    server {   # stands in for nvd.nist.gov and cwe.mitre.org
        listen 127.0.0.1:$SITE_PORT;
        root $WORK/site;
        access_log $WORK/site-access.log;
    }
    upstream vulnd {
$upstreams
        keepalive 32;
    }
    server {
        listen 127.0.0.1:$LB_PORT;
        access_log $WORK/lb-access.log lb buffer=64k flush=1s;
        location / {
            proxy_pass http://vulnd;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_connect_timeout 1s;
            proxy_next_upstream error timeout http_502 http_503 http_504;
            proxy_next_upstream_tries 2;
        }
    }
}
EOF
"$NGINX" -p "$WORK/" -e "$WORK/nginx-error.log" -c "$WORK/nginx.conf" 2>"$WORK/nginx.stderr" &
NGINX_PID=$!
for ((i = 0; i < 100; i++)); do [[ $(code_of "http://127.0.0.1:$SITE_PORT/nvdcve-2.0-modified.meta") == 200 ]] && break; sleep 0.05; done

say "cycle 1: fetch, build, publish"
cycle day1
ID1=$NEW_ID
say "  snapshot $ID1: fetch ${T_FETCH} ms, build ${T_BUILD} ms, publish (check sums and push) ${T_PUBLISH} ms: $SENT"
deadline

# ---- replicas that fill themselves from the registry ------------------------

for ((i = 1; i <= FT_REPLICAS; i++)); do
	mkdir -p "$WORK/r$i"
	"$BIN" serve -snapshot "$WORK/r$i/snapshot" -addr "127.0.0.1:${API[$i]}" -admin-addr "127.0.0.1:${ADMIN[$i]}" \
		-pull "$REPO:latest" -pull-every "$FT_EVERY" -plain-http -drain-wait 0s 2>>"$WORK/r$i.log" &
	PID[$i]=$!
done
for ((i = 1; i <= FT_REPLICAS; i++)); do
	for ((k = 0; k < 1200; k++)); do
		alive "${PID[$i]}" || die "replica $i exited: $(tail -n 3 "$WORK/r$i.log")"
		[[ $(code_of "http://127.0.0.1:${ADMIN[$i]}/readyz") == 200 ]] && break
		sleep 0.05
	done
	# /status may take more than snapshot_of's 2 s at first on a busy
	# machine: asked again for up to 10 s.
	for ((k = 0; k < 20; k++)); do
		[[ $(snapshot_of "${API[$i]}") == "$ID1" ]] && break
		sleep 0.5
	done
	[[ $(snapshot_of "${API[$i]}") == "$ID1" ]] || die "replica $i serves '$(snapshot_of "${API[$i]}")', not $ID1"
done
say "$FT_REPLICAS replicas filled themselves from $REPO:latest and serve $ID1"

# ---- traffic ------------------------------------------------------------------

# The modified feed is small and its CVEs are in both days' snapshots.
# (head ends the pipe early: not a failure)
{ zcat "$WORK"/site/nvdcve-2.0-modified.json.gz | grep -o '"id":"CVE-[0-9]*-[0-9]*"' | head -n 300 | sed 's/"id":"\(.*\)"/\/cve\/\1/' >"$WORK/paths.txt"; } || true
[[ -s $WORK/paths.txt ]] || die "no CVE ids for the traffic"
printf '%s\n' /cwe /vendors '/cve?page=2' /reports /status >>"$WORK/paths.txt"
wrk -t1 -c16 -d600s --timeout 5s -s bench/soak.lua "http://127.0.0.1:$LB_PORT" -- "$WORK/paths.txt" >"$WORK/wrk.txt" 2>&1 &
WRK_PID=$!
sleep 2

# ---- 1. refreshes: fetch -> build -> publish -> pull -> load -----------------

# refresh WHAT TAG CHANGE: CHANGE (a command) changes the site and the
# cycle runs again; every replica must serve the new snapshot within one
# poll interval plus its load. Sets ID2 and adds WHAT's figures to
# REPORT: the time from the site changing to the last replica serving
# the snapshot, by stage, and the bytes publish sent and each replica
# fetched (the chunks it did not hold) and copied from its own disk.
FAILS=() REPORT=()
refresh() {
	local what=$1 tag=$2 change=$3 t i
	say "$what"
	t=$(now_ms)
	$change
	local t_site=$(($(now_ms) - t))
	# The clock starts once the new feeds are on the site, as NVD's
	# appear: writing them is this test's work, not the pipeline's.
	local t0
	t0=$(now_ms)
	local before=$ID2
	# Each replica's pulls so far: its report of this one comes after.
	local -A pulled=()
	for ((i = 1; i <= FT_REPLICAS; i++)); do pulled[$i]=$(grep -c 'pulled a new snapshot' "$WORK/r$i.log" || true); done
	cycle "$tag"
	ID2=$NEW_ID
	[[ $ID2 != "$before" ]] || die "$what: the cycle made the same snapshot $before"
	local t_pub_end
	t_pub_end=$(now_ms)
	local -A seen=()
	local limit_ms=$((EVERY_S * 1000 + 60000))
	while ((${#seen[@]} < FT_REPLICAS)); do
		for ((i = 1; i <= FT_REPLICAS; i++)); do
			[[ -n ${seen[$i]:-} ]] && continue
			[[ $(snapshot_of "${API[$i]}") == "$ID2" ]] && seen[$i]=$(($(now_ms) - t_pub_end))
		done
		(($(now_ms) - t_pub_end < limit_ms)) || die "$what: not every replica serves $ID2 within $((limit_ms / 1000)) s of the publish (${!seen[*]} do)"
		sleep 0.05
	done
	local t_all=$(($(now_ms) - t0)) pulls loads moved downloads
	pulls=$(for ((i = 1; i <= FT_REPLICAS; i++)); do echo "${seen[$i]}"; done | sort -n | paste -sd' ')
	loads=$(for ((i = 1; i <= FT_REPLICAS; i++)); do grep 'snapshot pulled and loaded' "$WORK/r$i.log" | tail -n 1 | sed -n 's/.*duration=\([0-9.a-z]*\).*/\1/p'; done | paste -sd' ')
	# What each replica's pull fetched from the registry and copied
	# from its own disk, in bytes, from the line it logs once it serves
	# the snapshot (wait for it: /status may answer first).
	for ((i = 1; i <= FT_REPLICAS; i++)); do
		for ((k = 0; k < 100; k++)); do
			(($(grep -c 'pulled a new snapshot' "$WORK/r$i.log" || true) > pulled[$i])) && break
			sleep 0.05
		done
	done
	moved=$(for ((i = 1; i <= FT_REPLICAS; i++)); do grep 'pulled a new snapshot' "$WORK/r$i.log" | tail -n 1 |
		sed -n 's/.*fetched_blobs=\([0-9]*\) fetched_bytes=\([0-9]*\) reused_blobs=\([0-9]*\) reused_bytes=\([0-9]*\).*/fetched \1 blobs (\2 B), reused \3 (\4 B)/p'; done | paste -sd';' | sed 's/;/; /g')
	downloads=$(for ((i = 1; i <= FT_REPLICAS; i++)); do grep 'pulled a new snapshot' "$WORK/r$i.log" | tail -n 1 | sed -n 's/.* download=\([0-9.a-z]*\).*/\1/p'; done | paste -sd' ')
	say "  snapshot $ID2 on every replica $t_all ms after the site changed"
	for ((i = 1; i <= FT_REPLICAS; i++)); do
		((seen[$i] <= EVERY_S * 1000 + 30000)) || FAILS+=("$what: replica $i took ${seen[$i]} ms after the publish, over one interval (${FT_EVERY}) plus 30 s")
	done
	REPORT+=("$what"
		"  freshness: $t_all ms from the new feeds being on the site to every replica serving the snapshot made of them (writing the site took $t_site ms more)"
		"  fetch $T_FETCH ms; build $T_BUILD ms; publish (check sums and push) $T_PUBLISH ms; publish to each replica serving: $pulls (ms; each replica's download: $downloads; load: $loads)"
		"  bytes: publish $SENT; each replica: $moved")
	deadline
}

# The next day's site, laid out beside the served one before any clock
# starts.
"$WORK/bin/feedsite" -from "$WORK/synth/next" -to "$WORK/site-next" -time 2026-11-23T06:00:00Z >&2
# With the records: the CVE Program's release two hours later, the first
# day's baseline and an hourly delta of the records the next day changed.
((FT_CVE5)) && "$WORK/bin/feedsite" -from "$WORK/synth/next" -to "$WORK/site-2h" -time 2026-11-22T08:00:00Z -cve5-delta-from "$WORK/synth/day" >&2
# Two hours later: NVD's modified and recent feeds change (here: to the
# next day's), the yearly ones do not; with the records, the release gains
# the hour's delta. Each file is copied beside its place and renamed, as
# feedsite writes them; the release's description last.
two_hours() {
	local f
	for f in "$WORK"/site-next/nvdcve-2.0-{modified,recent}.* \
		$( ((FT_CVE5)) && echo "$WORK"/site-2h/cve5/releases/download/*_delta_CVEs_at_*.zip "$WORK/site-2h/cve5/releases/latest"); do
		local to=$WORK/site/${f#"$WORK"/site-*/}
		cp "$f" "${to%/*}/.${f##*/}.part" && mv "${to%/*}/.${f##*/}.part" "$to"
	done
}
# A new day: every yearly feed is written again too (the modified and
# recent ones are already the next day's, so they keep their files).
new_day() { "$WORK/bin/feedsite" -from "$WORK/synth/next" -to "$WORK/site" -time 2026-11-23T06:00:00Z >&2; }
ID2=$ID1
refresh "cycle 2: two hours later, the modified and recent feeds change" twohours two_hours
refresh "cycle 3: the site moves to the next day's feeds" day2 new_day

# expect_counted OUTCOME WHAT WHEN: every replica counts a poll ending
# OUTCOME within one interval plus 30 s, and still serves the second day's
# snapshot; each miss is a failure naming WHAT or WHEN.
expect_counted() {
	local outcome=$1 what=$2 when=$3 i k
	for ((i = 1; i <= FT_REPLICAS; i++)); do
		for ((k = 0; k < (EVERY_S + 30) * 20; k++)); do
			[[ $(pulls_of "${ADMIN[$i]}" "$outcome") =~ ^[1-9] ]] && break
			sleep 0.05
		done
		[[ $(pulls_of "${ADMIN[$i]}" "$outcome") =~ ^[1-9] ]] || FAILS+=("replica $i never counted $what as $outcome")
		[[ $(snapshot_of "${API[$i]}") == "$ID2" ]] || FAILS+=("replica $i serves '$(snapshot_of "${API[$i]}")' $when, not $ID2")
	done
}

# ---- 2. a corrupt artifact under latest ----------------------------------------

say "a corrupt artifact tagged latest"
"$WORK/bin/synth" -o "$WORK/synth/third" -cves "$FT_CVES" -seed "$((FT_SEED + 1))" >/dev/null
"$BIN" build -cwe "$WORK/synth/third/cwec_synth.xml" -o "$WORK/op/third" "$WORK"/synth/third/nvdcve-2.0-*.json.gz >>"$WORK/op.log" 2>&1 || die "building the third snapshot failed"
"$BIN" publish -plain-http -to "$REPO:bad" -also-tag '' "$WORK/op/third" >"$WORK/publish-bad.txt" 2>>"$WORK/op.log" || die "publishing the third snapshot failed"
# The blob of the first chunk of its CVE file (a blob per chunk).
cves_sum=$(awk '/"cves": \{/ { f = 1 } f && /"chunks"/ { c = 1 } c && /"sha256"/ { gsub(/[",]/, "", $2); print $2; exit }' "$WORK/op/third/manifest.json")
blob=$WORK/registry/docker/registry/v2/blobs/sha256/${cves_sum:0:2}/$cves_sum/data
[[ -f $blob ]] || die "no blob $blob in the registry's storage"
printf 'corrupt' | dd of="$blob" bs=1 seek=1000 conv=notrunc status=none
mt=application/vnd.oci.image.manifest.v1+json
curl -sf -H "Accept: $mt" "http://$REG/v2/vulnd/snapshots/manifests/bad" -o "$WORK/bad-manifest.json" || die "reading the bad manifest failed"
curl -sf -X PUT -H "Content-Type: $mt" --data-binary @"$WORK/bad-manifest.json" "http://$REG/v2/vulnd/snapshots/manifests/latest" >/dev/null ||
	die "tagging the bad artifact latest failed"
expect_counted invalid "the corrupt artifact" "after the corrupt artifact"

# ---- 3. the registry gone ------------------------------------------------------

say "the registry stops"
stop "$REG_PID" TERM
REG_PID=
expect_counted unreachable "the registry" "with the registry gone"
sleep 1

# ---- the report ----------------------------------------------------------------

stop "$WRK_PID" INT
WRK_PID=
stop "$NGINX_PID" QUIT
NGINX_PID=
W=$WORK/wrk.txt
grep -q '^SOAKWRK ' "$W" || die "wrk printed no counts: $(tail -n 5 "$W")"
req=$(wrkv requests "$W")
non2xx=$(wrkv non2xx "$W")
sock=$(($(wrkv connect "$W") + $(wrkv read "$W") + $(wrkv write "$W") + $(wrkv timeout "$W")))
s5xx=$(awk -F'|' '$1 >= 500' "$WORK/lb-access.log" | wc -l)
((req > 0)) || FAILS+=("wrk sent no request")
((non2xx == 0)) || FAILS+=("wrk: $non2xx non-2xx responses (first: $(sed -n 's/^SOAKWRK_FIRST_BAD //p' "$W"))")
((sock == 0)) || FAILS+=("wrk: $sock socket errors")
((s5xx == 0)) || FAILS+=("nginx: $s5xx answers 5xx")
counts=$(for ((i = 1; i <= FT_REPLICAS; i++)); do
	((i > 1)) && printf '; '
	printf 'replica %d: updated %s, unchanged %s, invalid %s, unreachable %s' "$i" \
		"$(pulls_of "${ADMIN[$i]}" updated)" "$(pulls_of "${ADMIN[$i]}" unchanged)" "$(pulls_of "${ADMIN[$i]}" invalid)" "$(pulls_of "${ADMIN[$i]}" unreachable)"
done)

echo
echo "fleet-test: $FT_CVES CVEs$( ((FT_CVE5)) && echo " with their CVE JSON 5 records"), $FT_REPLICAS replicas (-pull-every $FT_EVERY) behind nginx, distribution registry $(dpkg-query -W -f='${Version}' docker-registry 2>/dev/null || echo '?'), load average $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%s\n' "${REPORT[@]}"
echo "traffic: $req requests through nginx, non-2xx $non2xx, socket errors $sock, nginx 5xx $s5xx; p99 $(wrkv p99_ms "$W") ms"
echo "pulls: $counts"
if ((${#FAILS[@]} > 0)); then
	for f in "${FAILS[@]}"; do echo "FAIL: $f"; done
	echo "result: FAIL (${#FAILS[@]} problems)"
	exit 1
fi
echo "result: PASS"
