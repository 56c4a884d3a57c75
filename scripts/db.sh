#!/usr/bin/env bash
# db.sh - PostgreSQL bootstrap for chainlens (used by `make run` / `make test`).
#
# Usage:
#   scripts/db.sh ensure [DBNAME]  print a working postgres URL for DBNAME
#                                  (default: chainlens); nothing else on stdout
#   scripts/db.sh stop             stop the private cluster if it is running
#   scripts/db.sh status           show which path `ensure` would take
#
# `ensure` resolves, in this order:
#   1. $DATABASE_URL, if set: verified to connect, printed unchanged
#      (DBNAME is ignored);
#   2. a server answering on 127.0.0.1:5432 that accepts user postgres without
#      a password (skipped when CHAINLENS_PG_PRIVATE=1): DBNAME is created if
#      missing; the server's configuration is never touched;
#   3. a private cluster under $CHAINLENS_PG_DIR (default: <repo>/.data/pg),
#      listening only on 127.0.0.1:${CHAINLENS_PG_PORT:-55432} with trust auth,
#      created with Debian's /usr/lib/postgresql/<ver>/bin binaries and started
#      on demand; an already running cluster is reused.
#
# Private cluster layout ($CHAINLENS_PG_DIR):
#   data/          PGDATA (owned by the postgres user when run as root)
#   run/           unix socket directory
#   postgres.log   server log
#   initdb.log     output of the initdb that created data/
#   .lock          serialises concurrent ensure/stop calls (flock)
#
# All diagnostics go to stderr.
set -euo pipefail

readonly PG_USER=postgres
readonly SYSTEM_HOST=127.0.0.1
readonly SYSTEM_PORT=5432
readonly DEFAULT_DB=chainlens

SCRIPT_DIR=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd)
REPO_ROOT=$(dirname -- "$SCRIPT_DIR")
readonly SCRIPT_DIR REPO_ROOT

