#!/usr/bin/env bash
# A throwaway single-node Ceph RGW (S3) on 127.0.0.1: monitor + one in-memory OSD + radosgw, no
# disks, no auth between daemons. For tests and benchmarks on machines without Docker.
#
#   scripts/rgw.sh start DIR   starts it in DIR (created), prints one JSON line:
#                              {"endpoint","accessKeyId","secretAccessKey","region"}
#   scripts/rgw.sh stop DIR    stops every daemon started in DIR and removes DIR
#
# Objects live in memory: RGW_MEMSTORE_BYTES caps them (default 2 GiB; a full store blocks writes).
# Needs: apt-get install -y --no-install-recommends ceph-mon ceph-osd radosgw ceph-common
set -euo pipefail

cmd=${1:-}
dir=${2:-}
[[ -n "$cmd" && -n "$dir" ]] || { echo "usage: $0 start|stop DIR" >&2; exit 2; }

ACCESS_KEY=artifactstoretest
SECRET_KEY=artifact-store-test-secret-key-0123456789

stop() {
  [[ -d "$dir" ]] || return 0
  for pidfile in "$dir"/run/*.pid; do
    [[ -f "$pidfile" ]] || continue
    pid=$(cat "$pidfile" 2>/dev/null || true)
    [[ -n "$pid" ]] && kill "$pid" 2>/dev/null || true
  done
  # Give them a moment, then make sure.
  for _ in $(seq 1 20); do
    alive=0
    for pidfile in "$dir"/run/*.pid; do
      [[ -f "$pidfile" ]] || continue
      pid=$(cat "$pidfile" 2>/dev/null || true)
      [[ -n "$pid" ]] && kill -0 "$pid" 2>/dev/null && alive=1
    done
    [[ $alive == 0 ]] && break
    sleep 0.25
  done
  for pidfile in "$dir"/run/*.pid; do
    [[ -f "$pidfile" ]] || continue
    pid=$(cat "$pidfile" 2>/dev/null || true)
    [[ -n "$pid" ]] && kill -9 "$pid" 2>/dev/null || true
  done
  rm -rf "$dir"
}

if [[ "$cmd" == stop ]]; then
  stop
  exit 0
fi
[[ "$cmd" == start ]] || { echo "unknown command $cmd" >&2; exit 2; }

for bin in ceph-mon ceph-osd radosgw ceph-authtool monmaptool ceph radosgw-admin curl node; do
  command -v "$bin" >/dev/null || { echo "rgw.sh: $bin not found; install ceph-mon ceph-osd radosgw ceph-common" >&2; exit 3; }
done

fail() {
  echo "rgw.sh: $1" >&2
  [[ -n "${2:-}" && -f "$2" ]] && tail -n 20 "$2" >&2
  stop
  exit 1
}
trap 'fail "interrupted"' INT TERM

free_port() {
  node -e 'const s = require("node:net").createServer().listen(0, "127.0.0.1", () => { console.log(s.address().port); s.close(); })'
}

# Waits up to $2 seconds for command $1 to succeed.
wait_for() {
  local deadline=$((SECONDS + $2))
  until eval "$1" >/dev/null 2>&1; do
    (( SECONDS < deadline )) || return 1
    sleep 0.2
  done
}

mkdir -p "$dir"/{run,log,mon,osd}
dir=$(cd "$dir" && pwd)
mon_port=$(free_port)
rgw_port=$(free_port)
conf="$dir/ceph.conf"
fsid=$(cat /proc/sys/kernel/random/uuid)

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

[osd]
osd objectstore = memstore
memstore device bytes = ${RGW_MEMSTORE_BYTES:-2147483648}
osd max object name len = 256
osd max object namespace len = 64

[client.rgw.a]
rgw frontends = beast endpoint=127.0.0.1:$rgw_port
# Deleted objects' data is freed by RGW's garbage collector: run it often, without the usual 2 h wait.
rgw gc obj min wait = 0
rgw gc processor period = 5
rgw gc processor max time = 5
rgw data = $dir/rgw
log file = $dir/log/rgw.log
EOF

ceph=(ceph -c "$conf" --ms-mon-client-mode=crc --ms-client-mode=crc --connect-timeout=10)

# Monitor.
ceph-authtool --create-keyring "$dir/keyring" --gen-key -n mon. --cap mon 'allow *' >/dev/null
ceph-authtool "$dir/keyring" --gen-key -n client.admin --cap mon 'allow *' --cap osd 'allow *' --cap mgr 'allow *' >/dev/null
monmaptool --create --fsid "$fsid" --addv a "[v2:127.0.0.1:$mon_port]" "$dir/monmap" >/dev/null
ceph-mon -c "$conf" --mkfs -i a --monmap "$dir/monmap" --keyring "$dir/keyring" >"$dir/log/mkfs-mon.log" 2>&1 || fail "ceph-mon --mkfs failed" "$dir/log/mkfs-mon.log"
ceph-mon -c "$conf" -i a || fail "ceph-mon did not start" "$dir/log/mon.a.log"
wait_for "${ceph[*]} health" 30 || fail "the monitor is not answering after 30 s" "$dir/log/mon.a.log"

# One OSD in memory.
osd_uuid=$(cat /proc/sys/kernel/random/uuid)
osd_id=$("${ceph[@]}" osd new "$osd_uuid")
mkdir -p "$dir/osd/osd.$osd_id"
ceph-osd -c "$conf" -i "$osd_id" --mkfs --osd-uuid "$osd_uuid" >"$dir/log/mkfs-osd.log" 2>&1 || fail "ceph-osd --mkfs failed" "$dir/log/mkfs-osd.log"
ceph-osd -c "$conf" -i "$osd_id" || fail "ceph-osd did not start" "$dir/log/osd.$osd_id.log"
wait_for "${ceph[*]} osd stat | grep -q '1 up'" 60 || fail "the OSD is not up after 60 s" "$dir/log/osd.$osd_id.log"

# The S3 gateway. Without the crc modes it waits 300 s for a secure mode the cluster does not offer.
mkdir -p "$dir/rgw"
radosgw -c "$conf" -n client.rgw.a --ms-mon-client-mode=crc --ms-client-mode=crc --client-mount-timeout=10 \
  || fail "radosgw did not start" "$dir/log/rgw.log"
wait_for "curl -sf -o /dev/null http://127.0.0.1:$rgw_port/" 60 || fail "radosgw is not answering on port $rgw_port after 60 s" "$dir/log/rgw.log"

radosgw-admin -c "$conf" --ms-mon-client-mode=crc --ms-client-mode=crc user create --uid=test --display-name=test \
  --access-key="$ACCESS_KEY" --secret-key="$SECRET_KEY" >"$dir/log/user.log" 2>&1 || fail "creating the S3 user failed" "$dir/log/user.log"

trap - INT TERM
printf '{"endpoint":"http://127.0.0.1:%s","accessKeyId":"%s","secretAccessKey":"%s","region":"us-east-1"}\n' "$rgw_port" "$ACCESS_KEY" "$SECRET_KEY"
