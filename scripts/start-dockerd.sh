#!/usr/bin/env bash
# Starts the Docker engine when it is not answering, and waits until it does.
# Idempotent: does nothing when `docker info` already works. Used by .ci/run and the
# install scripts on hosts without systemd (containers, CI machines).
set -euo pipefail

if docker info >/dev/null 2>&1; then
  exit 0
fi

if command -v systemctl >/dev/null 2>&1 && [ -d /run/systemd/system ]; then
  systemctl start docker
else
  log=/var/log/k8ts-dockerd.log
  # dockerd uses the system containerd whenever its socket file exists, and waits for it
  # forever. A file that nothing listens on (a containerd that ended without removing it,
  # as when the processes of a machine's earlier session were killed) is removed first, so
  # that dockerd starts its own.
  system_containerd=/run/containerd/containerd.sock
  if [ -S "$system_containerd" ] && ! ss -xlH 2>/dev/null | awk '{print $5}' | grep -qxF "$system_containerd"; then
    rm -f "$system_containerd"
    echo "removed $system_containerd: no containerd listens on it"
  fi
  # containerd is started by dockerd itself when no system containerd runs.
  nohup dockerd >"$log" 2>&1 </dev/null &
  echo "started dockerd (pid $!), log in $log"
fi

for _ in $(seq 1 120); do
  if docker info >/dev/null 2>&1; then
    exit 0
  fi
  sleep 0.5
done
echo "dockerd did not become ready within 60 s; see /var/log/k8ts-dockerd.log" >&2
tail -n 30 /var/log/k8ts-dockerd.log >&2 || true
exit 1
