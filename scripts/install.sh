#!/usr/bin/env bash
# Installs and starts k8ts on this host (the control process with an agent for this host),
# as root on Debian or Ubuntu. Idempotent: run it again to update and restart.
#
#   bash scripts/install.sh              # install, start, wait until the node is Ready
#   bash scripts/install.sh --example    # ... and deploy examples/ (spring-server behind NodePort 30080)
#   bash scripts/install.sh --uninstall  # stop, remove the unit, the containers and the data
#
# Other flags are passed to `k8ts server` (e.g. --bind-address 127.0.0.1 to keep the API on
# this host, though agents on other hosts and pods then cannot reach it; --port 6443). Data: /var/lib/k8ts. Log: journalctl -u k8ts, or
# /var/log/k8ts.log on hosts without systemd.
set -euo pipefail
source "$(dirname "$0")/lib/install-common.sh"

DATA_DIR=/var/lib/k8ts
example=false
uninstall=false
server_args=()
while [ $# -gt 0 ]; do
  case "$1" in
    --example) example=true ;;
    --uninstall) uninstall=true ;;
    --data-dir) DATA_DIR="$2"; server_args+=("$1" "$2"); shift ;;
    --node-name) K8TS_NODE_NAME="$2"; server_args+=("$1" "$2"); shift ;;
    -h | --help) sed -n '2,13p' "$0"; exit 0 ;;
    *) server_args+=("$1") ;;
  esac
  shift
done
NODE_NAME="${K8TS_NODE_NAME:-$(hostname)}"
KUBECONFIG_PATH="$DATA_DIR/kubeconfig.yaml"

require_root_debian

if $uninstall; then
  stop_service k8ts
  remove_node_containers "$NODE_NAME"
  rm -rf "$DATA_DIR"
  say "uninstalled: unit, containers and networks of node $NODE_NAME, and $DATA_DIR removed"
  exit 0
fi

install_packages
require_node
start_docker
build_k8ts
build_images

run_service k8ts "k8ts control process and agent" server --data-dir "$DATA_DIR" "${server_args[@]}"

say "waiting for the API server and node $NODE_NAME"
kc=(kubectl --kubeconfig "$KUBECONFIG_PATH")
for _ in $(seq 1 240); do
  if [ -f "$KUBECONFIG_PATH" ] && "${kc[@]}" get node "$NODE_NAME" -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}' 2>/dev/null | grep -q True; then
    ready=1
    break
  fi
  sleep 0.5
done
[ "${ready:-}" = 1 ] || die "node $NODE_NAME did not become Ready within 2 minutes; see journalctl -u k8ts or /var/log/k8ts.log"
say "node $NODE_NAME is Ready"

if $example; then
  "${kc[@]}" apply -f "$K8TS_REPO/examples/"
  "${kc[@]}" rollout status deployment/spring-deployment --timeout=180s
fi

ip="$("${kc[@]}" get node "$NODE_NAME" -o jsonpath='{.status.addresses[?(@.type=="InternalIP")].address}')"
cat <<MSG

k8ts is running.
  kubeconfig:  $KUBECONFIG_PATH        (export KUBECONFIG=$KUBECONFIG_PATH)
  node token:  $DATA_DIR/node-token    (join another host: bash scripts/install-agent.sh --server URL --token TOKEN)
  try:         kubectl --kubeconfig $KUBECONFIG_PATH get nodes,pods -o wide
MSG
if $example; then
  echo "  the example: curl http://$ip:30080/   (each request goes to one of the 5 spring-server pods)"
fi
