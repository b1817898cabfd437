#!/usr/bin/env bash
# Builds k8ts' local images with `docker build` FROM scratch, from this machine's own tools:
# nothing is pulled or downloaded (no registry is reachable).
#
#   spring-server:1.0, spring-server:1.1   images/spring-server: the sample Java HTTP server on a
#                                          jlinked JDK 17 runtime, plus a static busybox
#   k8ts/pause:1.0                         images/pause: the pod sandbox process (static C)
#   k8ts/busybox:1.0                       images/busybox: static busybox and its applet links
#
# Usage: scripts/build-images.sh [--force] [spring-server|pause|busybox ...]
#   With no names, every image. An image whose io.k8ts.source-hash label matches the hash of its
#   inputs (sources, Dockerfile, this script, version, the host tools and libraries it copies) is
#   left alone ("up to date"); --force rebuilds without docker's layer cache.
#   Prints one line per image: reference, "built" or "up to date", size.
#   Exit status 0 when every image is present, 1 on any failure (with the reason on stderr),
#   2 on a usage error.
#
# When a containerd answers on K8TS_CONTAINERD_ADDRESS (default /run/containerd/containerd.sock,
# scripts/start-containerd.sh's), the images are also imported into its CRI namespace k8s.io
# (`docker save | ctr -n k8s.io images import -`), where `k8ts agent --runtime containerd` and
# containerd's sandbox_image find them; an image there with the same io.k8ts.source-hash label
# is left alone. One line per imported image goes to stderr (stdout stays the report above).
#
# Tools, overridable through the environment: JAVAC, JAR, JLINK (openjdk-17-jdk-headless),
# CC (gcc), STRIP (binutils), BUSYBOX (busybox-static's /bin/busybox), and a reachable docker.
# Every image carries the label io.k8ts.image=true.
set -Eeuo pipefail
trap 'echo "build-images: failed at line $LINENO: $BASH_COMMAND" >&2' ERR

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
SCRIPT="$ROOT/scripts/build-images.sh"

JAVAC="${JAVAC:-javac}"
JAR="${JAR:-jar}"
JLINK="${JLINK:-jlink}"
CC="${CC:-gcc}"
STRIP="${STRIP:-strip}"
BUSYBOX="${BUSYBOX:-/bin/busybox}"

# reference|kind (folder under images/)|version
IMAGES=(
  "spring-server:1.0|spring-server|1.0"
  "spring-server:1.1|spring-server|1.1"
  "k8ts/pause:1.0|pause|1.0"
  "k8ts/busybox:1.0|busybox|1.0"
)
KINDS=(spring-server pause busybox)

die() {
  echo "build-images: $*" >&2
  exit 1
}

usage() {
  local IFS='|'
  echo "usage: scripts/build-images.sh [--force] [${KINDS[*]} ...]"
}

force=false
selected=()
while [ $# -gt 0 ]; do
  case "$1" in
    --force) force=true ;;
    -h | --help)
      usage
      exit 0
      ;;
    -*)
      usage >&2
      exit 2
      ;;
    *)
      if [[ " ${KINDS[*]} " != *" $1 "* ]]; then
        echo "build-images: unknown image '$1' (known: ${KINDS[*]})" >&2
        exit 2
      fi
      selected+=("$1")
      ;;
  esac
  shift
