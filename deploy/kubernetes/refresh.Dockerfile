# The image of the refresh CronJob (refresh.yaml): vulnd's binary in a
# distroless image that has a shell (busybox, under /busybox), CA
# certificates and the nonroot user, 65532. The vulnd image itself has no
# shell, and the refresh is a shell script.
#
#   docker build -t registry.example.com/vulnd/vulnd -f Dockerfile .
#   docker build -t registry.example.com/vulnd/vulnd-refresh \
#     --build-arg VULND_IMAGE=registry.example.com/vulnd/vulnd \
#     -f deploy/kubernetes/refresh.Dockerfile deploy/kubernetes
ARG VULND_IMAGE=registry.example.com/vulnd/vulnd:latest
FROM ${VULND_IMAGE} AS vulnd

FROM gcr.io/distroless/static-debian12:debug-nonroot
COPY --from=vulnd /usr/local/bin/vulnd /usr/local/bin/vulnd
USER 65532:65532
ENTRYPOINT ["/busybox/sh"]
