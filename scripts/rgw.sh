#!/usr/bin/env bash
# A throwaway single-node Ceph RGW (S3) on 127.0.0.1: monitor + one in-memory OSD + radosgw, no
# disks, no auth between daemons. For tests and benchmarks on machines without Docker.
#
#   scripts/rgw.sh start DIR   starts it in DIR (created if missing, must be empty) and prints one
#                              JSON line: {"endpoint","accessKeyId","secretAccessKey","region"}
#   scripts/rgw.sh stop DIR    stops every daemon started in DIR and removes DIR
#   scripts/rgw.sh gateway-kill DIR    SIGKILLs the S3 gateway (radosgw) alone: S3 goes down, while
#                                      the monitor and the OSD, and so the objects, stay
#   scripts/rgw.sh gateway-start DIR   starts the gateway again on its port; returns once it answers
#
# Everything (config, keyring, pid files, sockets, logs) lives in DIR. Ports are free ones picked by
# the kernel; RGW_PORT / RGW_MON_PORT are tried first when set. A start that fails stops whatever
# it started and removes DIR, after printing which step failed and the tail of that daemon's log.
# Objects live in memory: RGW_MEMSTORE_BYTES caps them (default 2 GiB; a full store blocks writes).
# Needs (Debian 12): apt-get install -y --no-install-recommends ceph-mon ceph-osd radosgw ceph-common
set -euo pipefail

cmd=${1:-}
dir=${2:-}
[[ -n "$cmd" && -n "$dir" ]] || { echo "usage: $0 start|stop|gateway-kill|gateway-start DIR" >&2; exit 2; }

ACCESS_KEY=artifactstoretest
SECRET_KEY=artifact-store-test-secret-key-0123456789
WAIT=60     # seconds allowed for each step
MARKER=.rgw-sh

# --- stopping --------------------------------------------------------------------------------------

