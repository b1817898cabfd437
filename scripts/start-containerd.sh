#!/usr/bin/env bash
# Starts containerd with its CRI plugin fit for `k8ts agent --runtime containerd`, as
# scripts/start-dockerd.sh starts the Docker engine, and waits until the CRI answers on
# /run/containerd/containerd.sock (the agent's default --container-runtime-endpoint).
#
#   bash scripts/start-containerd.sh
#
# The config it writes (/etc/containerd/config.toml; K8TS_CONTAINERD_CONFIG to put it
# elsewhere) has what the CRI plugin needs on a k8ts node:
#   - CNI: conf_dir /etc/cni/net.d, where the agent writes the node's conflist from its
#     podCIDR (agent/network/cni.ts), and bin_dir /usr/lib/cni, where Debian's
#     containernetworking-plugins put bridge, host-local, loopback and portmap
#     (K8TS_CNI_CONF_DIR, K8TS_CNI_BIN_DIR);
#   - the cgroup driver of this host: Docker's when it runs, else systemd's when systemd is
#     init, else cgroupfs (SystemdCgroup for runc);
#   - sandbox_image = k8ts/pause:1.0, the locally built pause image (no registry is
#     reachable: scripts/build-images.sh imports it into the k8s.io namespace);
#   - restrict_oom_score_adj where this process may not lower its own oom_score_adj (in
#     some VMs and containers runc cannot set the sandbox's -998 otherwise);
#   - registry hosts from /etc/containerd/certs.d (K8TS_CONTAINERD_CERTS_DIR), CRI's
#     registry.config_path: a registry the CRI should reach over plain HTTP, or with its own
#     CA or mirror, gets <host[:port]>/hosts.toml there, e.g. for 10.0.0.5:5000
#       server = "http://10.0.0.5:5000"
#       [host."http://10.0.0.5:5000"]
#         capabilities = ["pull", "resolve"]
#     (read at each pull, no restart). Credentials come from the pods' imagePullSecrets.
# An existing config that this script did not write is kept once as config.toml.before-k8ts.
#
# Idempotent: with the config unchanged and the CRI answering, it does nothing. A running
# containerd whose config changed is restarted only when systemd runs it (containers keep
# running under their shims); one started otherwise is left alone, with a warning. The
# Docker engine is not touched: a dockerd already running keeps the containerd it uses (its
# own under /run/docker, or this one), and images and containers of its `moby` namespace
# are not those of the CRI's `k8s.io`.
set -euo pipefail

CONFIG="${K8TS_CONTAINERD_CONFIG:-/etc/containerd/config.toml}"
CNI_CONF_DIR="${K8TS_CNI_CONF_DIR:-/etc/cni/net.d}"
CNI_BIN_DIR="${K8TS_CNI_BIN_DIR:-/usr/lib/cni}"
CERTS_DIR="${K8TS_CONTAINERD_CERTS_DIR:-/etc/containerd/certs.d}"
SOCKET=/run/containerd/containerd.sock
LOG=/var/log/k8ts-containerd.log
MARK='# written by k8ts scripts/start-containerd.sh'

die() {
  echo "start-containerd: $*" >&2
  exit 1
}

command -v containerd >/dev/null 2>&1 || die "containerd not found: install the Debian package containerd"
command -v ctr >/dev/null 2>&1 || die "ctr not found: install the Debian package containerd"
command -v runc >/dev/null 2>&1 || die "runc not found: install the Debian package runc"
for plugin in bridge host-local loopback portmap; do
  [ -x "$CNI_BIN_DIR/$plugin" ] ||
    die "the CNI plugin $plugin is not in $CNI_BIN_DIR: install the Debian package containernetworking-plugins"
done

cgroup_driver() {
  local docker_driver
  docker_driver="$(docker info --format '{{.CgroupDriver}}' 2>/dev/null || true)"
  if [ -n "$docker_driver" ]; then
    echo "$docker_driver"
  elif [ -d /run/systemd/system ]; then
    echo systemd
  else
    echo cgroupfs
  fi
}

# May this process lower its oom_score_adj (as runc does for the sandbox)? A subshell
# tries it on itself.
restrict_oom=false
(echo -998 >/proc/self/oom_score_adj) 2>/dev/null || restrict_oom=true

systemd_cgroup=false
[ "$(cgroup_driver)" = systemd ] && systemd_cgroup=true

want="$MARK
version = 2

[plugins]
  [plugins.\"io.containerd.grpc.v1.cri\"]
    sandbox_image = \"k8ts/pause:1.0\"
    restrict_oom_score_adj = $restrict_oom
    stream_server_address = \"127.0.0.1\"
    stream_server_port = \"0\"
    [plugins.\"io.containerd.grpc.v1.cri\".registry]
      config_path = \"$CERTS_DIR\"
    [plugins.\"io.containerd.grpc.v1.cri\".cni]
      bin_dir = \"$CNI_BIN_DIR\"
      conf_dir = \"$CNI_CONF_DIR\"
    [plugins.\"io.containerd.grpc.v1.cri\".containerd]
      snapshotter = \"overlayfs\"
      default_runtime_name = \"runc\"
      [plugins.\"io.containerd.grpc.v1.cri\".containerd.runtimes.runc]
        runtime_type = \"io.containerd.runc.v2\"
        [plugins.\"io.containerd.grpc.v1.cri\".containerd.runtimes.runc.options]
          SystemdCgroup = $systemd_cgroup
"

changed=false
if [ ! -f "$CONFIG" ] || [ "$(cat "$CONFIG")" != "${want%$'\n'}" ]; then
  mkdir -p "$(dirname "$CONFIG")" "$CNI_CONF_DIR" "$CERTS_DIR"
  if [ -f "$CONFIG" ] && ! grep -qxF "$MARK" "$CONFIG" && [ ! -e "$CONFIG.before-k8ts" ]; then
    cp -p "$CONFIG" "$CONFIG.before-k8ts"
    echo "start-containerd: kept the previous $CONFIG as $CONFIG.before-k8ts"
  fi
  printf '%s' "$want" >"$CONFIG"
  changed=true
fi
mkdir -p "$CNI_CONF_DIR" "$CERTS_DIR"

# The CRI answers: `ctr` reaches the socket and the CRI plugin is loaded (status ok).
cri_ready() {
  ctr -a "$SOCKET" plugins ls 2>/dev/null | awk '$2 == "cri" && $NF == "ok" {found = 1} END {exit !found}'
}

running() { ctr -a "$SOCKET" version >/dev/null 2>&1; }

has_systemd() { command -v systemctl >/dev/null 2>&1 && [ -d /run/systemd/system ]; }

if running; then
  if $changed; then
    if has_systemd && systemctl is-active --quiet containerd; then
      systemctl restart containerd
      echo "start-containerd: restarted containerd.service for the new $CONFIG"
    else
      echo "start-containerd: containerd runs without systemd; restart it to use the new $CONFIG" >&2
    fi
  fi
elif has_systemd; then
  systemctl start containerd
else
  nohup containerd --config "$CONFIG" >>"$LOG" 2>&1 </dev/null &
  echo "started containerd (pid $!), log in $LOG"
fi

for _ in $(seq 1 120); do
  if cri_ready; then
    exit 0
  fi
  sleep 0.5
done
if running; then
  die "containerd answers on $SOCKET but its CRI plugin is not loaded (ctr plugins ls); see $LOG or journalctl -u containerd"
fi
echo "start-containerd: containerd did not answer on $SOCKET within 60 s; see $LOG" >&2
tail -n 30 "$LOG" >&2 2>/dev/null || true
exit 1
