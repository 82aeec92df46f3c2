#!/usr/bin/env bash
# A cluster of N virtual nodes on this machine, for testing mpiscope across nodes
# (docs/testing.md says what it emulates and what it does not).
#
#   scripts/vcluster.sh up [N] [--rate RATE]   N nodes node1..nodeN (default 4), each link
#                                              shaped to RATE (tc syntax, default 1gbit)
#   scripts/vcluster.sh down                   stop everything, remove every namespace,
#                                              interface and daemon it made
#   scripts/vcluster.sh status                 what is up (exit 0 if the cluster is up)
#   scripts/vcluster.sh exec NODE [--] CMD...  run CMD on NODE (its network, hostname, mounts)
#   scripts/vcluster.sh env                    the variables clients need (SLURM_CONF, ...)
#
# Root only. Every node is a network namespace (an address on one bridge, no default
# route, nothing forwarded or NATed), a UTS namespace (its hostname) and a mount
# namespace (its own /run, the cluster's /etc/hosts and ssh client configuration,
# a private Slurm TmpFS); the filesystem is otherwise shared, as a parallel
# filesystem would be. Each node runs sshd (root key login) and one slurmd;
# slurmctld runs on this machine, in a network namespace of its own on the bridge
# (vc-ctl), so that no daemon of the cluster (auth/none) listens on this machine's
# own interfaces; this machine itself has the bridge's first address, so srun and
# sbatch run here as on a login node. Every file it makes is in
# the state directory (VCLUSTER_DIR, default /tmp/mpiscope-vcluster); `down` keeps
# only that directory's logs. `up` is idempotent: the same N brings nothing new up
# (a different RATE is applied in place), a different N or a half-made cluster is
# taken down first. The subnet (VCLUSTER_SUBNET, default 10.250.35.0/24, a /24) must
# overlap nothing this machine routes or has an address in: checked before anything
# is made.
set -euo pipefail

DIR=${VCLUSTER_DIR:-/tmp/mpiscope-vcluster}
SUBNET=${VCLUSTER_SUBNET:-10.250.35.0/24}
BRIDGE=vcbr0            # the switch
PREFIX=vc-              # network namespaces and host ends of the links: vc-node1, ...
MAX_NODES=32
SLURMCTLD_PORT=6817     # in the controller's own network namespace: no clash
SLURMD_PORT=6818        # inside each node's own network namespace: no clash
START_TIMEOUT=60        # seconds for every daemon to come up

say() { echo "vcluster: $*"; }
die() { echo "vcluster: error: $*" >&2; exit 2; }

usage() {
  sed -n '5,11p' "$0" | sed 's/^# \{0,1\}//'
}

# ---------------------------------------------------------------- helpers --
net_base() {   # 10.250.35.0/24 -> 10.250.35
  local ip=${SUBNET%/*}
  [ "${SUBNET#*/}" = 24 ] || die "VCLUSTER_SUBNET must be a /24, not $SUBNET"
  echo "${ip%.*}"
}
node_ip() { echo "$(net_base).$((10 + $1))"; }
host_ip() { echo "$(net_base).1"; }
ctl_ip() { echo "$(net_base).2"; }
holder_pid() { cat "$DIR/run/node$1.pid" 2>/dev/null || true; }
alive() { [ -n "${1:-}" ] && kill -0 "$1" 2>/dev/null; }
# ours PID: alive and one of this cluster's daemons (their command lines name $DIR), so a
# stale pid file whose number was reused never gets another process killed.
ours() { alive "${1:-}" && tr '\0' ' ' < "/proc/$1/cmdline" 2>/dev/null | grep -qF "$DIR/"; }
conf_get() { sed -n "s/^$1=//p" "$DIR/run/cluster.conf" 2>/dev/null || true; }

# Enter node K: its network, UTS and mount namespaces (by its holder process), in the
# caller's working directory (setns into a mount namespace moves to its root).
in_node() {
  local k=$1; shift
  local pid; pid=$(holder_pid "$k")
  ours "$pid" || die "node$k is not up (scripts/vcluster.sh up)"
  nsenter -t "$pid" --net --uts --mount --wd="$PWD" -- "$@" 9>&-
}