# True while process $1 exists and has not exited (a zombie waiting to be reaped counts as gone).
alive() {
  local stat
  stat=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
  stat=${stat##*) }   # drop "pid (comm) "; the state letter comes next
  [[ ${stat:0:1} != Z ]]
}

# Pids of the processes started in $dir: those with an argument equal to $dir/ceph.conf (every
# daemon and client gets "-c $dir/ceph.conf"). This finds the daemons of the pid files in $dir/run,
# one that died before writing its pid file, and a hung client, and never a recycled pid.
dir_pids() {
  # The pattern comes from a file so that grep does not find its own command line.
  { grep -lzxFf <(echo "$dir/ceph.conf") /proc/[0-9]*/cmdline 2>/dev/null || true; } \
    | tr '\0' '\n' | sed -n 's|^/proc/\([0-9]*\)/cmdline$|\1|p'
}

# SIGKILL: everything lives in memory and is thrown away, and a graceful exit takes 5-10 s
# (radosgw and the OSD wait on each other). Returns once the processes are gone (at most 5 s).
kill_all() {
  local pid i left
  for pid in "$@"; do kill -9 "$pid" 2>/dev/null || true; done
  for ((i = 0; i < 50; i++)); do
    left=0
    for pid in "$@"; do alive "$pid" && left=1; done
    ((left)) || return 0
    sleep 0.1
  done
}

# Stops the daemon of pid file $1, if any, and removes the file.
stop_pidfile() {
  local pid
  pid=$(cat "$1" 2>/dev/null) || return 0
  kill_all "$pid"
  rm -f "$1"
}

stop() {
  [[ -d "$dir" ]] || return 0
  # shellcheck disable=SC2046  # one pid per word
  kill_all $(dir_pids | sort -u)
  # Only remove a directory this script populated (or an empty one): never an arbitrary path.
  if [[ -f "$dir/$MARKER" || -z "$(ls -A "$dir")" ]]; then
    rm -rf "$dir"
  else
    echo "rgw.sh: $dir was not made by rgw.sh start; daemons stopped, directory left in place" >&2
  fi
}

if [[ "$cmd" == stop ]]; then
  [[ -d "$dir" ]] && dir=$(cd "$dir" && pwd)
  stop
  exit 0
fi
if [[ "$cmd" == gateway-kill || "$cmd" == gateway-start ]]; then
  [[ -f "$dir/$MARKER" && -f "$dir/rgw.port" ]] || { echo "rgw.sh: $dir is not a running rgw.sh start" >&2; exit 2; }
  dir=$(cd "$dir" && pwd)
fi
if [[ "$cmd" == gateway-kill ]]; then
  stop_pidfile "$dir/run/client.rgw.a.pid"
  exit 0
fi
[[ "$cmd" == start || "$cmd" == gateway-start ]] || { echo "rgw.sh: unknown command '$cmd' (start|stop|gateway-kill|gateway-start)" >&2; exit 2; }

# --- starting --------------------------------------------------------------------------------------

for bin in ceph-mon ceph-osd radosgw ceph-authtool monmaptool ceph radosgw-admin python3 timeout; do
  command -v "$bin" >/dev/null || {
    echo "rgw.sh: $bin not found; install: apt-get install -y --no-install-recommends ceph-mon ceph-osd radosgw ceph-common" >&2
    exit 3
  }
done

if [[ "$cmd" == start ]]; then
  mkdir -p "$dir"
  dir=$(cd "$dir" && pwd)
  [[ -z "$(ls -A "$dir")" ]] || { echo "rgw.sh: $dir is not empty" >&2; exit 2; }
  touch "$dir/$MARKER"
  mkdir -p "$dir"/{run,log,mon,osd,rgw}
  step=setup   # what is being started, for the failure message
  step_log=""  # that step's log

  # Any failure from here on (a failed command, a timeout, SIGINT/SIGTERM) stops what was started.
  finished=0
  interrupted=0
  on_exit() {
    local rc=$?
    ((finished)) && return
    if ((interrupted)); then
      echo "rgw.sh: start interrupted during: $step" >&2
    else
      echo "rgw.sh: start failed during: $step (exit $rc)" >&2
    fi
    if [[ -n "$step_log" && -s "$step_log" ]]; then
      echo "--- last lines of ${step_log#"$dir"/} (in $dir, removed):" >&2
      tail -n 25 "$step_log" >&2
    fi
    stop
  }
  trap on_exit EXIT
  trap 'interrupted=1; exit 130' INT TERM
fi
conf="$dir/ceph.conf"

fail() { echo "rgw.sh: $*" >&2; exit 1; }

# A port nobody listens on: $1 if given and free, else one the kernel picks.
free_port() {
  python3 - "${1:-0}" <<'PY'
import socket, sys
s = socket.socket()
try:
    s.bind(("127.0.0.1", int(sys.argv[1])))
except OSError:
    s.bind(("127.0.0.1", 0))
print(s.getsockname()[1])
PY
}

# wait_until PIDFILE CHECK...: runs CHECK until it succeeds, for at most $WAIT s (then returns 1).
# Returns 2 early when the daemon behind PIDFILE has exited, or when $step_log has a line containing
# $give_up (set it for a daemon that can die before writing its pid file).
give_up=""
wait_until() {
  local pidfile=$1 deadline=$((SECONDS + WAIT)) pid
  shift
  until "$@"; do
    pid=$(cat "$pidfile" 2>/dev/null || true)
    if [[ -n "$pid" ]] && ! alive "$pid"; then return 2; fi
    if [[ -n "$give_up" ]] && grep -qF -- "$give_up" "$step_log" 2>/dev/null; then return 2; fi
    ((SECONDS < deadline)) || return 1
    sleep 0.25
  done
}

write_conf() {
  cat >"$conf" <<EOF
[global]
fsid = $fsid
mon host = v2:127.0.0.1:$mon_port
mon initial members = a
auth cluster required = none
auth service required = none
auth client required = none
auth allow insecure global id reclaim = true
osd pool default size = 1
osd pool default min size = 1
osd pool default pg num = 8
osd pool default pgp num = 8
mon allow pool size one = true
mon warn on pool no redundancy = false
osd crush chooseleaf type = 0
ms bind ipv6 = false
run dir = $dir/run
pid file = $dir/run/\$name.pid
admin socket = $dir/run/\$name.asok
log file = $dir/log/\$name.log
keyring = $dir/keyring
mon data = $dir/mon/\$name
osd data = $dir/osd/\$name

[mon]
# A taken port fails at once (instead of 3 tries 5 s apart), so another one can be tried.
ms bind retry count = 1
# Commit map changes at once instead of batching them over 1 s: RGW creates its pools one change
# after another, and start-up takes ~2 s instead of ~13 s.
paxos propose interval = 0.05

[osd]
osd objectstore = memstore
memstore device bytes = ${RGW_MEMSTORE_BYTES:-2147483648}
osd max object name len = 256
osd max object namespace len = 64

[client.rgw.a]
# Deleted objects' data is freed by RGW's garbage collector: run it often, without the usual 2 h wait.
rgw gc obj min wait = 0
rgw gc processor period = 5
rgw gc processor max time = 5
rgw data = $dir/rgw
log file = $dir/log/rgw.log
EOF
}

# Every client talks "crc" to the daemons: with auth off, the default "secure" mode is never offered
# and radosgw / radosgw-admin would wait 300 s for it.
crc=(--ms-mon-client-mode=crc --ms-client-mode=crc)
ceph_cli=(timeout "$WAIT" ceph -c "$conf" "${crc[@]}" --connect-timeout=10)
# Redirections go on the commands, never on a function call: a function called with one runs with
# the script's own stderr redirected, and the failure message of a SIGTERM arriving then is lost.
mon_answers() { "${ceph_cli[@]}" health >/dev/null 2>&1; }
osd_up() { "${ceph_cli[@]}" osd stat -f json 2>/dev/null | grep -q '"num_up_osds":1'; }
# Our radosgw (not whoever else may hold the port) listens on $rgw_port and answers HTTP.
s3_answers() {
  [[ -f "$dir/run/client.rgw.a.pid" ]] || return 1
  python3 - "$(<"$dir/run/client.rgw.a.pid")" "$rgw_port" 2>/dev/null <<'PY'
import os, sys, urllib.request
pid, port = sys.argv[1], int(sys.argv[2])
local = "0100007F:%04X" % port  # 127.0.0.1:port as /proc/net/tcp spells it
listening = {f[9] for f in (l.split() for l in open("/proc/net/tcp").readlines()[1:]) if f[1] == local and f[3] == "0A"}
fds = {os.readlink(f"/proc/{pid}/fd/{fd}") for fd in os.listdir(f"/proc/{pid}/fd")}
if not any(f"socket:[{inode}]" in fds for inode in listening):
    sys.exit(1)
urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=2)
PY
}

