# Multi-stage build of a static, trimmed binary on an empty base image.
# There is no container engine on the development machines of this project;
# build this where one exists: docker build --build-arg VERSION=v0.1.0 -t deployobject-controller .
FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=dev
RUN CGO_ENABLED=0 go build -trimpath -ldflags "-s -w -X main.version=${VERSION}" -o /out/deployobject-controller .

# The controller needs no shell, libc or CA bundle: in a cluster it trusts the
# ServiceAccount's CA. 65532 is the conventional "nonroot" user.
FROM scratch
COPY --from=build /out/deployobject-controller /deployobject-controller
USER 65532:65532
ENTRYPOINT ["/deployobject-controller"]