check_subnet() {
  # Refuse a subnet that overlaps any route or address of this machine (but the
  # default route, which covers everything), or the bridge's own when it is ours.
  /usr/bin/python3 - "$SUBNET" "$BRIDGE" <<'EOF'
import ipaddress, json, subprocess, sys
net = ipaddress.ip_network(sys.argv[1], strict=True)
bridge = sys.argv[2]
routes = json.loads(subprocess.run(["ip", "-j", "-4", "route", "show", "table", "all"],
                                   capture_output=True, text=True, check=True).stdout or "[]")
addrs = json.loads(subprocess.run(["ip", "-j", "-4", "addr"], capture_output=True, text=True,
                                  check=True).stdout or "[]")
seen = []
for r in routes:
    if r.get("dev") == bridge or r.get("dst") in (None, "default") or r.get("type") in ("broadcast",):
        continue
    dst = r["dst"]
    if dst in ("default",):
        continue
    try:
        other = ipaddress.ip_network(dst if "/" in dst else dst + "/32", strict=False)
    except ValueError:
        continue
    if other.overlaps(net) and not other.is_loopback:
        seen.append(f"route {dst} dev {r.get('dev')}")
for a in addrs:
    if a.get("ifname") == bridge:
        continue
    for i in a.get("addr_info", []):
        other = ipaddress.ip_interface(f"{i['local']}/{i['prefixlen']}").network
        if other.overlaps(net) and not other.is_loopback:
            seen.append(f"address {i['local']}/{i['prefixlen']} on {a['ifname']}")
if seen:
    print(f"vcluster: error: subnet {net} overlaps {'; '.join(seen)} "
          f"(choose another with VCLUSTER_SUBNET)", file=sys.stderr)
    sys.exit(2)
EOF
}

wait_for() {   # wait_for SECONDS WHAT CMD...: poll CMD until it succeeds
  local t=$1 what=$2; shift 2
  local end=$((SECONDS + t))
  until "$@" >/dev/null 2>&1; do
    [ $SECONDS -lt $end ] || return 1
    sleep 0.2
  done
}

# ----------------------------------------------------------------- status --
# up_nodes: how many nodes the recorded cluster has, if all of it is running; else 0.
up_nodes() {
  local n; n=$(conf_get nodes)
  [ -n "$n" ] || { echo 0; return; }
  ours "$(cat "$DIR/slurm/slurmctld.pid" 2>/dev/null)" || { echo 0; return; }
  for k in $(seq 1 "$n"); do
    ours "$(holder_pid "$k")" || { echo 0; return; }
    ours "$(cat "$DIR/slurm/slurmd-node$k.pid" 2>/dev/null)" || { echo 0; return; }
    ours "$(cat "$DIR/run/sshd-node$k.pid" 2>/dev/null)" || { echo 0; return; }
  done
  echo "$n"
}

cmd_status() {
  local n; n=$(up_nodes)
  if [ "$n" = 0 ]; then
    if [ -n "$(leftovers)" ]; then
      say "not up; left over: $(leftovers | tr '\n' ' ')(scripts/vcluster.sh down removes them)"
    else
      say "not up"
    fi
    return 1
  fi
  say "up: $n nodes, links shaped to $(conf_get rate), subnet $SUBNET, state in $DIR"
  for k in $(seq 1 "$n"); do
    echo "  node$k $(node_ip "$k") holder $(holder_pid "$k")" \
         "sshd $(cat "$DIR/run/sshd-node$k.pid") slurmd $(cat "$DIR/slurm/slurmd-node$k.pid")"
  done
  echo "  slurmctld $(ctl_ip):$SLURMCTLD_PORT pid $(cat "$DIR/slurm/slurmctld.pid")"
  echo "  export SLURM_CONF=$DIR/slurm/slurm.conf"
  SLURM_CONF=$DIR/slurm/slurm.conf sinfo -N -h -o "  %N %T %c" 2>/dev/null || true
}

