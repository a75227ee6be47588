#!/usr/bin/env bash
# A file evicted on a network, cluster or user-space file system (NFS,
# SMB, Lustre, GPFS, Ceph, 9p, FUSE...): dropping its pages reaches this
# machine's copy only, and a file server's cache may still hold it, so a
# "cold" run may read it from the server's memory. The session records
# such files in cache.remote and the summary says so; a local file is not
# listed, and a local folder is looked into for a mount of such a one. The file system type is played by a preloaded stand-in
# (tests/preload/fake_statfs.c: statfs reports FAKE_FS_TYPE for paths
# holding FAKE_FS_PATH). Needs jq.
set -u
. "$(cd "$(dirname "$0")" && pwd)/checks.sh"
B=${BENCHGATE:?}
command -v jq >/dev/null || { echo "this test needs jq (apt-get install jq)"; exit 1; }
shim=${BENCHGATE_BUILD:?}/tests/preload/libfake_statfs.so
[ -f "$shim" ] || { echo "no $shim: build the tests first"; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1
[ "$(stat -f -c %T .)" != tmpfs ] || { echo "skip: $work is on tmpfs, where pages cannot be dropped"; exit 0; }
export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0
mkdir -p data && head -c 200000 /dev/urandom >data/set.bin && head -c 1000 /dev/urandom >local.bin

cold() { # fs-type [options...]
	FAKE_FS_PATH=data/ FAKE_FS_TYPE=$1 LD_PRELOAD=$shim rc_of "$B" measure -w 0 -r 1 "${@:2}" --evict data/set.bin \
		--evict local.bin -- cat data/set.bin local.bin
}
check "local files: measured"      test "$(cold 0xef53 --json)" = 0
check "... cold, none remote"      jqe '.cache == {"requested": "cold", "state": "cold", "remote": []}' out
for t in 0x6969:nfs 0xff534d42:cifs 0x0bd00bd0:lustre 0x47504653:gpfs 0x00c36400:ceph 0x01021997:9p 0x65735546:fuse; do
	check "${t#*:}: measured"      test "$(cold "${t%%:*}" --json)" = 0
	check "... the file and its file system recorded, the local one not" \
		jqe --arg fs "${t#*:}" '.cache.state == "cold" and .cache.remote == [{"path": "data/set.bin", "filesystem": $fs}]' out
done
check "the summary says what it means" test "$(cold 0x6969)" = 0
check "... one line" grep -qxF "  remote      'data/set.bin' is on nfs: evicting it dropped this machine's copy only, and a file server's cache (or the file system's daemon) may still hold it, so the cold runs may not have read it from disk" out
# a local folder holding a mount of a network file system: the first file
# found there is recorded, with its own file system
mkdir -p set/mnt && head -c 1000 /dev/urandom >set/a.bin && head -c 1000 /dev/urandom >set/mnt/b.bin &&
	head -c 1000 /dev/urandom >set/mnt/c.bin
check "a folder with a remote mount inside: measured" \
	test "$(FAKE_FS_PATH=set/mnt/ FAKE_FS_TYPE=0x6969 LD_PRELOAD=$shim rc_of "$B" measure -w 0 -r 1 --json --evict set -- cat set/a.bin)" = 0
check "... the file on it recorded, with its file system" \
	jqe '.cache.state == "cold" and .cache.remote == [{"path": "set/mnt/b.bin", "filesystem": "nfs"}]' out
check "a folder wholly local: none remote" \
	test "$(FAKE_FS_PATH=elsewhere/ FAKE_FS_TYPE=0x6969 LD_PRELOAD=$shim rc_of "$B" measure -w 0 -r 1 --json --evict set -- cat set/a.bin)" = 0
check "... remote empty"            jqe '.cache.remote == []' out
check "a remote folder: the folder recorded" \
	test "$(FAKE_FS_PATH=set FAKE_FS_TYPE=0x6969 LD_PRELOAD=$shim rc_of "$B" measure -w 0 -r 1 --json --evict set -- cat set/a.bin)" = 0
check "... as one entry"            jqe '.cache.remote == [{"path": "set", "filesystem": "nfs"}]' out
check "no eviction: nothing to say" test "$(rc_of "$B" measure -w 0 -r 1 --json -- true)" = 0
check "... remote null"            jqe '.cache.remote == null' out

[ "$fails" = 0 ] || { echo "$fails failed"; exit 1; }