done
[ ${#selected[@]} -gt 0 ] || selected=("${KINDS[@]}")

wanted() {
  [[ " ${selected[*]} " == *" $1 "* ]]
}

# --- Preconditions: docker, then the tools of the selected images -----------------------------

command -v docker >/dev/null 2>&1 || die "docker not found: install the Debian package docker.io"
if ! docker info >/dev/null 2>&1; then
  die "docker is not reachable${DOCKER_HOST:+ at $DOCKER_HOST}: start dockerd: bash scripts/start-dockerd.sh"
fi

# need TOOL PACKAGE: TOOL (a name on PATH or a path) must be executable.
need() {
  command -v "$1" >/dev/null 2>&1 || die "$1 not found: install the Debian package $2 (apt-get install $2)"
}
need sha256sum coreutils
need ldd libc-bin
if wanted spring-server; then
  need "$JAVAC" openjdk-17-jdk-headless
  need "$JAR" openjdk-17-jdk-headless
  need "$JLINK" openjdk-17-jdk-headless
  need "$STRIP" binutils
fi
if wanted pause; then
  need "$CC" gcc
fi
if wanted spring-server || wanted busybox; then
  need "$BUSYBOX" busybox-static
  # A dynamically linked busybox (Debian's `busybox` package) cannot run in a scratch image.
  if ldd "$BUSYBOX" >/dev/null 2>&1; then
    die "$BUSYBOX is dynamically linked: install the Debian package busybox-static (apt-get install busybox-static)"
  fi
fi

# Two runs at once (parallel test files) would build the same tags twice; the second waits and
# then finds the images up to date.
exec 9>"${TMPDIR:-/tmp}/k8ts-build-images.lock"
command -v flock >/dev/null 2>&1 && flock 9

WORK="$(mktemp -d "${TMPDIR:-/tmp}/k8ts-images.XXXXXX")"
trap 'rm -rf "$WORK"' EXIT
LOG="$WORK/log"

# step DESCRIPTION CMD...: runs CMD with its output in the log; on failure shows the log and exits.
step() {
  local what="$1"
  shift
  : >"$LOG"
  if ! "$@" >>"$LOG" 2>&1; then
    echo "build-images: $what failed: $*" >&2
    tail -n 40 "$LOG" >&2
    exit 1
  fi
}

# --- Input hashes -----------------------------------------------------------------------------

# fingerprint FILE...: path, size and mtime of host files an image copies or links (cheaper than
# hashing them; a package upgrade changes both).
fingerprint() {
  local f
  for f in "$@"; do
    stat -L -c '%n %s %Y' "$f" 2>/dev/null || echo "$f missing"
  done
}

# host_libraries ELF...: absolute paths of the shared libraries (and dynamic loader) the ELF files
# need, outside the directory DIR given first. Fails on a library ldd cannot find.
host_libraries() {
  local skip="$1"
  shift
  local out
  out="$(ldd "$@" 2>/dev/null)" || true
  # libjvm.so is no dependency to find: the launcher loads it first (by path), and the JDK's
  # other libraries then bind to the loaded copy.
  if grep 'not found' <<<"$out" | grep -vq 'libjvm\.so'; then
    echo "build-images: missing shared libraries for the java runtime:" >&2
    grep 'not found' <<<"$out" | grep -v 'libjvm\.so' >&2
    return 1
  fi
  grep -o '/[^ ]*' <<<"$out" | grep -v "^$skip/" | grep -v ':$' | sort -u
}

jdk_home() {
  dirname "$(dirname "$(readlink -f "$(command -v "$JLINK")")")"
}

# Hash of everything that goes into one image, one hex string.
source_hash() {
  local kind="$1" version="$2"
  {
    echo "version $version"
    sha256sum "$SCRIPT" | cut -d' ' -f1
    (cd "$ROOT/images/$kind" && find . -type f | LC_ALL=C sort | xargs -d '\n' sha256sum)
    case "$kind" in
      spring-server)
        local jdk
        jdk="$(jdk_home)"
        fingerprint "$jdk/lib/modules" "$jdk/lib/server/libjvm.so" "$BUSYBOX"
        fingerprint $(host_libraries "$jdk" "$jdk/bin/java" "$jdk/lib/server/libjvm.so" \
          "$jdk/lib/libjava.so" "$jdk/lib/libnet.so" "$jdk/lib/libnio.so" "$jdk/lib/libzip.so")
        ;;
      pause)
        "$CC" -dumpfullversion -dumpversion
        fingerprint "$("$CC" -print-file-name=libc.a)"
        ;;
      busybox)
        fingerprint "$BUSYBOX"
        ;;
    esac
  } | sha256sum | cut -c1-16
}

