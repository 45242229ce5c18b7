# sandbox serve in a container: a static binary, run as a non-root user.
# The code-mode workers are subprocesses of the same binary, so nothing else
# is needed for HTTP upstream servers. Stdio upstream servers run inside the
# container: base the final stage on an image that has their runtime (for
# npx servers, node:22-bookworm-slim) with --build-arg BASE=...
#
#   docker build -t sandbox .
#   docker run -p 8808:8808 -v $PWD/mcp.json:/etc/sandbox/mcp.json:ro sandbox
#
# Memory: each worker holds at most codeMode.limits.memoryMB (256 MiB by
# default) and there are codeMode.workers of them (default: the CPUs), beside
# serve itself (docs/deploy.md). Give the container a memory limit of at
# least workers x memoryMB + 256 MiB, or the kernel's OOM killer, not the
# sandbox's own limit, ends a snippet that grows.

ARG BASE=gcr.io/distroless/static-debian12:nonroot

FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o /out/sandbox ./cmd/sandbox

FROM ${BASE}
COPY --from=build /out/sandbox /usr/local/bin/sandbox
# nonroot (65532) in distroless; pass --user for other bases.
USER 65532:65532
EXPOSE 8808
HEALTHCHECK NONE
ENTRYPOINT ["/usr/local/bin/sandbox"]
CMD ["serve", "--config", "/etc/sandbox/mcp.json", "--http", "0.0.0.0:8808", "--log-format", "json"]