# radosgw on $rgw_port, retried on a taken port unless $1 is "fixed"; returns once it answers.
start_gateway() {
  local attempt rc
  step="S3 gateway (radosgw)"
  step_log="$dir/log/rgw.log"
  for attempt in 1 2 3; do
    [[ "${1:-}" == fixed ]] || rgw_port=$(free_port "${RGW_PORT:-0}")
    # It daemonizes before binding: a taken port shows only in its log, and it exits without a pid file.
    give_up="failed to bind address 127.0.0.1:$rgw_port"
    timeout "$WAIT" radosgw -c "$conf" -n client.rgw.a "${crc[@]}" --client-mount-timeout=10 \
      --rgw-frontends="beast endpoint=127.0.0.1:$rgw_port" 2>>"$dir/log/rgw-start.log" \
      || fail "radosgw did not start"
    rc=0; wait_until "$dir/run/client.rgw.a.pid" s3_answers || rc=$?
    ((rc == 0)) && return 0
    if ((rc == 2 && attempt < 3)) && [[ "${1:-}" != fixed ]] && grep -qF -- "$give_up" "$step_log"; then
      stop_pidfile "$dir/run/client.rgw.a.pid"
      continue
    fi
    fail "radosgw is not answering on port $rgw_port ($( ((rc == 2)) && echo 'it exited' || echo "after $WAIT s"))"
  done
}