# What of ours exists in the system (outside the state directory).
leftovers() {
  ip netns list 2>/dev/null | awk -v p="$PREFIX" 'index($1, p) == 1 {print "netns:" $1}'
  ip -o link show 2>/dev/null | awk -F': ' -v b="$BRIDGE" -v p="$PREFIX" \
    '{split($2, a, "@"); if (a[1] == b || index(a[1], p) == 1) print "link:" a[1]}'
  for f in "$DIR"/run/*.pid "$DIR"/slurm/*.pid; do
    [ -e "$f" ] && ours "$(cat "$f")" && echo "process:$(cat "$f")($(basename "$f" .pid))"
  done
  true
}

# ------------------------------------------------------------------- down --
stop_pid() {   # stop_pid PID: TERM, up to 5 s, then KILL (only the cluster's own)
  local pid=$1
  ours "$pid" || return 0
  kill -TERM "$pid" 2>/dev/null || true
  for _ in $(seq 50); do alive "$pid" || return 0; sleep 0.1; done
  kill -KILL "$pid" 2>/dev/null || true
}

cmd_down() {
  # slurmctld first, so it does not requeue the jobs of nodes going away.
  stop_pid "$(cat "$DIR/slurm/slurmctld.pid" 2>/dev/null)"
  # Every process inside a node's network namespace is the cluster's (its holder,
  # sshd, slurmd, the jobs they started, and whatever `exec` ran there).
  local ns
  for ns in $(ip netns list 2>/dev/null | awk -v p="$PREFIX" 'index($1, p) == 1 {print $1}'); do
    local pids; pids=$(ip netns pids "$ns" 2>/dev/null || true)
    [ -n "$pids" ] && kill -TERM $pids 2>/dev/null || true
    for _ in $(seq 50); do
      [ -z "$(ip netns pids "$ns" 2>/dev/null)" ] && break
      sleep 0.1
    done
    pids=$(ip netns pids "$ns" 2>/dev/null || true)
    [ -n "$pids" ] && kill -KILL $pids 2>/dev/null || true
    ip netns del "$ns" 2>/dev/null || true
  done
  # Holders whose namespace was already removed (a half-made node).
  local f
  for f in "$DIR"/run/*.pid "$DIR"/slurm/*.pid; do
    [ -e "$f" ] && stop_pid "$(cat "$f")"
  done
  local l
  for l in $(ip -o link show 2>/dev/null | awk -F': ' -v p="$PREFIX" \
               '{split($2, a, "@"); if (index(a[1], p) == 1) print a[1]}'); do
    ip link del "$l" 2>/dev/null || true
  done
  ip link show "$BRIDGE" >/dev/null 2>&1 && ip link del "$BRIDGE"
  rm -rf "$DIR/run" "$DIR/slurm/state" "$DIR/slurm/spool" "$DIR/slurm/tmpfs" "$DIR/nodes"
  rm -f "$DIR"/slurm/*.pid
  local left; left=$(leftovers)
  [ -z "$left" ] || die "could not remove: $(echo "$left" | tr '\n' ' ')"
  say "down"
}

# --------------------------------------------------------------------- up --
write_ssh() {
  local n=$1 s=$DIR/ssh k
  mkdir -p "$s"
  [ -f "$s/host_ed25519" ] || ssh-keygen -q -t ed25519 -N '' -C vcluster-host -f "$s/host_ed25519"
  [ -f "$s/id_ed25519" ] || ssh-keygen -q -t ed25519 -N '' -C vcluster-root -f "$s/id_ed25519"
  cp "$s/id_ed25519.pub" "$s/authorized_keys"
  : > "$s/known_hosts"
  for k in $(seq 1 "$n"); do
    echo "node$k,$(node_ip "$k") $(cut -d' ' -f1-2 "$s/host_ed25519.pub")" >> "$s/known_hosts"
  done
  # The nodes' ssh client configuration (bound over /etc/ssh/ssh_config in every node).
  cat > "$s/ssh_config" <<EOF
# vcluster: the ssh client configuration inside the virtual nodes
Host *
  IdentityFile $s/id_ed25519
  IdentitiesOnly yes
  UserKnownHostsFile $s/known_hosts
  GlobalKnownHostsFile /dev/null
  StrictHostKeyChecking yes
  BatchMode yes
  ConnectTimeout 10
  LogLevel ERROR
  SendEnv LANG LC_*
EOF
  cat > "$s/sshd_config" <<EOF
# vcluster: each node's sshd (ListenAddress and PidFile are given per node)
Port 22
HostKey $s/host_ed25519
AuthorizedKeysFile $s/authorized_keys
PermitRootLogin prohibit-password
PubkeyAuthentication yes
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
# The state directory is under /tmp (world-writable), which StrictModes refuses.
StrictModes no
X11Forwarding no
PrintMotd no
AcceptEnv LANG LC_*
# mpirun and hydra open one session per node at once; the default limits are 10.
MaxStartups 200:30:400
MaxSessions 200
EOF
  chmod 600 "$s"/host_ed25519 "$s"/id_ed25519
}

write_hosts() {
  local n=$1 k
  {
    echo "127.0.0.1 localhost"
    echo "$(host_ip) $(hostname -s)"
    echo "$(ctl_ip) vcctl"
    for k in $(seq 1 "$n"); do echo "$(node_ip "$k") node$k"; done
  } > "$DIR/hosts"
}

write_slurm() {
  local n=$1 cpus=$2 s=$DIR/slurm k
  mkdir -p "$s/state" "$s/tmpfs" "$DIR/log"
  for k in $(seq 1 "$n"); do mkdir -p "$s/spool/node$k"; done
  {
    cat <<EOF
# vcluster: slurmctld on this machine (its own network namespace on the bridge),
# one slurmd per node
ClusterName=vcluster
SlurmctldHost=$(hostname -s)($(ctl_ip))
SlurmctldPort=$SLURMCTLD_PORT
SlurmdPort=$SLURMD_PORT
AuthType=auth/none
CredType=cred/none
SlurmUser=root
SlurmdUser=root
StateSaveLocation=$s/state
# Bound over by a private directory in each node (PMIx's per-job directories clash).
TmpFS=$s/tmpfs
SlurmdSpoolDir=$s/spool/%n
SlurmctldPidFile=$s/slurmctld.pid
SlurmdPidFile=$s/slurmd-%n.pid
SlurmctldLogFile=$DIR/log/slurmctld.log
SlurmdLogFile=$DIR/log/slurmd-%n.log
FirstJobId=$((RANDOM % 900 * 1000 + 1000))
ProctrackType=proctrack/pgid
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
MpiDefault=none
ReturnToService=2
SchedulerType=sched/builtin
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
MessageTimeout=10
SlurmdParameters=config_overrides
# Bounded load: no job runs longer than the partition's MaxTime (minutes).
KillWait=10
EOF
    for k in $(seq 1 "$n"); do
      echo "NodeName=node$k NodeAddr=$(node_ip "$k") CPUs=$cpus State=UNKNOWN"
    done
    echo "PartitionName=vc Nodes=node[1-$n] Default=YES DefaultTime=10 MaxTime=30 State=UP"
  } > "$s/slurm.conf"
}

rate_bits() {   # 1gbit -> 1000000000 (tc's units: bit or bps, with k, m or g)
  [[ ${1,,} =~ ^([0-9]+)([kmg]?)(bit|bps)$ ]] \
    || die "--rate: '$1' is not a rate such as 1gbit, 200mbit, 20mbit"
  local v=${BASH_REMATCH[1]}
  case ${BASH_REMATCH[2]} in
    k) v=$((v * 1000)) ;; m) v=$((v * 1000000)) ;; g) v=$((v * 1000000000)) ;;
  esac
  [ "${BASH_REMATCH[3]}" = bps ] && v=$((v * 8))
  [ "$v" -ge 100000 ] || die "--rate: $1 is below 100kbit"
  echo "$v"
}

# shape IFACE RATE [NETNS]: a token bucket on the interface's egress (both ends of a
# link get one, so each direction runs at RATE). The burst is 2 ms at RATE but at
# least 64 KiB (a veth hands over 64 KiB GSO packets).
shape() {
  local dev=$1 rate=$2 ns=${3:-} burst
  burst=$(($(rate_bits "$rate") / 8 / 500)); [ "$burst" -ge 65536 ] || burst=65536
  tc ${ns:+-n "$ns"} qdisc replace dev "$dev" root tbf rate "$rate" burst "$burst" latency 100ms
}

# link_up NETNS IP: a network namespace with one link to the bridge (its eth0), the
# subnet's route only (no default route), IPv6 off.
link_up() {
  local ns=$1 ip=$2
  ip netns add "$ns"
  ip link add "$ns" type veth peer name eth0 netns "$ns"
  sysctl -qw "net.ipv6.conf.$ns.disable_ipv6=1" 2>/dev/null || true
  ip link set "$ns" master "$BRIDGE" up
  ip -n "$ns" link set lo up
  nsenter --net="/run/netns/$ns" sysctl -qw net.ipv6.conf.eth0.disable_ipv6=1 2>/dev/null || true
  ip -n "$ns" addr add "$ip/24" dev eth0
  ip -n "$ns" link set eth0 up
}

start_node() {   # start_node K: namespaces, shaped link, holder, sshd, slurmd
  local k=$1 ns=${PREFIX}node$1 ip; ip=$(node_ip "$1")
  link_up "$ns" "$ip"
  shape "$ns" "$RATE"
  shape eth0 "$RATE" "$ns"
  mkdir -p "$DIR/nodes/node$k/tmpfs"
  # The holder keeps the node's UTS and mount namespaces alive; everything else on the
  # node enters its namespaces through it. A private /run (sshd's /run/sshd, as on a
  # host of its own); the cluster's /etc/hosts and ssh client configuration.
  nsenter --net="/run/netns/$ns" -- unshare --uts --mount --propagation private -- \
    /bin/bash -c '
      set -e
      hostname "$1"
      mount -t tmpfs -o mode=0755,size=16m vcluster-run /run
      mkdir -m 0755 /run/sshd
      mount --bind "$2/hosts" /etc/hosts
      mount --bind "$2/ssh/ssh_config" /etc/ssh/ssh_config
      mount --bind "$2/nodes/$1/tmpfs" "$2/slurm/tmpfs"
      echo $$ > "$2/run/$1.pid.new"
      mv "$2/run/$1.pid.new" "$2/run/$1.pid"
      exec -a "vcluster-holder $2/ $1" sleep infinity
    ' vcluster-holder "node$k" "$DIR" < /dev/null > "$DIR/log/holder-node$k.log" 2>&1 9>&- &
  wait_for 10 "node$k" test -s "$DIR/run/node$k.pid" \
    || die "node$k did not start: $(cat "$DIR/log/holder-node$k.log")"
  in_node "$k" /usr/sbin/sshd -f "$DIR/ssh/sshd_config" -o "ListenAddress=$ip" \
    -o "PidFile=$DIR/run/sshd-node$k.pid" -E "$DIR/log/sshd-node$k.log"
  in_node "$k" slurmd -f "$DIR/slurm/slurm.conf" -N "node$k"
}

cmd_up() {
  local n=4 rate=1gbit cpus=${VCLUSTER_CPUS:-4}
  while [ $# -gt 0 ]; do
    case $1 in
      --rate) [ $# -ge 2 ] || die "--rate needs a value (e.g. 1gbit, 20mbit)"; rate=$2; shift 2 ;;
      --rate=*) rate=${1#--rate=}; shift ;;
      [0-9]*) n=$1; shift ;;
      *) die "up: unknown argument '$1' (usage: up [N] [--rate RATE])" ;;
    esac
  done
  [[ $n =~ ^[0-9]+$ ]] && [ "$n" -ge 1 ] && [ "$n" -le $MAX_NODES ] \
    || die "N must be a number of nodes from 1 to $MAX_NODES, not '$n'"
  RATE=$rate
  rate_bits "$rate" >/dev/null
  for tool in ip tc nsenter unshare sshd slurmctld slurmd sinfo ssh-keygen; do
    command -v "$tool" >/dev/null || [ -x "/usr/sbin/$tool" ] \
      || die "$tool is missing: scripts/setup.sh installs what the cluster needs"
  done
  # Already up with N nodes: only the rate may change.
  if [ "$(up_nodes)" = "$n" ]; then
    if [ "$(conf_get rate)" != "$rate" ]; then
      for k in $(seq 1 "$n"); do
        shape "${PREFIX}node$k" "$rate"; shape eth0 "$rate" "${PREFIX}node$k"
      done
      sed -i "s/^rate=.*/rate=$rate/" "$DIR/run/cluster.conf"
      say "links reshaped to $rate"
    fi
    say "up: $n nodes (already)"
    return 0
  fi
  [ -z "$(leftovers)" ] || { say "taking down what is there first"; cmd_down; }
  check_subnet
  # A failed start leaves nothing behind but its logs.
  trap 'echo "vcluster: start failed; taking down what was made (logs in $DIR/log)" >&2; cmd_down >/dev/null 2>&1' EXIT
  mkdir -p "$DIR/run" "$DIR/log" "$DIR/nodes"
  rm -f "$DIR"/log/*
  # The switch: a bridge with this machine's address on it, forwarding nothing to
  # any other interface (per-interface forwarding off; the nodes have no default route).
  ip link add "$BRIDGE" type bridge
  sysctl -qw "net.ipv6.conf.$BRIDGE.disable_ipv6=1" 2>/dev/null || true
  sysctl -qw "net.ipv4.conf.$BRIDGE.forwarding=0"
  ip addr add "$(host_ip)/24" dev "$BRIDGE"
  ip link set "$BRIDGE" up
  printf 'nodes=%s\nrate=%s\nsubnet=%s\n' "$n" "$rate" "$SUBNET" > "$DIR/run/cluster.conf"
  write_hosts "$n"
  write_ssh "$n"
  write_slurm "$n" "$cpus"
  link_up "${PREFIX}ctl" "$(ctl_ip)"
  nsenter --net="/run/netns/${PREFIX}ctl" -- slurmctld -f "$DIR/slurm/slurm.conf" -c -i 9>&-
  for k in $(seq 1 "$n"); do start_node "$k"; done
  wait_for $START_TIMEOUT "nodes" all_idle "$n" \
    || die "the Slurm nodes did not come up: $(SLURM_CONF=$DIR/slurm/slurm.conf sinfo -N -h -o '%N %T' 2>&1 | tr '\n' ' ')(logs in $DIR/log)"
  for k in $(seq 1 "$n"); do
    wait_for 10 "sshd on node$k" in_node 1 ssh -n "node$k" true \
      || die "ssh from node1 to node$k fails (log: $DIR/log/sshd-node$k.log)"
  done
  trap - EXIT
  say "up: $n nodes node1..node$n on $SUBNET, links shaped to $rate; export SLURM_CONF=$DIR/slurm/slurm.conf"
}

all_idle() {
  local states
  states=$(SLURM_CONF=$DIR/slurm/slurm.conf sinfo -N -h -o '%T' 2>/dev/null) || return 1
  [ "$(echo "$states" | grep -c '^idle$')" = "$1" ]
}

lock() {   # one up/down at a time
  flock -w 300 9 || die "another scripts/vcluster.sh up/down holds $DIR/lock"
}

# ------------------------------------------------------------------- main --
[ $# -ge 1 ] || { usage; exit 2; }
case $1 in -h|--help|help) usage; exit 0 ;; esac
[ "$(id -u)" = 0 ] || die "must run as root (it makes network namespaces, a bridge and daemons)"
cmd=$1; shift
# The state directory is ours alone: `down` empties parts of it.
[[ $DIR == /?*/* || $DIR == /?* ]] && [ "$DIR" != / ] || die "VCLUSTER_DIR must be an absolute path, not '$DIR'"
if [ -d "$DIR" ] && [ ! -e "$DIR/.vcluster" ] && [ -n "$(ls -A "$DIR")" ]; then
  die "$DIR exists and is not a vcluster state directory (set VCLUSTER_DIR to another)"
fi
mkdir -p "$DIR"
touch "$DIR/.vcluster"
exec 9> "$DIR/lock"
case $cmd in
  up) lock; cmd_up "$@" ;;
  down) [ $# = 0 ] || die "down takes no arguments"; lock; cmd_down ;;
  status) cmd_status ;;
  env) [ "$(up_nodes)" != 0 ] || die "the cluster is not up"
       echo "SLURM_CONF=$DIR/slurm/slurm.conf"
       echo "VCLUSTER_NODES=$(conf_get nodes)" ;;
  exec)
    [ $# -ge 2 ] || die "usage: exec NODE [--] CMD..."
    node=$1; shift; [ "${1:-}" = "--" ] && shift
    [[ $node =~ ^node([0-9]+)$ ]] || die "exec: '$node' is not a node name (node1, node2, ...)"
    exec 9>&-
    k=${BASH_REMATCH[1]}; pid=$(holder_pid "$k")
    ours "$pid" || die "$node is not up"
    exec nsenter -t "$pid" --net --uts --mount --wd="$PWD" -- "$@" ;;
  *) die "unknown command '$cmd' (up, down, status, exec, env)" ;;
esac
