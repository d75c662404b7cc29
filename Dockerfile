# Multi-stage build of a static, trimmed binary on an empty base image, for
# those who have a container engine:
#   docker build --build-arg VERSION=v0.1.0 -t deployobject-controller .
# `make image` builds the same image without one, for linux/amd64 and
# linux/arm64 in one index, with OCI annotations and an SBOM per platform
# (hack/image: an OCI image layout in bin/image), and `make test-image`
# checks each of its images against the final stage of this file: the binary
# at the ENTRYPOINT's path, the USER.
FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=dev
RUN CGO_ENABLED=0 go build -trimpath -ldflags "-s -w -X main.version=${VERSION}" -o /out/deployobject-controller .

# The controller needs no shell, libc or CA bundle: in a cluster it trusts the
# ServiceAccount's CA. 65532 is the conventional "nonroot" user; numeric, so
# no /etc/passwd is needed.
FROM scratch
COPY --from=build /out/deployobject-controller /deployobject-controller
USER 65532:65532
ENTRYPOINT ["/deployobject-controller"]