# --- Context assembly -------------------------------------------------------------------------

# add_base ROOTFS: static busybox with its applets as symlinks, /etc/passwd, /etc/group, /tmp.
add_base() {
  local rootfs="$1" applet
  mkdir -p "$rootfs/bin" "$rootfs/sbin" "$rootfs/usr/bin" "$rootfs/usr/sbin" "$rootfs/etc" \
    "$rootfs/root" "$rootfs/tmp"
  chmod 1777 "$rootfs/tmp"
  chmod 0700 "$rootfs/root"
  cp "$BUSYBOX" "$rootfs/bin/busybox"
  # Symlinks, not hard links: docker's COPY keeps symlinks but would store every hard link as
  # its own copy of the 2 MB binary.
  while read -r applet; do
    # linuxrc: the initrd entry point, a symlink at / that a container has no use for.
    [ -n "$applet" ] && [ "$applet" != bin/busybox ] && [ "$applet" != linuxrc ] || continue
    mkdir -p "$rootfs/$(dirname "$applet")"
    ln -sf /bin/busybox "$rootfs/$applet"
  done < <("$BUSYBOX" --list-full)
  printf '%s\n' 'root:x:0:0:root:/root:/bin/sh' 'nobody:x:65534:65534:nobody:/nonexistent:/bin/false' \
    >"$rootfs/etc/passwd"
  printf '%s\n' 'root:x:0:' 'nogroup:x:65534:' >"$rootfs/etc/group"
}

# The spring-server context, built once per run and shared by every version (the version is a
# build argument): jar, jlinked runtime, its host libraries, busybox.
spring_server_context() {
  local ctx="$WORK/spring-server"
  if [ -d "$ctx" ]; then
    echo "$ctx"
    return
  fi
  local src="$ROOT/images/spring-server" build="$WORK/spring-build"
  mkdir -p "$build/classes" "$ctx/rootfs/app" "$ctx/rootfs/opt"
  step "javac" "$JAVAC" --release 17 -nowarn -d "$build/classes" "$src/SpringServer.java"
  step "jar" "$JAR" --create --file "$ctx/rootfs/app/spring-server.jar" --main-class SpringServer \
    -C "$build/classes" .
  # jdk.unsupported: sun.misc.Signal, for the exit status 0 on SIGTERM.
  step "jlink" "$JLINK" --add-modules java.base,jdk.httpserver,jdk.unsupported \
    --strip-debug --no-header-files --no-man-pages --compress=2 --output "$ctx/rootfs/opt/java"
  # jlink keeps the JDK's native symbol tables (about 4 MB of libjvm.so); the JVM needs none.
  step "strip" find "$ctx/rootfs/opt/java" -name '*.so' -exec "$STRIP" --strip-unneeded {} +
  local libs lib
  libs="$(host_libraries "$ctx/rootfs/opt/java" "$ctx/rootfs/opt/java/bin/java" \
    $(find "$ctx/rootfs/opt/java/lib" -name '*.so'))" || exit 1
  # At their host paths (the loader's default search path; the ELF interpreter's own path).
  for lib in $libs; do
    mkdir -p "$ctx/rootfs$(dirname "$lib")"
    cp -L "$lib" "$ctx/rootfs$lib"
  done
  add_base "$ctx/rootfs"
  cp "$src/Dockerfile" "$ctx/Dockerfile"
  echo "$ctx"
}

pause_context() {
  local ctx="$WORK/pause"
  if [ ! -d "$ctx" ]; then
    mkdir -p "$ctx"
    step "gcc" "$CC" -static -Os -Wall -Wextra -o "$ctx/pause" "$ROOT/images/pause/pause.c"
    if command -v "$STRIP" >/dev/null 2>&1; then
      step "strip" "$STRIP" "$ctx/pause"
    fi
    cp "$ROOT/images/pause/Dockerfile" "$ctx/Dockerfile"
  fi
  echo "$ctx"
}

