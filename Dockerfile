# vulnd in a container: docs/OPERATIONS.md ("Docker") says how to run it.
#
#   docker build -t vulnd --build-arg VCS_REF="$(git rev-parse HEAD)" .
#   docker run --rm -p 127.0.0.1:8080:8080 -p 127.0.0.1:9090:9090 vulnd
#
# The image serves the bundled demo snapshot. To serve a real one, mount
# the directory that holds it and point -snapshot at it (extra arguments
# are appended to the ENTRYPOINT's flags, and the last value of a flag
# wins):
#
#   docker run -v /srv/vulnd:/data:ro ... vulnd -snapshot /data/current
#
# There is no HEALTHCHECK: the final image has no shell and no curl.
# Probe GET /readyz (and /healthz) on the admin port, 9090, from the
# orchestrator instead.

# ---- build ----------------------------------------------------------------
# The Go go.mod asks for, to the patch version (.ci/run checks they agree).
FROM golang:1.26.8 AS build
WORKDIR /src
# Modules first, so that a source change does not download them again.
COPY go.mod go.sum ./
RUN go mod download
COPY . .
# A static binary (no cgo, so it runs on distroless/static). The context
# has no .git (.dockerignore), so the VCS stamp is off; VCS_REF below
# labels the image with the revision instead.
RUN CGO_ENABLED=0 go build -trimpath -buildvcs=false -ldflags='-s -w' -o /out/vulnd ./cmd/vulnd \
	&& /out/vulnd validate snapshots/demo

# ---- run ------------------------------------------------------------------
# distroless/static: CA certificates, tzdata and /etc/passwd with the
# nonroot user (65532), nothing else.
FROM gcr.io/distroless/static-debian12:nonroot
ARG VCS_REF=unknown
LABEL org.opencontainers.image.title="vulnd" \
	org.opencontainers.image.description="read-only HTTP/JSON vulnerability lookup (CVE, CWE, vendors, products, change reports)" \
	org.opencontainers.image.source="https://github.com/vulnd/vulnd" \
	org.opencontainers.image.revision="$VCS_REF"
COPY --from=build /out/vulnd /usr/local/bin/vulnd
# Owned by root, readable by all: the server never writes to it.
COPY --from=build /src/snapshots/demo /srv/vulnd/snapshot
USER 65532:65532
# 8080: the API. 9090: the admin listener (/healthz, /readyz, /metrics).
EXPOSE 8080 9090
# vulnd handles SIGTERM (drain, exit 0) and SIGHUP (reload) itself, also
# as PID 1. Give `docker stop` more than -drain-wait + -drain-timeout
# (5 s + 30 s by default): docker stop -t 40, or stop_grace_period: 40s.
STOPSIGNAL SIGTERM
ENTRYPOINT ["/usr/local/bin/vulnd", "serve", "-snapshot", "/srv/vulnd/snapshot", "-addr", ":8080", "-admin-addr", ":9090"]
