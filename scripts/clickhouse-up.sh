#!/usr/bin/env bash
# Starts a private ClickHouse for the tests and the bench, the way shared/notes/services.md
# describes: Debian's service script does not run here, so the stock config is copied into
# a data dir with its own ports and paths, and the server is started by hand.
# Usage: scripts/clickhouse-up.sh [data-dir] [http-port]   (defaults /tmp/herald-clickhouse 18123)
# Installs clickhouse-server from Debian's packages when it is missing. Idempotent.
set -euo pipefail
dir=${1:-/tmp/herald-clickhouse}
http=${2:-18123}
tcp=$((http + 1)) inter=$((http + 2))

up() { curl -fsS "http://127.0.0.1:$http/ping" >/dev/null 2>&1; }
up && exit 0

if [ ! -x /usr/bin/clickhouse-server ] && [ ! -x /usr/sbin/clickhouse-server ]; then
  echo "installing clickhouse-server" >&2
  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq clickhouse-server clickhouse-client) >/dev/null
fi
bin=$(command -v clickhouse-server || echo /usr/sbin/clickhouse-server)

mkdir -p "$dir"/{data,tmp,user_files,format_schemas,log}
cp /etc/clickhouse-server/users.xml "$dir/users.xml"
sed -e "s#<http_port>[0-9]*</http_port>#<http_port>$http</http_port>#" \
    -e "s#<tcp_port>[0-9]*</tcp_port>#<tcp_port>$tcp</tcp_port>#" \
    -e "s#<tcp_port_secure>[0-9]*</tcp_port_secure>##" \
    -e "s#<interserver_http_port>[0-9]*</interserver_http_port>#<interserver_http_port>$inter</interserver_http_port>#" \
    -e "s#<path>/var/lib/clickhouse/</path>#<path>$dir/data/</path>#" \
    -e "s#<tmp_path>[^<]*</tmp_path>#<tmp_path>$dir/tmp/</tmp_path>#" \
    -e "s#<user_files_path>[^<]*</user_files_path>#<user_files_path>$dir/user_files/</user_files_path>#" \
    -e "s#<format_schema_path>[^<]*</format_schema_path>#<format_schema_path>$dir/format_schemas/</format_schema_path>#" \
    -e "s#<log>[^<]*</log>#<log>$dir/log/server.log</log>#" \
    -e "s#<errorlog>[^<]*</errorlog>#<errorlog>$dir/log/server.err.log</errorlog>#" \
    -e "s#<users_config>[^<]*</users_config>#<users_config>$dir/users.xml</users_config>#" \
    -e "s#<!-- <listen_host>0.0.0.0</listen_host> -->#<listen_host>127.0.0.1</listen_host>#" \
    /etc/clickhouse-server/config.xml > "$dir/config.xml"

cd "$dir"
nohup "$bin" --config-file="$dir/config.xml" >"$dir/log/stdout.log" 2>&1 &
echo $! > "$dir/pid"
for _ in $(seq 1 60); do up && exit 0; sleep 0.5; done
echo "ClickHouse did not answer on 127.0.0.1:$http; see $dir/log" >&2
exit 1
