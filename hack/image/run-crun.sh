#!/usr/bin/env bash
# Runs the image's entrypoint with --version under a real container runtime
# and checks that it prints VERSION: umoci unpacks the OCI layout into a
# runtime bundle (root file system and config.json, with the image's
# entrypoint and user), and crun runs it in its own namespaces.
# Both are Debian packages (apt-get install crun umoci); it needs root.
#
# Usage: hack/image/run-crun.sh LAYOUT_DIR VERSION
set -o errexit -o nounset -o pipefail

layout=$1 version=$2
work=$(mktemp -d)
trap 'rm -rf "${work}"' EXIT

# umoci cannot choose a platform from an index: it gets a layout holding
# this machine's image alone, which it may change. The image's command line
# is the entrypoint plus --version.
go -C "$(dirname "${BASH_SOURCE[0]}")" run . select -layout "$(realpath "${layout}")" -tag "${version}" -out "${work}/layout"
umoci config --image "${work}/layout:${version}" --config.cmd=--version
umoci unpack --image "${work}/layout:${version}" "${work}/bundle" >/dev/null
# umoci asks for a terminal, which crun cannot give without one.
sed -i 's/"terminal": *true/"terminal": false/' "${work}/bundle/config.json"
grep -q '"uid": *65532' "${work}/bundle/config.json" || { echo "run-crun: the bundle does not run as uid 65532" >&2; exit 1; }

# crun 1.8 refuses a "hybrid" cgroup setup (v1 hierarchies under a tmpfs
# /sys/fs/cgroup plus a cgroup2 mount at /sys/fs/cgroup/unified with a
# controller in it), as on this project's development machines. Hiding the
# cgroup2 mount in a private mount namespace makes it a plain v1 setup there;
# the host is untouched.
out=$(unshare --mount --propagation private -- sh -c '
	if mountpoint -q /sys/fs/cgroup/unified; then umount /sys/fs/cgroup/unified; fi
	exec crun run --bundle "$1" "$2" </dev/null' sh "${work}/bundle" "deployobject-image-check-$$")
if [[ "${out}" != "${version}" ]]; then
	echo "run-crun: the image printed '${out}', want '${version}'" >&2
	exit 1
fi
echo "run-crun: ${layout}:${version} printed its version under crun as uid 65532"