if [[ "$cmd" == gateway-start ]]; then
  rgw_port=$(<"$dir/rgw.port")
  # The log of the last run says "failed to bind" only if this run fails to: start it afresh.
  : >"$dir/log/rgw.log"
  start_gateway fixed
  exit 0
fi

started_at=$SECONDS
fsid=$(cat /proc/sys/kernel/random/uuid)

# Monitor. Its port is written into the monmap and ceph.conf; on a port taken meanwhile, retry.
step="monitor (ceph-mon)"
step_log="$dir/log/mon.a.log"
ceph-authtool --create-keyring "$dir/keyring" --gen-key -n mon. --cap mon 'allow *' >/dev/null
ceph-authtool "$dir/keyring" --gen-key -n client.admin --cap mon 'allow *' --cap osd 'allow *' --cap mgr 'allow *' >/dev/null
for attempt in 1 2 3; do
  mon_port=$(free_port "${RGW_MON_PORT:-0}")
  write_conf
  rm -rf "$dir/mon/mon.a" "$dir/monmap" "$step_log"
  monmaptool --create --fsid "$fsid" --addv a "[v2:127.0.0.1:$mon_port]" "$dir/monmap" >/dev/null
  timeout "$WAIT" ceph-mon -c "$conf" --mkfs -i a --monmap "$dir/monmap" --keyring "$dir/keyring" >"$dir/log/mon-mkfs.log" 2>&1 \
    || { step_log="$dir/log/mon-mkfs.log"; fail "ceph-mon --mkfs failed"; }
  # It daemonizes once bound; a bind failure makes it exit non-zero right away.
  timeout "$WAIT" ceph-mon -c "$conf" -i a 2>>"$dir/log/mon-start.log" && break
  grep -q 'Address already in use' "$step_log" 2>/dev/null && ((attempt < 3)) && continue
  fail "ceph-mon did not start on port $mon_port"
done
rc=0; wait_until "$dir/run/mon.a.pid" mon_answers || rc=$?
((rc == 0)) || fail "the monitor is not answering on port $mon_port ($( ((rc == 2)) && echo 'it exited' || echo "after $WAIT s"))"

# One OSD, in memory.
step="OSD (ceph-osd)"
step_log="$dir/log/osd-setup.log"
osd_uuid=$(cat /proc/sys/kernel/random/uuid)
osd_id=$("${ceph_cli[@]}" osd new "$osd_uuid" 2>>"$step_log") || fail "'ceph osd new' failed"
mkdir -p "$dir/osd/osd.$osd_id"
timeout "$WAIT" ceph-osd -c "$conf" -i "$osd_id" --mkfs --osd-uuid "$osd_uuid" >>"$step_log" 2>&1 || fail "ceph-osd --mkfs failed"
step_log="$dir/log/osd.$osd_id.log"
timeout "$WAIT" ceph-osd -c "$conf" -i "$osd_id" 2>>"$dir/log/osd-start.log" || fail "ceph-osd did not start"
rc=0; wait_until "$dir/run/osd.$osd_id.pid" osd_up || rc=$?
((rc == 0)) || fail "the OSD is not up ($( ((rc == 2)) && echo 'it exited' || echo "after $WAIT s"))"

# The S3 gateway. Its port is given on the command line so it is picked just before the bind.
start_gateway
echo "$rgw_port" >"$dir/rgw.port"

step="creating the S3 user (radosgw-admin)"
step_log="$dir/log/user.log"
timeout "$WAIT" radosgw-admin -c "$conf" "${crc[@]}" user create --uid=test --display-name=test \
  --access-key="$ACCESS_KEY" --secret-key="$SECRET_KEY" >"$step_log" 2>&1 || fail "radosgw-admin user create failed"

finished=1
echo "rgw.sh: Ceph RGW up in $((SECONDS - started_at)) s (mon :$mon_port, S3 :$rgw_port, $dir)" >&2
printf '{"endpoint":"http://127.0.0.1:%s","accessKeyId":"%s","secretAccessKey":"%s","region":"us-east-1"}\n' \
  "$rgw_port" "$ACCESS_KEY" "$SECRET_KEY"
