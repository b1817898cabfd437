# Shared by scripts/install.sh (a control host) and scripts/install-agent.sh (a worker host).
# Sourced, not run. Every step is idempotent: it checks before it installs or starts.

K8TS_REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
K8TS_NODE="${K8TS_NODE:-$(command -v node || true)}"

say() { printf '\033[1mk8ts:\033[0m %s\n' "$*"; }
die() {
  printf 'k8ts: %s\n' "$*" >&2
  exit 1
}

require_root_debian() {
  [ "$(id -u)" = 0 ] || die "run this as root (sudo bash $0 ...)"
  command -v apt-get >/dev/null 2>&1 || die "this installer needs a Debian or Ubuntu host (apt-get not found)"
}

# The Debian packages k8ts needs on every host: the Docker engine; iproute2 for the
# kube-proxy's service addresses and the pod network between hosts (VXLAN device, routes,
# `bridge fdb`), iptables and nftables for its forwarding, masquerade and
# externalTrafficPolicy Local rules; a JDK, busybox-static and gcc for the sample images;
# python3/make/g++ to build better-sqlite3; containerd, runc and the CNI plugins for agents
# on `--runtime containerd` (started by start_containerd).
install_packages() {
  local want=(docker.io containerd runc containernetworking-plugins iproute2 iptables nftables curl ca-certificates openjdk-17-jdk-headless busybox-static python3 make g++)
  local missing=()
  for p in "${want[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
  done
  if [ "${#missing[@]}" -gt 0 ]; then
    say "installing ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  fi
  if ! command -v kubectl >/dev/null 2>&1; then
    say "installing kubectl"
    apt-get install -y -qq kubectl >/dev/null 2>&1 || apt-get install -y -qq kubernetes-client >/dev/null ||
      say "kubectl is not in this host's package archive; install it to use the cluster from here"
  fi
}

require_node() {
  [ -n "$K8TS_NODE" ] || die "Node.js 20 or newer is needed (node not found). Install it, then run this again."
  local major
  major="$("$K8TS_NODE" -p 'process.versions.node.split(".")[0]')"
  [ "$major" -ge 20 ] || die "Node.js 20 or newer is needed (found $("$K8TS_NODE" --version)). Install it, then run this again."
}

build_k8ts() {
  cd "$K8TS_REPO"
  if [ ! -d node_modules ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
    say "installing npm dependencies"
    npm ci --no-audit --no-fund >/dev/null
  fi
  say "building"
  npm run --silent build
}

start_docker() { bash "$K8TS_REPO/scripts/start-dockerd.sh"; }

# containerd with a CRI config (CNI dirs, cgroup driver, sandbox_image k8ts/pause:1.0) on
# /run/containerd/containerd.sock; build_images then imports the images into its k8s.io.
start_containerd() { bash "$K8TS_REPO/scripts/start-containerd.sh"; }

build_images() { bash "$K8TS_REPO/scripts/build-images.sh"; }

has_systemd() { command -v systemctl >/dev/null 2>&1 && [ -d /run/systemd/system ]; }

# run_service NAME DESCRIPTION ARGS...: a systemd unit when systemd runs, else a background
# process with its log in /var/log/NAME.log and its pid in /run/NAME.pid.
run_service() {
  local name="$1" description="$2"
  shift 2
  local cmd=("$K8TS_NODE" "$K8TS_REPO/dist/cli.js" "$@")
  if has_systemd; then
    cat >"/etc/systemd/system/$name.service" <<UNIT
[Unit]
Description=$description
After=network-online.target docker.service containerd.service
Wants=network-online.target docker.service containerd.service

[Service]
ExecStart=${cmd[*]}
Restart=always
RestartSec=2
KillMode=process
LimitNOFILE=1048576

[Install]
WantedBy=multi-user.target
UNIT
    systemctl daemon-reload
    systemctl enable "$name.service" >/dev/null 2>&1
    systemctl restart "$name.service"
    say "started $name.service (journalctl -u $name -f)"
  else
    stop_service "$name"
    nohup "${cmd[@]}" >>"/var/log/$name.log" 2>&1 </dev/null &
    echo $! >"/run/$name.pid"
    say "started $name (pid $!; log /var/log/$name.log; no systemd on this host)"
  fi
}

# Stops what run_service started, by its unit or its recorded pid only.
stop_service() {
  local name="$1"
  if has_systemd && [ -f "/etc/systemd/system/$name.service" ]; then
    systemctl disable --now "$name.service" >/dev/null 2>&1 || true
    rm -f "/etc/systemd/system/$name.service"
    systemctl daemon-reload
  fi
  if [ -f "/run/$name.pid" ]; then
    local pid
    pid="$(cat "/run/$name.pid")"
    if kill -0 "$pid" 2>/dev/null; then
      kill "$pid"
      for _ in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    fi
    rm -f "/run/$name.pid"
  fi
}

# Removes the containers and networks an agent created for NODE (labelled io.k8ts.node=NODE).
remove_node_containers() {
  local node="$1"
  docker info >/dev/null 2>&1 || return 0
  local ids
  ids="$(docker ps -aq --filter "label=io.k8ts.node=$node")"
  [ -z "$ids" ] || docker rm -f $ids >/dev/null
  ids="$(docker network ls -q --filter "label=io.k8ts.node=$node")"
  [ -z "$ids" ] || docker network rm $ids >/dev/null
}

# Removes the pod sandboxes (and so containers) an agent made for NODE in containerd's CRI
# (labelled io.k8ts.node=NODE), through the CRI as the agent does (dist/cri/containerd).
remove_node_pods_containerd() {
  local node="$1" sock=/run/containerd/containerd.sock
  [ -S "$sock" ] && [ -f "$K8TS_REPO/dist/cri/containerd/runtime.js" ] && [ -n "$K8TS_NODE" ] || return 0
  "$K8TS_NODE" --input-type=module -e "
    const { ContainerdRuntime } = await import('$K8TS_REPO/dist/cri/containerd/runtime.js');
    const rt = await ContainerdRuntime.connect({ endpoint: 'unix://$sock', nodeName: process.argv[1] });
    const sandboxes = await rt.listPodSandbox();
    for (const s of sandboxes) { await rt.stopPodSandbox(s.id); await rt.removePodSandbox(s.id); }
    console.log('removed ' + sandboxes.length + ' pod sandboxes of ' + process.argv[1] + ' from containerd');
    await rt.close();
  " "$node" || say "could not remove the pods of $node from containerd (is it running?)"
}
