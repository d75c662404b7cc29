#!/usr/bin/env bash
# Sourced by the hack/ scripts that run a Go tool: gotool BINARY PACKAGE
# VERSION prints the path of BINARY, built from the Go module proxy with
# `go install PACKAGE@VERSION` the first time, into the cache that
# hack/cluster.sh uses for the cluster's binaries
# (DEPLOYOBJECT_CACHE_DIR moves it). Each version has a directory of its
# own, so changing the version builds the new one beside the old.

gotool() {
	local binary=$1 package=$2 version=$3
	local cache_dir="${DEPLOYOBJECT_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/deployobject-controller}"
	local bin_dir="${cache_dir}/${binary}-${version}"
	if [[ ! -x "${bin_dir}/${binary}" ]]; then
		echo "${binary}: building ${version} into ${bin_dir} (first time only)" >&2
		mkdir -p "${bin_dir}"
		# A temporary directory of its own, so that a build cut short leaves
		# no binary behind that looks finished.
		local tmp
		tmp=$(mktemp -d "${bin_dir}/.build.XXXXXX")
		if ! GOBIN="${tmp}" go install "${package}@${version}" >&2; then
			rm -rf "${tmp}"
			return 1
		fi
		mv "${tmp}/${binary}" "${bin_dir}/${binary}"
		rm -rf "${tmp}"
	fi
	echo "${bin_dir}/${binary}"
}
