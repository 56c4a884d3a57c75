#!/usr/bin/env bash
# cluster.sh - a replicated Postgres topology and a multi-process chainlens on
# one machine, from the installed PostgreSQL and Debian's pgbouncer.
#
# Usage:
#   scripts/cluster.sh up        the databases (below), then chainlens over the
#                                local chains: one indexer per chain, one
#                                aggregator, two API processes reading from the
#                                replicas (ports 8091 and 8092); Ctrl-C stops
#                                chainlens, `down` the databases
#   scripts/cluster.sh db        the databases only: a primary, two streaming
#                                replicas (pg_basebackup) and pgbouncer in
#                                transaction mode, all on loopback; prints the
#                                URLs as shell assignments on stdout
#   scripts/cluster.sh promote   fail over: stop the primary (fast; with
#                                CHAINLENS_CLUSTER_CRASH=1 as if it crashed:
#                                pg_ctl stop -m immediate), promote replica 1,
#                                point pgbouncer at it and make replica 2
#                                follow it (rewound to the fork by pg_rewind,
#                                cloned again if it cannot be); prints the
#                                URLs again
#   scripts/cluster.sh stop N    stop server N (0 the first primary, 1 and 2
#                                the replicas; fast shutdown); start N again
#   scripts/cluster.sh down      stop everything the cluster started
#   scripts/cluster.sh status    what runs, and each server's role
#
# Environment: CHAINLENS_CLUSTER_DIR (default <repo>/.data/cluster),
# CHAINLENS_CLUSTER_PORT (default 55600: pgbouncer there, the primary at +1,
# the replicas at +2 and +3), CHAINLENS_CLUSTER_REPLICAS (default 2).
#
# The URLs printed:
#   PRIMARY_URL   the primary, direct (sessions: locks, LISTEN)
#   FAILOVER_URL  every server, target_session_attrs=read-write: whichever is
#                 the primary now (what `database.url` points at to survive a
#                 failover without a pooler)
#   POOLER_URL    the primary through pgbouncer (transaction mode)
#   READ_URLS     the replicas, space-separated
# All diagnostics go to stderr.
set -euo pipefail