busybox_context() {
  local ctx="$WORK/busybox"
  if [ ! -d "$ctx" ]; then
    mkdir -p "$ctx/rootfs"
    add_base "$ctx/rootfs"
    cp "$ROOT/images/busybox/Dockerfile" "$ctx/Dockerfile"
  fi
  echo "$ctx"
}

# --- Build ------------------------------------------------------------------------------------

human_size() {
  awk -v b="$1" 'BEGIN { if (b >= 1000000) printf "%.1f MB", b / 1000000; else printf "%.0f kB", b / 1000 }'
}

# inspect REF: "<id> <size in bytes> <io.k8ts.source-hash label>", or nothing when REF is absent.
# One docker call per image keeps a run with everything up to date fast.
inspect() {
  docker image inspect --format '{{.Id}} {{.Size}} {{index .Config.Labels "io.k8ts.source-hash"}}' \
    "$1" 2>/dev/null || true
}

for entry in "${IMAGES[@]}"; do
  IFS='|' read -r ref kind version <<<"$entry"
  wanted "$kind" || continue
  hash="$(source_hash "$kind" "$version")"
  read -r old_id size old_hash <<<"$(inspect "$ref")" || true
  if ! $force && [ -n "$old_id" ] && [ "$old_hash" = "$hash" ]; then
    state="up to date"
  else
    ctx="$("${kind//-/_}_context")"
    cache=()
    $force && cache=(--no-cache)
    step "docker build $ref" docker build "${cache[@]}" --build-arg "VERSION=$version" \
      --build-arg "SOURCE_HASH=$hash" -t "$ref" "$ctx"
    read -r new_id size _ <<<"$(inspect "$ref")"
    # The replaced image is now untagged: remove it (it was ours: it had our label), unless a
    # container still uses it.
    if [ -n "$old_id" ] && [ "$old_id" != "$new_id" ] && [ -n "$old_hash" ]; then
      docker image rm "$old_id" >/dev/null 2>&1 || true
    fi
    state="built"
  fi
  printf '%-20s %-11s %s\n' "$ref" "$state" "$(human_size "$size")"
done

# --- containerd's k8s.io namespace ------------------------------------------------------------

CTR_ADDRESS="${K8TS_CONTAINERD_ADDRESS:-/run/containerd/containerd.sock}"
if command -v ctr >/dev/null 2>&1 && [ -S "$CTR_ADDRESS" ] && ctr -a "$CTR_ADDRESS" version >/dev/null 2>&1; then
  for entry in "${IMAGES[@]}"; do
    IFS='|' read -r ref kind version <<<"$entry"
    wanted "$kind" || continue
    read -r _ _ hash <<<"$(inspect "$ref")" || true
    # containerd names images in full, as Docker's reference grammar normalizes them: a
    # one-component name is in docker.io/library/ (spring-server:1.0), others in docker.io/.
    case "$ref" in
      */*) name="docker.io/$ref" ;;
      *) name="docker.io/library/$ref" ;;
    esac
    if [ -n "$hash" ] && ctr -a "$CTR_ADDRESS" -n k8s.io images ls "name==$name" 2>/dev/null |
      grep -q "io.k8ts.source-hash=$hash"; then
      continue
    fi
    : >"$LOG"
    if ! docker save "$ref" 2>>"$LOG" | ctr -a "$CTR_ADDRESS" -n k8s.io images import - >>"$LOG" 2>&1; then
      echo "build-images: importing $ref into containerd ($CTR_ADDRESS, namespace k8s.io) failed" >&2
      tail -n 20 "$LOG" >&2
      exit 1
    fi
    step "label $ref in containerd" ctr -a "$CTR_ADDRESS" -n k8s.io images label "$name" "io.k8ts.source-hash=$hash"
    echo "build-images: $ref imported into containerd ($CTR_ADDRESS, namespace k8s.io)" >&2
  done
fi
