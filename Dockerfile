# sandbox serve in a container: a static binary, run as a non-root user
# (65532). The code-mode workers are subprocesses of the same binary, so
# nothing else is needed for HTTP upstream servers. Quick start (README.md,
# docs/deploy.md "Container and chart"):
#
#   docker build --build-arg VERSION=$(git describe --tags --always --dirty) -t sandbox .
#   export SANDBOX_AGENT_KEY=$(openssl rand -hex 32)
#   docker run -d --name sandbox -p 8808:8808 -e SANDBOX_AGENT_KEY sandbox
#
# It serves deploy/docker/mcp.json (no upstream servers yet; one API key,
# from SANDBOX_AGENT_KEY): mount your own config over /etc/sandbox/mcp.json.
# Stdio upstream servers run inside the container: for npx/node servers
# build the Node variant, --build-arg VARIANT=node (node:22-bookworm-slim).
#
# Memory: each worker holds at most codeMode.limits.memoryMB (256 MiB by
# default) and there are codeMode.workers of them (default: the CPUs), beside
# serve itself (docs/deploy.md). Give the container a memory limit of at
# least workers x memoryMB + 256 MiB, or the kernel's OOM killer, not the
# sandbox's own limit, ends a snippet that grows.

# VARIANT picks the final image's base: static (distroless, no shell) or
# node (for stdio servers started with npx or node).
ARG VARIANT=static

FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
# .git is not sent to the build (.dockerignore), so the toolchain records no
# version: it is stamped in from the VERSION build argument instead.
ARG VERSION=devel
RUN CGO_ENABLED=0 go build -trimpath -ldflags "-s -w -X main.buildVersion=${VERSION}" -o /out/sandbox ./cmd/sandbox

FROM gcr.io/distroless/static-debian12:nonroot AS base-static
FROM node:22-bookworm-slim AS base-node
# uid 65532 has no home in the node image (distroless's is /home/nonroot);
# npx keeps its cache under HOME, and /tmp is writable (the chart's emptyDir).
ENV HOME=/tmp

FROM base-${VARIANT}
COPY --from=build /out/sandbox /usr/local/bin/sandbox
COPY deploy/docker/mcp.json /etc/sandbox/mcp.json
USER 65532:65532
EXPOSE 8808
# A distroless image has no curl: the binary asks its own /healthz. Change
# --http here too if you change serve's port.
HEALTHCHECK --interval=15s --timeout=5s --start-period=30s --retries=3 \
  CMD ["/usr/local/bin/sandbox", "healthcheck", "--http", "0.0.0.0:8808"]
ENTRYPOINT ["/usr/local/bin/sandbox"]
CMD ["serve", "--config", "/etc/sandbox/mcp.json", "--http", "0.0.0.0:8808", "--log-format", "json"]