readonly PG_USER=postgres
readonly DB_NAME=chainlens
SCRIPT_DIR=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd)
REPO_ROOT=$(dirname -- "$SCRIPT_DIR")
readonly SCRIPT_DIR REPO_ROOT
DIR=${CHAINLENS_CLUSTER_DIR:-$REPO_ROOT/.data/cluster}
[[ $DIR == /* ]] || DIR=$PWD/$DIR
readonly DIR=${DIR%/}
readonly BASE=${CHAINLENS_CLUSTER_PORT:-55600}
readonly REPLICAS=${CHAINLENS_CLUSTER_REPLICAS:-2}
export PGCONNECT_TIMEOUT=5

log() { printf 'cluster.sh: %s\n' "$*" >&2; }
die() {
	log "error: $*"
	exit 1
}
is_root() { [[ $(id -u) -eq 0 ]]; }

[[ $BASE =~ ^[1-9][0-9]{3,4}$ ]] && ((BASE + 3 <= 65535)) || die "invalid CHAINLENS_CLUSTER_PORT '$BASE'"
[[ $REPLICAS =~ ^[0-9]$ ]] || die "invalid CHAINLENS_CLUSTER_REPLICAS '$REPLICAS'"

bindir() {
	local found
	found=$(compgen -G "/usr/lib/postgresql/*/bin/initdb" | sort -V | tail -n 1) || true
	[[ -n $found ]] || die "PostgreSQL server binaries not found (apt-get install postgresql)"
	dirname -- "$found"
}
PGBIN=$(bindir)
readonly PGBIN

# Node 0 is the first primary, nodes 1..REPLICAS its replicas.
node_dir() { printf '%s/node%d\n' "$DIR" "$1"; }
node_port() { printf '%d\n' $((BASE + 1 + $1)); }
url_of() { printf 'postgres://%s@127.0.0.1:%s/%s?sslmode=disable\n' "$PG_USER" "$1" "$DB_NAME"; }

as_owner() {
	if is_root; then
		(cd -- "$DIR" && runuser -u "$PG_USER" -- "$@")
	else
		(cd -- "$DIR" && "$@")
	fi
}

pg_ctl_node() { # node args...
	local n=$1
	shift
	as_owner "$PGBIN/pg_ctl" -D "$(node_dir "$n")/data" "$@"
}

running() { pg_ctl_node "$1" status >/dev/null 2>&1; }

psql_node() { # node args...
	local n=$1
	shift
	"$PGBIN/psql" -X -w -q -At -v ON_ERROR_STOP=1 -d "$(url_of "$(node_port "$n")" | sed "s#/$DB_NAME?#/postgres?#")" "$@"
}

in_recovery() { [[ $(psql_node "$1" -c 'SELECT pg_is_in_recovery()' 2>/dev/null) == t ]]; }

start_node() { # node
	local n=$1 d
	d=$(node_dir "$n")
	running "$n" && return 0
	(exec 3<>"/dev/tcp/127.0.0.1/$(node_port "$n")") 2>/dev/null && die "port $(node_port "$n") is in use"
	touch "$d/postgres.log"
	is_root && chown "$PG_USER:" "$d/postgres.log"
	pg_ctl_node "$n" start -s -w -t 60 -l "$d/postgres.log" >&2 || {
		tail -n 20 "$d/postgres.log" >&2
		die "node $n failed to start (see $d/postgres.log)"
	}
}

settings() { # node [sync]: the settings every node starts with (rewritten each start)
	local sync=''
	# Synchronous replication to replica 1 (replica 2 when 1 is away), set
	# on a primary only once it has a replica (else every commit waits): a
	# commit is acknowledged once a replica has it, so promoting replica 1
	# after the primary crashed loses no acknowledged commit.
	[[ ${2:-} == sync ]] && sync="synchronous_standby_names = 'FIRST 1 (node1, node2)'"
	# wal_log_hints and wal_keep_size: what pg_rewind needs to wind a
	# replica back after a failover (hint-bit changes in the WAL, and the
	# WAL back to the last common checkpoint still on disk).
	cat <<EOF
listen_addresses = '127.0.0.1'
port = $(node_port "$1")
unix_socket_directories = ''
logging_collector = off
wal_level = replica
max_wal_senders = 10
max_replication_slots = 10
hot_standby = on
hot_standby_feedback = on
wal_log_hints = on
wal_keep_size = '128MB'
max_connections = 200
fsync = off
cluster_name = 'node$1'
$sync
EOF
}

init_primary() {
	local d
	d=$(node_dir 0)
	mkdir -p "$d"
	is_root && chown -R "$PG_USER:" "$DIR"
	log "initialising the primary in $d/data"
	as_owner "$PGBIN/initdb" -D "$d/data" -U "$PG_USER" --auth=trust --encoding=UTF8 --no-locale --no-sync >"$d/initdb.log" 2>&1 ||
		die "initdb failed (see $d/initdb.log)"
	cat >"$d/data/pg_hba.conf" <<'EOF'
# Written by scripts/cluster.sh: trust on loopback, replication included.
host    all          all   127.0.0.1/32  trust
host    replication  all   127.0.0.1/32  trust
EOF
	printf "\ninclude_if_exists = 'cluster.conf'\n" >>"$d/data/postgresql.conf"
	settings 0 >"$d/data/cluster.conf"
	is_root && chown -R "$PG_USER:" "$d"
	start_node 0
	psql_node 0 -c "CREATE DATABASE $DB_NAME" >/dev/null
}

init_replica() { # node [the primary to clone, default 0]
	local n=$1 from=${2:-0} d
	d=$(node_dir "$n")
	mkdir -p "$d"
	is_root && chown "$PG_USER:" "$d"
	log "cloning replica $n from the primary (node $from, pg_basebackup)"
	as_owner "$PGBIN/pg_basebackup" -h 127.0.0.1 -p "$(node_port "$from")" -U "$PG_USER" -D "$d/data" -R -X stream -c fast \
		-C -S "replica$n" >"$d/basebackup.log" 2>&1 || die "pg_basebackup failed (see $d/basebackup.log)"
	settings "$n" >"$d/data/cluster.conf"
	is_root && chown -R "$PG_USER:" "$d"
	start_node "$n"
	wait_following "$n"
}

ensure_pgbouncer() {
	command -v pgbouncer >/dev/null && return 0
	is_root && command -v apt-get >/dev/null || die "pgbouncer not found (apt-get install pgbouncer)"
	log "installing pgbouncer"
	DEBIAN_FRONTEND=noninteractive apt-get install -y pgbouncer >&2 ||
		{ apt-get update >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y pgbouncer >&2; } ||
		die "apt-get install pgbouncer failed"
}

pooler_target() { cat "$DIR/pooler.target" 2>/dev/null || echo 0; }

write_pgbouncer() { # the node pgbouncer points at
	local d=$DIR/pgbouncer
	mkdir -p "$d"
	echo "$1" >"$DIR/pooler.target"
	cat >"$d/pgbouncer.ini" <<EOF
; Written by scripts/cluster.sh.
[databases]
* = host=127.0.0.1 port=$(node_port "$1")
[pgbouncer]
listen_addr = 127.0.0.1
listen_port = $BASE
unix_socket_dir =
auth_type = trust
auth_file = $d/userlist.txt
admin_users = $PG_USER
pool_mode = transaction
max_client_conn = 1000
default_pool_size = 40
server_reset_query =
ignore_startup_parameters = extra_float_digits
logfile = $d/pgbouncer.log
pidfile = $d/pgbouncer.pid
EOF
	printf '"%s" ""\n' "$PG_USER" >"$d/userlist.txt"
	is_root && chown -R "$PG_USER:" "$d"
}

pgbouncer_pid() {
	local pid
	pid=$(cat "$DIR/pgbouncer/pgbouncer.pid" 2>/dev/null) || return 1
	[[ -d /proc/$pid ]] && echo "$pid"
}

start_pgbouncer() {
	ensure_pgbouncer
	[[ -f $DIR/pgbouncer/pgbouncer.ini ]] || write_pgbouncer 0
	pgbouncer_pid >/dev/null && return 0
	as_owner pgbouncer -d -q "$DIR/pgbouncer/pgbouncer.ini" >&2 || die "pgbouncer failed to start (see $DIR/pgbouncer/pgbouncer.log)"
	# A loaded machine (the whole test suite on two cores) can take seconds to get it listening.
	for _ in $(seq 200); do
		(exec 3<>"/dev/tcp/127.0.0.1/$BASE") 2>/dev/null && return 0
		sleep 0.1
	done
	tail -n 20 "$DIR/pgbouncer/pgbouncer.log" >&2 2>/dev/null
	die "pgbouncer does not listen on $BASE (its log above)"
}

print_urls() {
	local n primary='' all='' reads=''
	for ((n = 0; n <= REPLICAS; n++)); do
		[[ -d $(node_dir "$n")/data ]] || continue
		all+="${all:+,}127.0.0.1:$(node_port "$n")"
		if running "$n" && ! in_recovery "$n"; then
			[[ -z $primary ]] || die "servers $primary and $n are both primaries (a failed-over cluster restarted): stop it (down) and remove $DIR for a new one"
			primary=$n
		elif running "$n"; then
			reads+="${reads:+ }$(url_of "$(node_port "$n")")"
		fi
	done
	[[ -n $primary ]] || die "no server is the primary"
	echo "PRIMARY_URL='$(url_of "$(node_port "$primary")")'"
	echo "FAILOVER_URL='postgres://$PG_USER@$all/$DB_NAME?sslmode=disable&target_session_attrs=read-write'"
	echo "POOLER_URL='$(url_of "$BASE")'"
	echo "READ_URLS='$reads'"
}

cmd_db() {
	mkdir -p "$DIR"
	exec 9>>"$DIR/.lock"
	flock -w 120 9 || die "timed out waiting for $DIR/.lock"
	if [[ -d $(node_dir 0)/data ]]; then
		local n
		for ((n = 0; n <= REPLICAS; n++)); do
			[[ -d $(node_dir "$n")/data ]] || continue
			settings "$n" >"$(node_dir "$n")/data/cluster.conf" # synchronous once its replicas run
			is_root && chown "$PG_USER:" "$(node_dir "$n")/data/cluster.conf"
			start_node "$n" 9>&-
		done
	else
		init_primary 9>&-
	fi
	local n
	for ((n = 1; n <= REPLICAS; n++)); do
		[[ -d $(node_dir "$n")/data ]] || init_replica "$n" 9>&-
	done
	for ((n = 1; n <= REPLICAS; n++)); do
		running "$n" && in_recovery "$n" && wait_following "$n"
	done
	sync_primary
	start_pgbouncer 9>&-
	print_urls
}

# sync_primary makes the running primary replicate synchronously when a
# replica streams from it, asynchronously when none does.
sync_primary() {
	local n p='' streaming
	for ((n = 0; n <= REPLICAS; n++)); do
		[[ -d $(node_dir "$n")/data ]] && running "$n" && ! in_recovery "$n" && p=$n
	done
	[[ -n $p ]] || return 0
	streaming=$(psql_node "$p" -c "SELECT count(*) FROM pg_stat_replication WHERE state = 'streaming'")
	if ((streaming > 0)); then
		settings "$p" sync >"$(node_dir "$p")/data/cluster.conf"
	else
		settings "$p" >"$(node_dir "$p")/data/cluster.conf"
	fi
	pg_ctl_node "$p" reload -s >&2
}

# wait_following NODE: until the node streams from the current primary.
wait_following() {
	local n=$1
	for _ in $(seq 300); do
		[[ $(psql_node "$n" -c "SELECT status FROM pg_stat_wal_receiver" 2>/dev/null) == streaming ]] && return 0
		sleep 0.1
	done
	die "replica $n does not stream from the new primary"
}

cmd_promote() {
	local n
	running 1 && in_recovery 1 || die "replica 1 is not a running replica"
	local mode=fast
	[[ ${CHAINLENS_CLUSTER_CRASH:-} == 1 ]] && mode=immediate
	log "stopping the primary (node 0, $mode) and promoting replica 1"
	pg_ctl_node 0 stop -s -w -m "$mode" >&2 || true
	pg_ctl_node 1 promote -s -w >&2 || die "promote failed"
	# pg_rewind (below) reads the timeline from the control file, which a
	# promoted server updates only at its first checkpoint.
	psql_node 1 -c CHECKPOINT >/dev/null
	write_pgbouncer 1
	if pid=$(pgbouncer_pid); then
		kill -HUP "$pid" # reload: new server connections go to the new primary
		"$PGBIN/psql" -X -w -q -h 127.0.0.1 -p "$BASE" -U "$PG_USER" -d pgbouncer -c "RECONNECT" >/dev/null 2>&1 || true
	fi
	for ((n = 2; n <= REPLICAS; n++)); do
		running "$n" || continue
		log "replica $n follows the new primary"
		pg_ctl_node "$n" stop -s -w -m fast >&2
		# A replica that had received WAL the promoted one had not (the
		# primary crashed mid-stream) can never follow the new timeline
		# ("forked off ... before current recovery point"): pg_rewind
		# winds it back to the fork (it changes nothing when the replica
		# is behind it). It copies the new primary's configuration over,
		# so this node's own settings and standby signal are put back.
		# Without its WAL back to the last common checkpoint it cannot:
		# the replica is cloned again.
		if ! as_owner "$PGBIN/pg_rewind" -D "$(node_dir "$n")/data" \
			--source-server="host=127.0.0.1 port=$(node_port 1) user=$PG_USER dbname=postgres" >&2; then
			log "replica $n cannot be rewound: cloning it again from the new primary"
			rm -rf -- "$(node_dir "$n")/data"
			init_replica "$n" 1
			continue
		fi
		settings "$n" >"$(node_dir "$n")/data/cluster.conf"
		touch "$(node_dir "$n")/data/standby.signal"
		is_root && chown "$PG_USER:" "$(node_dir "$n")/data/cluster.conf" "$(node_dir "$n")/data/standby.signal"
		cat >>"$(node_dir "$n")/data/postgresql.auto.conf" <<EOF
primary_conninfo = 'host=127.0.0.1 port=$(node_port 1) user=$PG_USER'
primary_slot_name = ''
recovery_target_timeline = 'latest'
EOF
		start_node "$n"
		wait_following "$n"
	done
	sync_primary
	print_urls
}

cmd_down() {
	local n pid
	if [[ -f $DIR/chainlens.pids ]]; then
		while read -r pid; do kill "$pid" 2>/dev/null || true; done <"$DIR/chainlens.pids"
		rm -f "$DIR/chainlens.pids"
	fi
	if pid=$(pgbouncer_pid); then kill "$pid" || true; fi
	for ((n = REPLICAS; n >= 0; n--)); do
		[[ -d $(node_dir "$n")/data ]] && running "$n" && pg_ctl_node "$n" stop -s -w -m fast >&2
	done
	log "stopped (data kept in $DIR; remove it for a new cluster)"
}

cmd_status() {
	local n role
	for ((n = 0; n <= REPLICAS; n++)); do
		[[ -d $(node_dir "$n")/data ]] || { echo "node $n: not created"; continue; }
		if ! running "$n"; then
			echo "node $n (127.0.0.1:$(node_port "$n")): stopped"
			continue
		fi
		role=primary
		in_recovery "$n" && role=replica
		echo "node $n (127.0.0.1:$(node_port "$n")): $role"
	done
	if pgbouncer_pid >/dev/null; then
		echo "pgbouncer (127.0.0.1:$BASE): running, to node $(pooler_target)"
	else
		echo "pgbouncer: stopped"
	fi
}

# cmd_up starts the databases, then chainlens as separate processes.
cmd_up() {
	local urls
	CONFIG=${CONFIG:-config/local.yaml} BIN=bin/chainlens DEV_BIN=bin/chainlens-dev
	local cfg=$CONFIG bin=$BIN dev=$DEV_BIN
	urls=$(cmd_db)
	eval "$urls"
	cd "$REPO_ROOT"
	[[ -x $bin && -x $dev ]] || make build >&2
	local pids=() chain ids r=0
	cleanup() {
		for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
		wait 2>/dev/null || true
		rm -f "$DIR/chainlens.pids"
	}
	trap cleanup EXIT INT TERM
	# Writers reach the primary through pgbouncer, their sessions (locks,
	# LISTEN) directly; the API processes read from the replicas.
	export DATABASE_URL=$POOLER_URL CHAINLENS_DATABASE_SESSION_URL=$FAILOVER_URL
	"$bin" migrate up --config "$cfg" >&2
	local key
	key=$("$bin" keys create --config "$cfg" --name "cluster-$(date +%s)" --scopes all 2>/dev/null)
	# shellcheck source=/dev/null
	. scripts/local-chains.sh
	ids=$(sed -nE 's/^  - \{?id: *([^,} ]+).*/\1/p' "$cfg")
	mkdir -p .data
	for chain in $ids; do
		"$bin" index --config "$cfg" --chain "$chain" 2>>".data/cluster-index-$chain.log" &
		pids+=($!)
	done
	"$bin" aggregate --config "$cfg" 2>>.data/cluster-aggregate.log &
	pids+=($!)
	for port in 8091 8092; do
		r=$((r + 1))
		CHAINLENS_DATABASE_READ_URLS=$(cut -d' ' -f"$r" <<<"$READ_URLS") CHAINLENS_API_LISTEN=127.0.0.1:$port \
			"$bin" serve --config "$cfg" 2>>".data/cluster-serve-$port.log" &
		pids+=($!)
	done
	printf '%s\n' "${pids[@]}" >"$DIR/chainlens.pids"
	cat >&2 <<MSG

chainlens runs as $((${#pids[@]})) processes over the cluster in $DIR:
  API (replica 1): http://127.0.0.1:8091/readyz   API (replica 2): http://127.0.0.1:8092/readyz
  dev API key: $key
  logs: .data/cluster-*.log     fail over: scripts/cluster.sh promote     stop: Ctrl-C, then scripts/cluster.sh down
MSG
	wait
}

node_arg() {
	[[ ${1:-} =~ ^[0-9]$ ]] && ((${1:-} <= REPLICAS)) && [[ -d $(node_dir "$1")/data ]] || die "no server '${1:-}' (0..$REPLICAS)"
}

case ${1:-} in
up) cmd_up ;;
stop)
	node_arg "${2:-}"
	pg_ctl_node "$2" stop -s -w -m fast >&2
	sync_primary # no replica left streaming: commits must not wait for one
	;;
start)
	node_arg "${2:-}"
	if [[ ! -f $(node_dir "$2")/data/standby.signal ]]; then
		for ((n = 0; n <= REPLICAS; n++)); do
			[[ $n != "$2" ]] && running "$n" && ! in_recovery "$n" &&
				die "server $2 was a primary and server $n is the primary now: starting it would make two (remove $DIR for a new cluster)"
		done
	fi
	start_node "$2"
	if in_recovery "$2"; then
		primary=''
		for ((n = 0; n <= REPLICAS; n++)); do
			[[ $n != "$2" ]] && running "$n" && ! in_recovery "$n" && primary=$n
		done
		# With no primary up (one crashed, none promoted yet) there is
		# nothing to follow until promote.
		[[ -z $primary ]] || wait_following "$2"
		sync_primary
	fi
	;;
db) cmd_db ;;
promote) cmd_promote ;;
down) cmd_down ;;
status) cmd_status ;;
*)
	sed -n '2,38s/^# \{0,1\}//p' "${BASH_SOURCE[0]}" >&2
	exit 2
	;;
esac
