#!/usr/bin/env bash
# Installs and starts a k8ts agent (kubelet and kube-proxy) on this worker host, joining an
# existing control process, as root on Debian or Ubuntu. Idempotent.
#
#   bash scripts/install-agent.sh --server https://10.0.0.1:6443 --token K10...
#   bash scripts/install-agent.sh --server ... --token ... --runtime containerd
#   K8TS_URL=... K8TS_TOKEN=... bash scripts/install-agent.sh
#   bash scripts/install-agent.sh --uninstall
#
# The URL and token are printed by scripts/install.sh on the control host (the token is in
# its /var/lib/k8ts/node-token). Other flags go to `k8ts agent` (--node-name, --node-ip).
# With --runtime containerd, containerd is started with a CRI config
# (scripts/start-containerd.sh) and the images are imported into its k8s.io namespace.
# Data: /var/lib/k8ts-agent. Log: journalctl -u k8ts-agent, or /var/log/k8ts-agent.log.
set -euo pipefail
source "$(dirname "$0")/lib/install-common.sh"

DATA_DIR=/var/lib/k8ts-agent
url="${K8TS_URL:-}"
token="${K8TS_TOKEN:-}"
uninstall=false
runtime=docker
agent_args=()
while [ $# -gt 0 ]; do
  case "$1" in
    --server) url="$2"; shift ;;
    --token) token="$2"; shift ;;
    --uninstall) uninstall=true ;;
    --data-dir) DATA_DIR="$2"; shift ;;
    --node-name) K8TS_NODE_NAME="$2"; agent_args+=("$1" "$2"); shift ;;
    --runtime) runtime="$2"; agent_args+=("$1" "$2"); shift ;;
    -h | --help) sed -n '2,15p' "$0"; exit 0 ;;
    *) agent_args+=("$1") ;;
  esac
  shift
done
NODE_NAME="${K8TS_NODE_NAME:-$(hostname)}"

require_root_debian

if $uninstall; then
  stop_service k8ts-agent
  remove_node_containers "$NODE_NAME"
  # The conflist a containerd agent wrote (agent/network/cni.ts); its pods stay in containerd.
  rm -f /etc/cni/net.d/00-k8ts.conflist
  rm -rf "$DATA_DIR"
  say "uninstalled: unit, containers and networks of node $NODE_NAME, and $DATA_DIR removed"
  exit 0
fi

[ -n "$url" ] || die "give the control process's URL: --server URL (or K8TS_URL)"
[ -n "$token" ] || die "give the node token: --token TOKEN (or K8TS_TOKEN); it is in /var/lib/k8ts/node-token on the control host"

case "$runtime" in
  docker | containerd) ;;
  *) die "--runtime must be docker or containerd, got $runtime" ;;
esac

install_packages
require_node
start_docker
[ "$runtime" = containerd ] && start_containerd
build_k8ts
build_images

mkdir -p "$DATA_DIR"
umask 077
printf '%s\n' "$token" >"$DATA_DIR/token"
run_service k8ts-agent "k8ts agent" agent --server "$url" --token-file "$DATA_DIR/token" --data-dir "$DATA_DIR" "${agent_args[@]}"
say "agent $NODE_NAME started; on the control host: kubectl get nodes"