PG_DIR=${CHAINLENS_PG_DIR:-$REPO_ROOT/.data/pg}
[[ $PG_DIR == /* ]] || PG_DIR=$PWD/$PG_DIR
PG_DIR=${PG_DIR%/}
readonly PG_DIR
readonly PG_DATA=$PG_DIR/data
readonly PG_RUN=$PG_DIR/run
readonly PG_LOG=$PG_DIR/postgres.log
readonly PG_LOCK=$PG_DIR/.lock
readonly PG_PORT=${CHAINLENS_PG_PORT:-55432}

# Never hang on an unreachable server.
export PGCONNECT_TIMEOUT=${PGCONNECT_TIMEOUT:-5}

log() { printf 'db.sh: %s\n' "$*" >&2; }
die() {
	log "error: $*"
	exit 1
}

usage() {
	sed -n '2,9s/^# \{0,1\}//p' "${BASH_SOURCE[0]}" >&2
	exit "${1:-2}"
}

is_root() { [[ $(id -u) -eq 0 ]]; }

# redact hides the password of a URL for log messages.
redact() { sed -E 's#(://[^:/@]*):[^@/]*@#\1:***@#' <<<"$1"; }

# local_url PORT DB prints the URL of DB on the loopback server at PORT.
local_url() { printf 'postgres://%s@127.0.0.1:%s/%s?sslmode=disable\n' "$PG_USER" "$1" "$2"; }

# pg_tool NAME prints the path of a PostgreSQL client tool: from PATH, else
# the newest one under /usr/lib/postgresql/*/bin.
pg_tool() {
	local name=$1 found
	if found=$(command -v "$name" 2>/dev/null); then
		printf '%s\n' "$found"
		return 0
	fi
	newest_lib_tool "$name"
}

# newest_lib_tool NAME prints /usr/lib/postgresql/<newest>/bin/NAME.
newest_lib_tool() {
	local found
	found=$(compgen -G "/usr/lib/postgresql/*/bin/$1" | sort -V | tail -n 1) || true
	[[ -n $found && -x $found ]] || return 1
	printf '%s\n' "$found"
}

# port_open HOST PORT succeeds if something accepts TCP connections there.
port_open() { (exec 3<>"/dev/tcp/$1/$2") 2>/dev/null; }

# server_answers HOST PORT succeeds if a PostgreSQL server accepts connections.
server_answers() {
	local isready
	if isready=$(pg_tool pg_isready); then
		"$isready" -q -h "$1" -p "$2" -t 3
	else
		port_open "$1" "$2"
	fi
}

# psql_at URL ARGS... runs psql non-interactively against URL.
psql_at() {
	local psql url=$1
	shift
	psql=$(pg_tool psql) || die "psql not found (apt-get install postgresql-client)"
	"$psql" -X -w -q -v ON_ERROR_STOP=1 -d "$url" "$@"
}

validate_db() {
	[[ $1 =~ ^[A-Za-z0-9_][A-Za-z0-9_-]{0,62}$ ]] ||
		die "invalid database name '$1' (allowed: letters, digits, _ and -, at most 63)"
}

validate_port() {
	if ! [[ $PG_PORT =~ ^[1-9][0-9]{0,4}$ ]] || ((PG_PORT < 1 || PG_PORT > 65535)); then
		die "invalid CHAINLENS_PG_PORT '$PG_PORT'"
	fi
}

# create_db PORT DB creates DB on the loopback server at PORT if missing.
create_db() {
	local port=$1 db=$2 admin exists
	admin=$(local_url "$port" postgres)
	exists=$(psql_at "$admin" -At -c "SELECT 1 FROM pg_database WHERE datname = '$db'") ||
		die "cannot query databases on 127.0.0.1:$port"
	[[ $exists == 1 ]] && return 0
	log "creating database $db on 127.0.0.1:$port"
	if ! psql_at "$admin" -c "CREATE DATABASE \"$db\"" >&2; then
		# A concurrent ensure may have won the race.
		exists=$(psql_at "$admin" -At -c "SELECT 1 FROM pg_database WHERE datname = '$db'") || true
		[[ $exists == 1 ]] || die "cannot create database $db on 127.0.0.1:$port"
	fi
}

# --- path 1: DATABASE_URL ---------------------------------------------------

verify_database_url() {
	local psql isready shown
	shown=$(redact "$DATABASE_URL")
	if psql=$(pg_tool psql); then
		"$psql" -X -w -q -At -d "$DATABASE_URL" -c 'SELECT 1' >/dev/null ||
			die "DATABASE_URL ($shown) does not connect; fix it or unset it to use the local bootstrap"
	elif isready=$(pg_tool pg_isready); then
		"$isready" -q -d "$DATABASE_URL" -t 5 ||
			die "DATABASE_URL ($shown) does not answer; fix it or unset it to use the local bootstrap"
	else
		log "warning: neither psql nor pg_isready found; using DATABASE_URL ($shown) unverified"
	fi
}

# --- path 2: server on 127.0.0.1:5432 -----------------------------------------

# system_usable succeeds if the server on 127.0.0.1:5432 should be used.
system_usable() {
	[[ ${CHAINLENS_PG_PRIVATE:-} == 1 ]] && return 1
	pg_tool psql >/dev/null || return 1
	server_answers "$SYSTEM_HOST" "$SYSTEM_PORT" || return 1
	if ! psql_at "$(local_url "$SYSTEM_PORT" postgres)" -At -c 'SELECT 1' >/dev/null 2>&1; then
		log "a server answers on $SYSTEM_HOST:$SYSTEM_PORT but refuses user $PG_USER without a password; using the private cluster"
		return 1
	fi
}

# --- path 3: private cluster ---------------------------------------------------

# as_owner CMD... runs CMD as the cluster owner (postgres when root, else the
# caller), from inside PG_DIR, without the lock descriptor (a daemon that
# inherited it would hold the lock forever).
as_owner() {
	if is_root; then
		(cd -- "$PG_DIR" && runuser -u "$PG_USER" -- "$@") 9>&-
	else
		(cd -- "$PG_DIR" && "$@") 9>&-
	fi
}

# give_to_owner PATH... hands files to the postgres user when root.
give_to_owner() {
	if is_root; then
		chown -- "$PG_USER:" "$@"
	fi
}

lock_private() {
	mkdir -p -- "$PG_DIR"
	exec 9>>"$PG_LOCK"
	if command -v flock >/dev/null 2>&1; then
		flock -w 120 9 || die "timed out waiting for $PG_LOCK"
	else
		log "warning: flock not found; concurrent calls are not serialised"
	fi
}

cluster_version() { [[ -f $PG_DATA/PG_VERSION ]] && cat -- "$PG_DATA/PG_VERSION"; }

# cluster_pid prints the postmaster pid if the pid file names a live process.
cluster_pid() {
	local pid
	[[ -f $PG_DATA/postmaster.pid ]] || return 1
	pid=$(sed -n 1p -- "$PG_DATA/postmaster.pid" 2>/dev/null) || return 1
	[[ $pid =~ ^[0-9]+$ ]] && [[ -d /proc/$pid ]] || return 1
	printf '%s\n' "$pid"
}

# cluster_running BINDIR succeeds if the private cluster's postmaster runs.
cluster_running() {
	local bin=${1:-}
	if [[ -n $bin && -x $bin/pg_ctl ]]; then
		as_owner "$bin/pg_ctl" status -D "$PG_DATA" >/dev/null 2>&1
	else
		cluster_pid >/dev/null
	fi
}

# cluster_port prints the port the running cluster listens on.
cluster_port() { sed -n 4p -- "$PG_DATA/postmaster.pid"; }

install_server() {
	is_root || die "PostgreSQL server binaries not found under /usr/lib/postgresql/*/bin;" \
		"install them (sudo apt-get install -y postgresql) or set DATABASE_URL"
	command -v apt-get >/dev/null 2>&1 ||
		die "PostgreSQL server binaries not found and apt-get is unavailable; install PostgreSQL or set DATABASE_URL"
	log "PostgreSQL server binaries not found; installing the postgresql package"
	{
		apt-get update &&
			DEBIAN_FRONTEND=noninteractive apt-get install -y postgresql
	} >&2 || die "apt-get install postgresql failed"
}

# server_bindir prints the bin directory to run the private cluster with: the
# one matching an existing cluster's version, else the newest installed
# (installing PostgreSQL if needed and possible).
server_bindir() {
	local ver initdb
	if ver=$(cluster_version); then
		[[ -x /usr/lib/postgresql/$ver/bin/pg_ctl ]] ||
			die "the cluster in $PG_DATA is PostgreSQL $ver but /usr/lib/postgresql/$ver/bin is missing;" \
				"install postgresql-$ver or remove $PG_DIR"
		printf '%s\n' "/usr/lib/postgresql/$ver/bin"
		return 0
	fi
	if ! initdb=$(newest_lib_tool initdb); then
		install_server
		initdb=$(newest_lib_tool initdb) || die "initdb still missing after installing postgresql"
	fi
	dirname -- "$initdb"
}

# check_owner_access makes sure the postgres user (when root) owns and can
# reach PG_DIR.
check_owner_access() {
	is_root || return 0
	command -v runuser >/dev/null 2>&1 || die "runuser not found (util-linux); needed to run PostgreSQL as $PG_USER"
	id -u "$PG_USER" >/dev/null 2>&1 || die "user $PG_USER does not exist (it comes with the postgresql package)"
	if [[ $(stat -c %U -- "$PG_DIR") != "$PG_USER" ]]; then
		chown -R -- "$PG_USER:" "$PG_DIR"
	fi
	runuser -u "$PG_USER" -- test -w "$PG_DIR" ||
		die "user $PG_USER cannot reach $PG_DIR (a parent directory is not traversable);" \
			"set CHAINLENS_PG_DIR elsewhere or chmod o+x its parents"
}

init_cluster() {
	local bin=$1
	log "initialising private cluster in $PG_DATA (PostgreSQL $(basename -- "$(dirname -- "$bin")"))"
	if ! as_owner "$bin/initdb" -D "$PG_DATA" -U "$PG_USER" --auth=trust \
		--encoding=UTF8 --no-locale --no-sync >"$PG_DIR/initdb.log" 2>&1; then
		cat -- "$PG_DIR/initdb.log" >&2 || true
		die "initdb failed (see $PG_DIR/initdb.log)"
	fi
	cat >"$PG_DATA/pg_hba.conf" <<'EOF'
# Written by scripts/db.sh: trust, loopback and unix socket only.
# TYPE  DATABASE  USER  ADDRESS       METHOD
local   all       all                 trust
host    all       all   127.0.0.1/32  trust
EOF
	printf "\n# Added by scripts/db.sh (rewritten on every start).\ninclude_if_exists = 'chainlens.conf'\n" \
		>>"$PG_DATA/postgresql.conf"
	give_to_owner "$PG_DATA/pg_hba.conf"
}

# write_settings writes the listen/socket settings read on the next start.
write_settings() {
	local sockdir=$PG_RUN q="'"
	mkdir -p -- "$PG_RUN"
	chmod 0700 -- "$PG_RUN"
	give_to_owner "$PG_RUN"
	# sun_path holds 107 bytes; disable the socket rather than fail to start.
	if ((${#PG_RUN} + ${#PG_PORT} + 10 > 100)); then
		log "warning: $PG_RUN is too long for a unix socket; TCP only"
		sockdir=
	fi
	sockdir=${sockdir//$q/$q$q}
	cat >"$PG_DATA/chainlens.conf" <<EOF
# Written by scripts/db.sh on every start; edit the script, not this file.
listen_addresses = '127.0.0.1'
port = $PG_PORT
unix_socket_directories = '$sockdir'
unix_socket_permissions = 0700
logging_collector = off
EOF
	chmod 0600 -- "$PG_DATA/chainlens.conf"
	give_to_owner "$PG_DATA/chainlens.conf"
}

ensure_private() {
	local db=$1 bin port
	validate_port
	lock_private
	bin=$(server_bindir)
	check_owner_access
	[[ -f $PG_DATA/PG_VERSION ]] || init_cluster "$bin"
	if cluster_running "$bin"; then
		port=$(cluster_port)
		if [[ $port != "$PG_PORT" ]]; then
			log "warning: the private cluster already runs on port $port;" \
				"CHAINLENS_PG_PORT=$PG_PORT applies after 'db.sh stop'"
		fi
	else
		port=$PG_PORT
		port_open 127.0.0.1 "$port" &&
			die "port 127.0.0.1:$port is already in use; set CHAINLENS_PG_PORT to a free port"
		write_settings
		log "starting private cluster on 127.0.0.1:$port (log: $PG_LOG)"
		touch -- "$PG_LOG"
		give_to_owner "$PG_LOG"
		if ! as_owner "$bin/pg_ctl" start -s -w -t 60 -D "$PG_DATA" -l "$PG_LOG" >&2; then
			tail -n 20 -- "$PG_LOG" >&2 || true
			die "the private cluster failed to start (see $PG_LOG)"
		fi
	fi
	create_db "$port" "$db"
	local_url "$port" "$db"
}

# --- commands --------------------------------------------------------------------

cmd_ensure() {
	local db=${1:-$DEFAULT_DB}
	validate_db "$db"
	if [[ -n ${DATABASE_URL:-} ]]; then
		verify_database_url
		[[ -z ${1:-} ]] || log "DATABASE_URL is set; using it as is (database name '$1' ignored)"
		printf '%s\n' "$DATABASE_URL"
		return 0
	fi
	if system_usable; then
		create_db "$SYSTEM_PORT" "$db"
		local_url "$SYSTEM_PORT" "$db"
		return 0
	fi
	ensure_private "$db"
}

cmd_stop() {
	local bin='' ver pid i
	if ! ver=$(cluster_version); then
		log "no private cluster in $PG_DATA; nothing to stop"
		return 0
	fi
	lock_private
	[[ -x /usr/lib/postgresql/$ver/bin/pg_ctl ]] && bin=/usr/lib/postgresql/$ver/bin
	if ! cluster_running "$bin"; then
		log "private cluster in $PG_DATA is not running"
		return 0
	fi
	if [[ -n $bin ]]; then
		as_owner "$bin/pg_ctl" stop -s -w -t 60 -m fast -D "$PG_DATA" >&2 ||
			die "pg_ctl stop failed (see $PG_LOG)"
	else
		# Binaries gone: SIGINT is PostgreSQL's fast shutdown.
		pid=$(cluster_pid) || return 0
		kill -INT "$pid"
		for ((i = 0; i < 600; i++)); do
			[[ -d /proc/$pid ]] || break
			sleep 0.1
		done
		[[ ! -d /proc/$pid ]] || die "postmaster $pid did not stop"
	fi
	log "stopped private cluster in $PG_DATA"
}

cmd_status() {
	local ver bin=''
	if [[ -n ${DATABASE_URL:-} ]]; then
		echo "ensure would use: DATABASE_URL ($(redact "$DATABASE_URL"))"
	elif [[ ${CHAINLENS_PG_PRIVATE:-} == 1 ]]; then
		echo "ensure would use: private cluster (CHAINLENS_PG_PRIVATE=1)"
	elif system_usable 2>/dev/null; then
		echo "ensure would use: server on $SYSTEM_HOST:$SYSTEM_PORT"
	else
		echo "ensure would use: private cluster (no usable server on $SYSTEM_HOST:$SYSTEM_PORT)"
	fi
	if ! ver=$(cluster_version); then
		echo "private cluster: not initialised ($PG_DATA)"
		return 0
	fi
	[[ -x /usr/lib/postgresql/$ver/bin/pg_ctl ]] && bin=/usr/lib/postgresql/$ver/bin
	if cluster_running "$bin"; then
		echo "private cluster: running on 127.0.0.1:$(cluster_port) (PostgreSQL $ver, $PG_DATA)"
	else
		echo "private cluster: not running (PostgreSQL $ver, $PG_DATA, port $PG_PORT)"
	fi
}

main() {
	local cmd=${1:-}
	[[ $# -gt 0 ]] && shift
	case $cmd in
	ensure)
		[[ $# -le 1 ]] || usage
		cmd_ensure "$@"
		;;
	stop)
		[[ $# -eq 0 ]] || usage
		cmd_stop
		;;
	status)
		[[ $# -eq 0 ]] || usage
		cmd_status
		;;
	-h | --help | help) usage 0 ;;
	*) usage ;;
	esac
}

main "$@"
