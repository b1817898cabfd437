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
# With --runtime containerd (passed on to `k8ts agent`): Debian's containerd, runc and
# containernetworking-plugins are installed, containerd is started with a CRI config
# (scripts/start-containerd.sh: CNI dirs, cgroup driver, sandbox_image, certs.d) and the
# images are imported into its k8s.io namespace (scripts/build-images.sh).
# K8TS_DRY_RUN=1 prints the steps and the agent's command line instead of running them.
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
    -h | --help) sed -n '2,19p' "$0"; exit 0 ;;
    *) agent_args+=("$1") ;;
  esac
  shift
done
NODE_NAME="${K8TS_NODE_NAME:-$(hostname)}"

require_root_debian

if $uninstall; then
  stop_service k8ts-agent
  remove_node_containers "$NODE_NAME"
  remove_node_pods_containerd "$NODE_NAME"
  # The agent's kernel state, and on containerd its CNI conflist, bridge and leases
  # (agent/network/cleanup.ts); the conflist also when dist/ is gone.
  if [ -n "$K8TS_NODE" ] && [ -f "$K8TS_REPO/dist/cli.js" ]; then
    "$K8TS_NODE" "$K8TS_REPO/dist/cli.js" agent --cleanup --node-name "$NODE_NAME" --data-dir "$DATA_DIR" ||
      say "k8ts agent --cleanup failed; see above"
  fi
  grep -qs "\"name\": \"k8ts-$NODE_NAME\"" /etc/cni/net.d/00-k8ts.conflist && rm -f /etc/cni/net.d/00-k8ts.conflist
  rm -rf "$DATA_DIR"
  say "uninstalled: unit, containers, pods and networks of node $NODE_NAME, and $DATA_DIR removed"
  exit 0
fi

[ -n "$url" ] || die "give the control process's URL: --server URL (or K8TS_URL)"
[ -n "$token" ] || die "give the node token: --token TOKEN (or K8TS_TOKEN); it is in /var/lib/k8ts/node-token on the control host"

case "$runtime" in
  docker | containerd) ;;
  *) die "--runtime must be docker or containerd, got $runtime" ;;
esac

# K8TS_DRY_RUN=1: print each step with its arguments instead (scripts/install-agent.test.ts).
step() {
  if [ -n "${K8TS_DRY_RUN:-}" ]; then
    printf 'dry-run:'
    printf ' %q' "$@"
    printf '\n'
  else
    "$@"
  fi
}
write_token() {
  mkdir -p "$DATA_DIR"
  umask 077
  printf '%s\n' "$token" >"$DATA_DIR/token"
}

step install_packages
step require_node
step start_docker
if [ "$runtime" = containerd ]; then step start_containerd; fi
step build_k8ts
step build_images
step write_token
step run_service k8ts-agent "k8ts agent" agent --server "$url" --token-file "$DATA_DIR/token" --data-dir "$DATA_DIR" "${agent_args[@]}"
if [ -n "${K8TS_DRY_RUN:-}" ]; then exit 0; fi
say "agent $NODE_NAME started; on the control host: kubectl get nodes"
