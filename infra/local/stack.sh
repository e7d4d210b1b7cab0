#!/usr/bin/env bash
# Native local service stack (no Docker): Kafka (KRaft), Apicurio Registry, ClickHouse,
# PostgreSQL, Redis and an SMTP sink, all on fixed loopback ports.
#
#   bash infra/local/stack.sh start|stop|status|reset
#   bash infra/local/stack.sh start|stop|status kafka     the Kafka broker(s) alone
#
# STACK_KAFKA_NODES=3 runs Kafka as a three-node cluster instead of the single broker (README.md).
# STACK_CLICKHOUSE_REPLICAS=3 runs ClickHouse as three replicas over a ZooKeeper ensemble instead of the
# single server (README.md).
#
# Data, logs and pid files live in $REPO/.stack/ (git-ignored; STACK_DIR names another folder, which
# with `start kafka` gives a second, separate Kafka: the tests' cluster does that). Downloads are cached outside
# the repo in ${SVC_CACHE_DIR:-$HOME/.cache/svc-stack} and Maven's local repository (~/.m2;
# override with MAVEN_OPTS=-Dmaven.repo.local=...), so a second run on the same machine is fast.
set -euo pipefail

SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(cd "$SCRIPT_DIR/../.." && pwd)"
STACK="${STACK_DIR:-$REPO/.stack}"
# STACK_SECURE=1: the same services with TLS and passwords, beside the plain ones: in $STACK/secure, on
# ports of their own, with a Postgres and a Redis of their own (infra/local/secure.sh, README.md).
SECURE=${STACK_SECURE:-0}
[[ $SECURE == 0 || $SECURE == 1 ]] || { echo "[stack] ERROR: STACK_SECURE must be 0 or 1" >&2; exit 2; }
[[ $SECURE == 1 ]] && STACK="$STACK/secure"
RUN="$STACK/run"
LOGS="$STACK/logs"
CACHE="${SVC_CACHE_DIR:-$HOME/.cache/svc-stack}"

# Pinned versions. Apicurio 3.3.x is compiled for Java 21; the machine has Java 17, so we use
# the newest 3.x line on Maven Central that runs on 17.
KAFKA_VERSION=3.9.2
APICURIO_VERSION=3.0.9
DEP_PLUGIN=org.apache.maven.plugins:maven-dependency-plugin:3.6.1
# Apicurio's parent POM (io.apicurio:apicurio-registry:3.0.9) is not served by our Maven Central
# mirror; dependency-plugin 3.x insists on reading it, 2.8's copy goal fetches the file alone.
DEP_PLUGIN_NODESC=org.apache.maven.plugins:maven-dependency-plugin:2.8

# Fixed addresses: the TypeScript config defaults rely on these. The secured stack's are in secure.sh.
HOST=127.0.0.1
KAFKA_PORT=${STACK_KAFKA_PORT:-$( [[ $SECURE == 1 ]] && echo 16092 || echo 9092 )}
KAFKA_CONTROLLER_PORT=$((KAFKA_PORT + 1))
# 1: the single broker (the default). 3: a cluster, node i's client port KAFKA_PORT + 2(i-1) and its
# controller port the one above (9092/9093, 9094/9095, 9096/9097).
KAFKA_NODES=${STACK_KAFKA_NODES:-1}
[[ $KAFKA_NODES == 1 || $KAFKA_NODES == 3 ]] || { echo "[stack] ERROR: STACK_KAFKA_NODES must be 1 or 3" >&2; exit 2; }
APICURIO_PORT=8081
APICURIO_DB_URL="jdbc:postgresql://$HOST:5432/apicurio" APICURIO_DB_USER=postgres APICURIO_DB_PASSWORD=postgres
CH_HTTP_PORT=8123
CH_TCP_PORT=9000
PG_PORT=5432
REDIS_PORT=6379
SMTP_PORT=2525
SMTP_HTTP_PORT=2580

# Health-wait timeouts (seconds).
KAFKA_TIMEOUT=${STACK_KAFKA_TIMEOUT:-120}
APICURIO_TIMEOUT=${STACK_APICURIO_TIMEOUT:-180}
CH_TIMEOUT=${STACK_CH_TIMEOUT:-60}
SMTP_TIMEOUT=${STACK_SMTP_TIMEOUT:-30}
STOP_TIMEOUT=${STACK_STOP_TIMEOUT:-30}

KAFKA_HOME="$CACHE/kafka-$KAFKA_VERSION"
APICURIO_HOME="$CACHE/apicurio-registry-$APICURIO_VERSION"

log() { echo "[stack] $*"; }
err() { echo "[stack] ERROR: $*" >&2; }

# ---------------------------------------------------------------------------------------------
# small helpers
# ---------------------------------------------------------------------------------------------

# TCP connect check without extra tools.
port_open() { (exec 3<>"/dev/tcp/$1/$2") 2>/dev/null; }

pid_of() { [[ -f "$RUN/$1.pid" ]] && cat "$RUN/$1.pid" || true; }

# A pid counts as ours only if it is alive AND its command line carries our marker string
# (protects against pid reuse after a reboot).
pid_alive() {
  local pid=$1 marker=$2
  [[ -n "$pid" && -r "/proc/$pid/cmdline" ]] || return 1
  tr '\0' ' ' <"/proc/$pid/cmdline" | grep -qF -- "$marker"
}

# Start a detached process (own session, so the caller's terminal/CI step can exit) and record its pid.
launch() {
  local name=$1 logfile=$2; shift 2
  mkdir -p "$RUN" "$(dirname "$logfile")"
  echo "---- $(date -Is) start" >>"$logfile"
  # 9>&-: children must not inherit the stack lock (see lock()), or it would stay held forever.
  nohup setsid "$@" >>"$logfile" 2>&1 </dev/null 9>&- &
  echo $! >"$RUN/$name.pid"
}

# wait_healthy name timeout logfile check [marker]: polls check (a function, with its arguments in the
# same word); fails early if the process died.
wait_healthy() {
  local name=$1 timeout=$2 logfile=$3 check=$4 marker=${5:-}
  local start=$SECONDS
  while ! $check; do
    if [[ -n "$marker" ]] && ! pid_alive "$(pid_of "$name")" "$marker"; then
      err "$name exited during start-up; see $logfile"
      tail -n 30 "$logfile" >&2 || true
      return 1
    fi
    if (( SECONDS - start >= timeout )); then
      err "$name not healthy after ${timeout}s; see $logfile"
      tail -n 30 "$logfile" >&2 || true
      return 1
    fi
    sleep 1
  done
  log "$name: healthy on $HOST (${SECONDS}s since stack start)"
}

APT_UPDATED=0
apt_install() {
  if [[ $APT_UPDATED == 0 ]]; then
    log "apt: updating package lists"
    apt-get update -qq
    APT_UPDATED=1
  fi
  log "apt: installing $*"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null
}

# Maven 3.8 on Debian prints ANSI resets even in batch mode; strip them (pipefail keeps mvn's status).
mvn_q() { mvn -B -q --no-transfer-progress -Dstyle.color=never "$@" 2>&1 | sed -u 's/\x1b\[[0-9;]*m//g'; }

apt_install_without_starting() { # a package whose install would start a service of its own
  local own_policy=0
  if [[ ! -e /usr/sbin/policy-rc.d ]]; then printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d; chmod +x /usr/sbin/policy-rc.d; own_policy=1; fi
  apt_install "$@"
  if [[ $own_policy == 1 ]]; then rm -f /usr/sbin/policy-rc.d; fi
}

need_cmd() { # need_cmd command apt-package
  command -v "$1" >/dev/null 2>&1 || apt_install "$2"
}

# ---------------------------------------------------------------------------------------------
# health checks (fast, real protocol where cheap)
# ---------------------------------------------------------------------------------------------

# Kafka: send a raw ApiVersions v0 request (api_key 18, correlation id 1, client id "sh") and
# expect a response frame echoing correlation id 1 with error_code 0. No JVM needed.
kafka_answers() { # port
  local out
  out=$(timeout 3 bash -c '
    exec 3<>"/dev/tcp/$0/$1" || exit 1
    printf "\x00\x00\x00\x0c\x00\x12\x00\x00\x00\x00\x00\x01\x00\x02sh" >&3
    head -c 10 <&3 | od -An -tx1' "$HOST" "$1" 2>/dev/null) || return 1
  # bytes 5-8 = correlation id, 9-10 = error code
  [[ "$(echo $out | cut -d' ' -f5-10)" == "00 00 00 01 00 00" ]]
}
kafka_healthy() { kafka_answers "$KAFKA_PORT"; }
apicurio_healthy() {
  [[ "$(curl -s -o /dev/null -m 3 -w '%{http_code}' "http://$HOST:$APICURIO_PORT/apis/ccompat/v7/subjects" 2>/dev/null)" == 200 ]]
}
clickhouse_healthy() { [[ "$(curl -s -m 3 "http://$HOST:$CH_HTTP_PORT/ping" 2>/dev/null)" == "Ok." ]]; }
postgres_healthy() { command -v pg_isready >/dev/null && pg_isready -q -h "$HOST" -p "$PG_PORT"; }
redis_healthy() { command -v redis-cli >/dev/null && [[ "$(redis-cli -h "$HOST" -p "$REDIS_PORT" ping 2>/dev/null)" == PONG ]]; }
smtp_healthy() { [[ "$(curl -s -m 3 "http://$HOST:$SMTP_HTTP_PORT/healthz" 2>/dev/null)" == *ok* ]]; }

# ---------------------------------------------------------------------------------------------
# PostgreSQL / Redis: the machine's own services; only installed/started if unreachable
# ---------------------------------------------------------------------------------------------

ensure_postgres() {
  if postgres_healthy; then log "postgres: already running on $HOST:$PG_PORT"; return; fi
  local fresh=0
  if ! ls /etc/postgresql/*/main >/dev/null 2>&1; then
    apt_install postgresql
    fresh=1
  fi
  local ver; ver=$(ls /etc/postgresql | sort -V | tail -n1)
  if [[ $fresh == 1 ]]; then
    # Trust auth on loopback, like the CI/dev machines this stack targets.
    local hba="/etc/postgresql/$ver/main/pg_hba.conf"
    sed -i -E 's/^(host\s+all\s+all\s+(127\.0\.0\.1\/32|::1\/128)\s+)\S+/\1trust/' "$hba"
  fi
  log "postgres: starting cluster $ver/main"
  pg_ctlcluster --skip-systemctl-redirect "$ver" main start 9>&- || true
  # If the package's postinst had already started it, the start above was a no-op: reload hba.
  [[ $fresh == 1 ]] && { pg_ctlcluster --skip-systemctl-redirect "$ver" main reload 9>&- || true; }
  for _ in $(seq 1 30); do postgres_healthy && break; sleep 1; done
  postgres_healthy || { err "postgres not reachable on $HOST:$PG_PORT; see /var/log/postgresql/"; return 1; }
  if [[ $fresh == 1 ]]; then
    # Also allow connecting as the current OS user (root on CI) without -U.
    psql -h "$HOST" -U postgres -Atc "select 1 from pg_roles where rolname='$(id -un)'" | grep -q 1 ||
      psql -h "$HOST" -U postgres -qc "create role \"$(id -un)\" superuser login" || true
  fi
  log "postgres: healthy on $HOST:$PG_PORT"
}

ensure_redis() {
  if redis_healthy; then log "redis: already running on $HOST:$REDIS_PORT"; return; fi
  need_cmd redis-server redis-server
  need_cmd redis-cli redis-tools
  redis_healthy && { log "redis: healthy on $HOST:$REDIS_PORT"; return; }  # package may have started it
  log "redis: starting"
  redis-server --daemonize yes --bind 127.0.0.1 -::1 --port "$REDIS_PORT" --save "" --appendonly no \
    --logfile "$LOGS/redis.log" 9>&-
  for _ in $(seq 1 20); do redis_healthy && break; sleep 0.5; done
  redis_healthy || { err "redis not reachable on $HOST:$REDIS_PORT; see $LOGS/redis.log"; return 1; }
  log "redis: healthy on $HOST:$REDIS_PORT"
}

pg() { psql -h "$HOST" -p "$PG_PORT" -U postgres -v ON_ERROR_STOP=1 -qAt "$@"; }

ensure_apicurio_db() {
  if [[ "$(pg -c "select 1 from pg_database where datname='apicurio'")" != 1 ]]; then
    log "postgres: creating database apicurio"
    pg -c "create database apicurio"
  fi
}

# ---------------------------------------------------------------------------------------------
# Kafka 3.9 (KRaft, single combined broker+controller)
# ---------------------------------------------------------------------------------------------

install_kafka() {
  [[ -f "$KAFKA_HOME/.complete" ]] && return
  need_cmd java openjdk-17-jre-headless
  need_cmd mvn maven
  log "kafka: fetching kafka_2.13:$KAFKA_VERSION jars from Maven Central…"
  mkdir -p "$KAFKA_HOME"
  # A throwaway pom listing the runtime: the broker (kafka_2.13), the CLI tools (kafka-tools,
  # handy for tests; connect-runtime excluded because it drags in Jetty/Jersey) and a log4j
  # binding so the broker logs to a file.
  cat >"$KAFKA_HOME/pom.xml" <<EOF
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>local.stack</groupId><artifactId>kafka-runtime</artifactId><version>1</version>
  <packaging>pom</packaging>
  <dependencies>
    <dependency><groupId>org.apache.kafka</groupId><artifactId>kafka_2.13</artifactId><version>$KAFKA_VERSION</version></dependency>
    <dependency><groupId>org.apache.kafka</groupId><artifactId>kafka-tools</artifactId><version>$KAFKA_VERSION</version>
      <exclusions><exclusion><groupId>org.apache.kafka</groupId><artifactId>connect-runtime</artifactId></exclusion></exclusions>
    </dependency>
    <dependency><groupId>org.slf4j</groupId><artifactId>slf4j-reload4j</artifactId><version>1.7.36</version></dependency>
    <dependency><groupId>ch.qos.reload4j</groupId><artifactId>reload4j</artifactId><version>1.2.25</version></dependency>
  </dependencies>
</project>
EOF
  rm -rf "$KAFKA_HOME/libs"
  (cd "$KAFKA_HOME" && mvn_q "$DEP_PLUGIN:copy-dependencies" \
      -DincludeScope=runtime -DoutputDirectory="$KAFKA_HOME/libs") ||
    { err "kafka: maven download failed"; return 1; }
  touch "$KAFKA_HOME/.complete"
  log "kafka: $(ls "$KAFKA_HOME/libs" | wc -l) jars in $KAFKA_HOME/libs"
}

kafka_java() { # run a Kafka tool class with the cached classpath, logging WARN+ to stderr
  local l4j="$KAFKA_HOME/tools-log4j.properties"
  [[ -f "$l4j" ]] || cat >"$l4j" <<EOF
log4j.rootLogger=WARN, stderr
log4j.appender.stderr=org.apache.log4j.ConsoleAppender
log4j.appender.stderr.Target=System.err
log4j.appender.stderr.layout=org.apache.log4j.PatternLayout
log4j.appender.stderr.layout.ConversionPattern=[%d] %p %m (%c)%n
EOF
  java -Xmx256m -Dlog4j.configuration="file:$l4j" -cp "$KAFKA_HOME/libs/*" "$@"
}

# A broker's listeners: plaintext (secure.sh has the TLS and SASL ones).
kafka_listener_settings() { # client-port controller-port
  cat <<EOF
listeners=PLAINTEXT://$HOST:$1,CONTROLLER://$HOST:$2
advertised.listeners=PLAINTEXT://$HOST:$1
controller.listener.names=CONTROLLER
inter.broker.listener.name=PLAINTEXT
listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT
EOF
}

# What StorageTool format adds to a broker's storage besides the cluster id, one argument a line:
# nothing here (secure.sh adds the SASL users).
kafka_format_args() { :; }
kafka_format() { # StorageTool format arguments…
  local extra
  mapfile -t extra < <(kafka_format_args)
  kafka_java kafka.tools.StorageTool format "${extra[@]}" "$@"
}

# Settings every Kafka of the stack shares, single broker or cluster node.
kafka_shared_settings() {
  cat <<EOF
group.initial.rebalance.delay.ms=0
# Compacted topics are used: keep the cleaner on, with a small dedupe buffer (default 128 MB).
log.cleaner.enable=true
log.cleaner.threads=1
log.cleaner.dedupe.buffer.size=16777216
log.cleaner.backoff.ms=5000
# Small segments so compaction has closed segments to work on.
log.segment.bytes=16777216
log.retention.hours=168
log.retention.check.interval.ms=60000
EOF
}

kafka_log4j() { # server log file
  cat <<EOF
log4j.rootLogger=INFO, file
log4j.appender.file=org.apache.log4j.RollingFileAppender
log4j.appender.file.File=$1
log4j.appender.file.MaxFileSize=20MB
log4j.appender.file.MaxBackupIndex=3
log4j.appender.file.layout=org.apache.log4j.PatternLayout
log4j.appender.file.layout.ConversionPattern=[%d] %p %m (%c)%n
log4j.logger.kafka.request.logger=WARN
log4j.logger.state.change.logger=WARN
log4j.logger.org.apache.kafka.clients=WARN
EOF
}

launch_kafka() { # pid-name console-log config-dir: a broker with the config dir's server.properties
  local dir=$3
  launch "$1" "$2" java -Xms256m -Xmx768m -XX:+UseG1GC -XX:MaxGCPauseMillis=20 \
    -XX:+ExitOnOutOfMemoryError -Djava.awt.headless=true \
    -Dlog4j.configuration="file:$dir/log4j.properties" -Dkafka.logs.dir="$LOGS" \
    -cp "$KAFKA_HOME/libs/*" kafka.Kafka "$dir/server.properties"
}

configure_kafka() {
  local dir="$STACK/kafka"
  mkdir -p "$dir/data" "$LOGS"
  # Regenerated every start so edits here take effect; data stays.
  cat >"$dir/server.properties" <<EOF
# Generated by infra/local/stack.sh -- single-node KRaft (broker + controller).
process.roles=broker,controller
node.id=1
controller.quorum.voters=1@$HOST:$KAFKA_CONTROLLER_PORT
$(kafka_listener_settings "$KAFKA_PORT" "$KAFKA_CONTROLLER_PORT")
log.dirs=$dir/data
num.network.threads=2
num.io.threads=4
# Topics are created explicitly by the app/tests.
auto.create.topics.enable=false
num.partitions=1
default.replication.factor=1
min.insync.replicas=1
# Single node: internal topics with RF 1 and fewer partitions (faster first group/txn use).
offsets.topic.replication.factor=1
offsets.topic.num.partitions=10
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
transaction.state.log.num.partitions=10
$(kafka_shared_settings)
EOF
  kafka_log4j "$LOGS/kafka-server.log" >"$dir/log4j.properties"
  # Format the storage once, with a cluster id kept in .stack (reset wipes both).
  if [[ ! -f "$dir/data/meta.properties" ]]; then
    [[ -s "$dir/cluster-id" ]] || kafka_java kafka.tools.StorageTool random-uuid >"$dir/cluster-id"
    log "kafka: formatting storage (cluster id $(cat "$dir/cluster-id"))"
    kafka_format \
      -t "$(cat "$dir/cluster-id")" -c "$dir/server.properties" >>"$LOGS/kafka.log" 2>&1 ||
      { err "kafka: storage format failed; see $LOGS/kafka.log"; return 1; }
  fi
}

start_kafka() {
  local marker="$STACK/kafka/server.properties"
  if kafka_healthy; then log "kafka: already running on $HOST:$KAFKA_PORT"; return; fi
  if pid_alive "$(pid_of kafka)" "$marker"; then log "kafka: process running, waiting for health"; return; fi
  port_open "$HOST" "$KAFKA_PORT" && { err "port $KAFKA_PORT is taken by another process"; return 1; }
  install_kafka
  configure_kafka
  log "kafka: starting $KAFKA_VERSION on $HOST:$KAFKA_PORT (controller $KAFKA_CONTROLLER_PORT)"
  launch_kafka kafka "$LOGS/kafka.log" "$STACK/kafka"
}

# ---------------------------------------------------------------------------------------------
# Kafka as a cluster (STACK_KAFKA_NODES=3): nodes kafka-1..3, each a combined broker and
# controller, in $STACK/kafka-cluster/node-<i>; pid files run/kafka-<i>.pid, logs logs/kafka-<i>*.log
# ---------------------------------------------------------------------------------------------

CLUSTER="$STACK/kafka-cluster"
node_port() { echo $((KAFKA_PORT + 2 * ($1 - 1))); }
node_controller_port() { echo $((KAFKA_PORT + 2 * ($1 - 1) + 1)); }
node_marker() { echo "$CLUSTER/node-$1/server.properties"; }
node_numbers() { seq 1 "$KAFKA_NODES"; }

# What KAFKA_BROKERS should be for the configured Kafka: every node's client address.
kafka_brokers() {
  local i list=()
  if [[ $KAFKA_NODES == 1 ]]; then echo "$HOST:$KAFKA_PORT"; return; fi
  for i in $(node_numbers); do list+=("$HOST:$(node_port "$i")"); done
  (IFS=,; echo "${list[*]}")
}

# A cluster id as `StorageTool random-uuid` makes one (16 random bytes in URL-safe base64, unpadded,
# not starting with '-'), without a JVM start: the tests' cluster is made anew every run.
new_cluster_id() {
  local id
  while :; do
    id=$(head -c 16 /dev/urandom | base64 | tr '+/' '-_' | tr -d '=')
    [[ $id != -* ]] && { echo "$id"; return; }
  done
}

configure_kafka_node() { # node number
  local i=$1 dir="$CLUSTER/node-$1" voters="" j
  for j in $(node_numbers); do voters+="${voters:+,}$j@$HOST:$(node_controller_port "$j")"; done
  mkdir -p "$dir/data" "$LOGS"
  cat >"$dir/server.properties" <<EOF
# Generated by infra/local/stack.sh -- node $i of a $KAFKA_NODES-node KRaft cluster (broker + controller).
process.roles=broker,controller
node.id=$i
controller.quorum.voters=$voters
$(kafka_listener_settings "$(node_port "$i")" "$(node_controller_port "$i")")
log.dirs=$dir/data
# Three nodes share two cores (with everything else): few threads each.
num.network.threads=2
num.io.threads=2
num.replica.fetchers=1
background.threads=4
auto.create.topics.enable=false
num.partitions=1
# As production runs Kafka: every partition on all three nodes; a write with acks=all is acknowledged
# once two of them have it; a replica that fell behind is never made leader (it would drop
# acknowledged writes). The internal topics likewise.
default.replication.factor=3
min.insync.replicas=2
unclean.leader.election.enable=false
offsets.topic.replication.factor=3
offsets.topic.num.partitions=10
transaction.state.log.replication.factor=3
transaction.state.log.min.isr=2
transaction.state.log.num.partitions=10
$(kafka_shared_settings)
EOF
  kafka_log4j "$LOGS/kafka-$i-server.log" >"$dir/log4j.properties"
}

# Formatting a node's storage costs a JVM start: seconds each on a busy 2-core machine, half of a new
# cluster's start. So a cluster's nodes are formatted once per machine, into the cache, and a new
# cluster's nodes are copies (the storage holds the node id and the cluster id, nothing of the ports
# or paths); every cluster made so shares that cluster id. The tests make a new cluster per file.
FORMATTED="$KAFKA_HOME/formatted-$KAFKA_NODES-nodes"

make_formatted_nodes() {
  [[ -f "$FORMATTED/.complete" ]] && return
  local CLUSTER i id rc=0 pids=() # CLUSTER: configure_kafka_node and node_marker work in the template
  CLUSTER=$(mktemp -d "$KAFKA_HOME/formatting.XXXXXX")
  id=$(new_cluster_id)
  echo "$id" >"$CLUSTER/cluster-id"
  log "kafka: formatting the storage of $KAFKA_NODES empty nodes into $FORMATTED (cluster id $id)"
  for i in $(node_numbers); do
    configure_kafka_node "$i"
    kafka_java kafka.tools.StorageTool format -t "$id" -c "$(node_marker "$i")" >>"$CLUSTER/format.log" 2>&1 &
    pids+=("$!")
  done
  for i in "${pids[@]}"; do wait "$i" || rc=1; done
  if [[ $rc != 0 ]]; then err "kafka: storage format failed:"; cat "$CLUSTER/format.log" >&2; rm -rf "$CLUSTER"; return 1; fi
  rm -f "$CLUSTER"/node-*/*.properties
  touch "$CLUSTER/.complete"
  # Another stack.sh may have made it meanwhile: then theirs stays.
  mv -T "$CLUSTER" "$FORMATTED" 2>/dev/null || rm -rf "$CLUSTER"
}

format_kafka_nodes() { # node numbers: gives those without storage theirs
  make_formatted_nodes
  [[ -s "$CLUSTER/cluster-id" ]] || cp "$FORMATTED/cluster-id" "$CLUSTER/cluster-id"
  local i id
  id=$(cat "$CLUSTER/cluster-id")
  for i in "$@"; do
    [[ -f "$CLUSTER/node-$i/data/meta.properties" ]] && continue
    if [[ $id == "$(cat "$FORMATTED/cluster-id")" ]]; then
      log "kafka-$i: empty storage (cluster id $id)"
      cp -a "$FORMATTED/node-$i/data/." "$CLUSTER/node-$i/data/"
    else # a cluster older than the cache's copies
      log "kafka-$i: formatting storage (cluster id $id)"
      kafka_format -t "$id" -c "$(node_marker "$i")" >>"$LOGS/kafka-$i.log" 2>&1 ||
        { err "kafka-$i: storage format failed; see $LOGS/kafka-$i.log"; return 1; }
    fi
  done
}

cluster_nodes_alive() { # whether any node of this stack's cluster runs
  local i
  for i in 1 2 3; do pid_alive "$(pid_of "kafka-$i")" "$(node_marker "$i")" && return 0; done
  return 1
}

# Starts the nodes that are not running (a node that died comes back while the others keep running).
start_kafka_cluster() {
  local i port starting=()
  if pid_alive "$(pid_of kafka)" "$STACK/kafka/server.properties"; then
    err "the single Kafka broker of this stack runs; stop it first: bash infra/local/stack.sh stop kafka"; return 1
  fi
  for i in $(node_numbers); do
    port=$(node_port "$i")
    if pid_alive "$(pid_of "kafka-$i")" "$(node_marker "$i")"; then
      if kafka_answers "$port"; then log "kafka-$i: already running on $HOST:$port"
      else log "kafka-$i: process running, waiting for health"; fi
      continue
    fi
    if port_open "$HOST" "$port" || port_open "$HOST" "$(node_controller_port "$i")"; then
      err "port $port or $(node_controller_port "$i") is taken by another process"; return 1
    fi
    starting+=("$i")
  done
  [[ ${#starting[@]} -gt 0 ]] || return 0
  install_kafka
  mkdir -p "$CLUSTER"
  for i in "${starting[@]}"; do configure_kafka_node "$i"; done
  format_kafka_nodes "${starting[@]}"
  for i in "${starting[@]}"; do
    log "kafka-$i: starting $KAFKA_VERSION on $HOST:$(node_port "$i") (controller $(node_controller_port "$i"))"
    launch_kafka "kafka-$i" "$LOGS/kafka-$i.log" "$CLUSTER/node-$i"
  done
}

# Either Kafka, as configured; then wait_kafka.
start_kafka_configured() {
  if [[ $KAFKA_NODES == 1 ]]; then
    if cluster_nodes_alive; then
      err "a Kafka cluster of this stack runs; stop it first (STACK_KAFKA_NODES=3 bash infra/local/stack.sh stop kafka) or set STACK_KAFKA_NODES=3"
      return 1
    fi
    start_kafka
  else
    start_kafka_cluster
  fi
}

wait_kafka() {
  local i rc=0
  if [[ $KAFKA_NODES == 1 ]]; then
    wait_healthy kafka "$KAFKA_TIMEOUT" "$LOGS/kafka-server.log" kafka_healthy "$STACK/kafka/server.properties"
    return
  fi
  for i in $(node_numbers); do
    wait_healthy "kafka-$i" "$KAFKA_TIMEOUT" "$LOGS/kafka-$i-server.log" "kafka_answers $(node_port "$i")" "$(node_marker "$i")" || rc=1
  done
  return $rc
}

# ---------------------------------------------------------------------------------------------
# Apicurio Registry 3 (Quarkus app) with SQL storage in the local PostgreSQL
# ---------------------------------------------------------------------------------------------

install_apicurio() {
  [[ -f "$APICURIO_HOME/.complete" ]] && return
  need_cmd java openjdk-17-jre-headless
  need_cmd mvn maven
  log "apicurio: fetching io.apicurio:apicurio-registry-app:$APICURIO_VERSION:tar.gz:all from Maven Central (~110 MB)…"
  mkdir -p "$CACHE"
  rm -rf "$APICURIO_HOME" "$CACHE/apicurio-dl"
  (cd "$CACHE" && mvn_q "$DEP_PLUGIN_NODESC:copy" \
      -Dartifact="io.apicurio:apicurio-registry-app:$APICURIO_VERSION:tar.gz:all" \
      -DoutputDirectory="$CACHE/apicurio-dl") || { err "apicurio: maven download failed"; return 1; }
  mkdir -p "$APICURIO_HOME"
  tar -xzf "$CACHE/apicurio-dl/apicurio-registry-app-$APICURIO_VERSION-all.tar.gz" -C "$APICURIO_HOME"
  rm -rf "$CACHE/apicurio-dl"   # the tarball stays in ~/.m2
  touch "$APICURIO_HOME/.complete"
}

start_apicurio() {
  local marker="-Dstack.dir=$STACK"
  if apicurio_healthy; then log "apicurio: already running on $HOST:$APICURIO_PORT"; return; fi
  if pid_alive "$(pid_of apicurio)" "$marker"; then log "apicurio: process running, waiting for health"; return; fi
  port_open "$HOST" "$APICURIO_PORT" && { err "port $APICURIO_PORT is taken by another process"; return 1; }
  install_apicurio
  ensure_apicurio_db
  mkdir -p "$STACK/apicurio/tmp"
  # 3.0.x ships a legacy runner jar (+ lib/); newer builds use quarkus-app/quarkus-run.jar.
  local jar="" f
  for f in "$APICURIO_HOME"/*-runner.jar "$APICURIO_HOME"/quarkus-app/quarkus-run.jar; do
    [[ -f "$f" ]] && { jar=$f; break; }
  done
  [[ -n "$jar" ]] || { err "apicurio: no runner jar in $APICURIO_HOME"; return 1; }
  log "apicurio: starting $APICURIO_VERSION on $HOST:$APICURIO_PORT (storage: postgresql db apicurio)"
  # System properties rather than env vars: exact Apicurio/Quarkus key names, visible in ps.
  # The password through the environment (Quarkus reads APICURIO_DATASOURCE_PASSWORD), out of ps.
  # A new connection may take longer than Agroal's default 5 s to acquire on a busy machine (the secured
  # stack's is TLS and SCRAM): Apicurio would exit during start-up.
  launch apicurio "$LOGS/apicurio.log" env APICURIO_DATASOURCE_PASSWORD="$APICURIO_DB_PASSWORD" \
    java -Xms64m -Xmx512m -XX:+ExitOnOutOfMemoryError \
    "$marker" \
    -Dquarkus.http.host="$HOST" -Dquarkus.http.port="$APICURIO_PORT" \
    -Dapicurio.storage.kind=sql -Dapicurio.storage.sql.kind=postgresql \
    -Dapicurio.datasource.url="$APICURIO_DB_URL" -Dapicurio.datasource.username="$APICURIO_DB_USER" \
    -Dapicurio.datasource.jdbc.initial-size=2 -Dapicurio.datasource.jdbc.min-size=2 \
    -Dapicurio.datasource.jdbc.max-size=20 \
    -Dquarkus.datasource.postgresql.jdbc.acquisition-timeout=30S \
    -Dapicurio.rest.deletion.artifact.enabled=true \
    -Dapicurio.rest.deletion.artifact-version.enabled=true \
    -Dapicurio.rest.deletion.group.enabled=true \
    -Dapicurio.storage.snapshot.location="$STACK/apicurio/tmp" \
    -Dapicurio.import.work-dir="$STACK/apicurio/tmp" \
    -Djava.io.tmpdir="$STACK/apicurio/tmp" \
    -Dquarkus.http.access-log.enabled=false \
    -Dquarkus.log.console.format='%d{yyyy-MM-dd HH:mm:ss,SSS} %-5p [%c{3.}] (%t) %s%e%n' \
    -jar "$jar"
}

# Global compatibility BACKWARD via the Confluent API (stored in Postgres; re-applied each start).
configure_apicurio() {
  local code
  code=$(curl -s -o /dev/null -w '%{http_code}' -X PUT -H 'Content-Type: application/vnd.schemaregistry.v1+json' \
    --data '{"compatibility":"BACKWARD"}' "http://$HOST:$APICURIO_PORT/apis/ccompat/v7/config")
  [[ $code == 200 ]] || { err "apicurio: setting global compatibility failed (HTTP $code)"; return 1; }
  log "apicurio: global compatibility BACKWARD"
}

# ---------------------------------------------------------------------------------------------
# ClickHouse (Debian 18.16) as a plain background process with our own config
# ---------------------------------------------------------------------------------------------

# ClickHouse's config.xml and users.xml in `dir`, one shape for the plain stack and the secured one
# (secure.sh): `listeners` are the port elements (and TLS settings) after listen_host, `users` the
# <users> element's content; the rest (paths, caches, a 2 GB per-query cap, the quota) is the same.
# A replica (below) sets, before calling: ch_cache_bytes (the mark and uncompressed caches, 256 MB
# otherwise), ch_server_extra (more server elements: ZooKeeper, macros…), ch_profile_extra (more
# settings of the default profile: pool sizes).
write_clickhouse_config() { # dir generated-by listeners users
  local dir=$1 cache=${ch_cache_bytes:-268435456}
  mkdir -p "$dir/data" "$dir/tmp" "$dir/user_files" "$dir/log"
  cat >"$dir/config.xml" <<EOF
<?xml version="1.0"?>
<!-- Generated by $2. -->
<yandex>
  <logger>
    <level>information</level>
    <log>$dir/log/clickhouse-server.log</log>
    <errorlog>$dir/log/clickhouse-server.err.log</errorlog>
    <size>50M</size>
    <count>3</count>
  </logger>
  <listen_host>$HOST</listen_host>
$3
  <path>$dir/data/</path>
  <tmp_path>$dir/tmp/</tmp_path>
  <user_files_path>$dir/user_files/</user_files_path>
  <format_schema_path>$dir/data/format_schemas/</format_schema_path>
  <users_config>users.xml</users_config>
  <default_profile>default</default_profile>
  <default_database>default</default_database>
  <!-- Fixed zone so DateTime parsing/formatting does not depend on the machine. -->
  <timezone>UTC</timezone>
  <max_connections>1024</max_connections>
  <max_concurrent_queries>50</max_concurrent_queries>
  <keep_alive_timeout>3</keep_alive_timeout>
  <mark_cache_size>$cache</mark_cache_size>
  <uncompressed_cache_size>$cache</uncompressed_cache_size>
  <mlock_executable>false</mlock_executable>
${ch_server_extra:-}
</yandex>
EOF
  cat >"$dir/users.xml" <<EOF
<?xml version="1.0"?>
<yandex>
  <profiles>
    <default>
      <!-- 2 GB per query is plenty for tests and keeps a runaway query from eating the box. -->
      <max_memory_usage>2000000000</max_memory_usage>
      <use_uncompressed_cache>0</use_uncompressed_cache>
      <load_balancing>random</load_balancing>
${ch_profile_extra:-}
    </default>
  </profiles>
  <users>
$4
  </users>
  <quotas>
    <default>
      <interval>
        <duration>3600</duration>
        <queries>0</queries><errors>0</errors><result_rows>0</result_rows>
        <read_rows>0</read_rows><execution_time>0</execution_time>
      </interval>
    </default>
  </quotas>
</yandex>
EOF
}

# The plain stack's one user (the single server and each replica): `default`, no password, loopback only.
CH_DEFAULT_USER="    <default>
      <password></password>
      <networks><ip>127.0.0.1</ip><ip>::1</ip></networks>
      <profile>default</profile>
      <quota>default</quota>
    </default>"

configure_clickhouse() {
  write_clickhouse_config "$STACK/clickhouse" "infra/local/stack.sh. Loopback only, no interserver port, small caches" \
"  <http_port>$CH_HTTP_PORT</http_port>
  <tcp_port>$CH_TCP_PORT</tcp_port>" \
"$CH_DEFAULT_USER"
}

start_clickhouse() {
  local marker="$STACK/clickhouse/config.xml"
  if pid_alive "$(pid_of clickhouse)" "$marker"; then
    if clickhouse_healthy; then log "clickhouse: already running on $HOST:$CH_HTTP_PORT"
    else log "clickhouse: process running, waiting for health"; fi
    return
  fi
  if [[ ! -x /usr/sbin/clickhouse-server ]]; then
    apt_install clickhouse-server
  fi
  # Debian's package may have started its own server (/etc/clickhouse-server) on our ports.
  local other
  other=$(pgrep -f -- '--config=/etc/clickhouse-server/config.xml' || true)
  if [[ -n "$other" ]]; then
    log "clickhouse: stopping the package's own server (pid $other) to free our ports"
    service clickhouse-server stop >/dev/null 2>&1 9>&- || kill $other || true
    sleep 2
  fi
  if port_open "$HOST" "$CH_HTTP_PORT" || port_open "$HOST" "$CH_TCP_PORT"; then
    err "port $CH_HTTP_PORT or $CH_TCP_PORT is taken by another process"; return 1
  fi
  configure_clickhouse
  log "clickhouse: starting $(dpkg-query -W -f='${Version}' clickhouse-server 2>/dev/null) on $HOST:$CH_HTTP_PORT (http) / $CH_TCP_PORT (native)"
  # Runs as the invoking user (root is accepted by 18.16); all its files are under .stack.
  launch clickhouse "$LOGS/clickhouse.log" /usr/sbin/clickhouse-server --config-file="$marker"
}

# ---------------------------------------------------------------------------------------------
# ClickHouse replicated (STACK_CLICKHOUSE_REPLICAS=3): three ZooKeeper 3.8 nodes (an ensemble) and
# three ClickHouse servers, one shard of three replicas. Node i (1-3) has the ports
# CH_REPLICA_PORT + 10i + 0 (HTTP), 1 (native), 2 (interserver HTTP), 5 (ZooKeeper client),
# 6 (ZooKeeper peer), 7 (ZooKeeper election): 8210-8217, 8220-8227, 8230-8237 by default.
# Folders $STACK/clickhouse-replicas/replica-<i>/ and $STACK/zookeeper/node-<i>/; pid files
# run/clickhouse-<i>.pid, run/zookeeper-<i>.pid; logs logs/zookeeper-<i>.log and each replica's log/.
# ---------------------------------------------------------------------------------------------

CH_REPLICAS=${STACK_CLICKHOUSE_REPLICAS:-1}
[[ $CH_REPLICAS == 1 || $CH_REPLICAS == 3 ]] || { echo "[stack] ERROR: STACK_CLICKHOUSE_REPLICAS must be 1 or 3" >&2; exit 2; }
[[ $CH_REPLICAS == 1 || $SECURE == 0 ]] || { echo "[stack] ERROR: STACK_CLICKHOUSE_REPLICAS=3 is not offered with STACK_SECURE=1" >&2; exit 2; }
CH_REPLICA_PORT=${STACK_CH_REPLICA_PORT:-8200}
# ClickHouse 18.16's ZooKeeper client fails the handshake of a 3.9 server: 3.8 it is. Kafka 3.9 ships
# its jars (it still has a ZooKeeper mode); a Kafka without them gets them from Maven Central.
ZK_VERSION=3.8.4
ZK_TIMEOUT=${STACK_ZK_TIMEOUT:-60}
REPLICAS_DIR="$STACK/clickhouse-replicas"
ZK_DIR="$STACK/zookeeper"
# The cluster's name in remote_servers (one shard, the three replicas).
CH_CLUSTER=linkmail

replica_numbers() { seq 1 3; }
replica_http_port() { echo $((CH_REPLICA_PORT + 10 * $1)); }
replica_tcp_port() { echo $((CH_REPLICA_PORT + 10 * $1 + 1)); }
replica_interserver_port() { echo $((CH_REPLICA_PORT + 10 * $1 + 2)); }
zk_client_port() { echo $((CH_REPLICA_PORT + 10 * $1 + 5)); }
zk_peer_port() { echo $((CH_REPLICA_PORT + 10 * $1 + 6)); }
zk_election_port() { echo $((CH_REPLICA_PORT + 10 * $1 + 7)); }
replica_marker() { echo "$REPLICAS_DIR/replica-$1/config.xml"; }
zk_marker() { echo "$ZK_DIR/node-$1/zoo.cfg"; }

# What CLICKHOUSE_URL should be for the configured ClickHouse: every replica's HTTP address.
clickhouse_urls() {
  local i list=()
  if [[ $CH_REPLICAS == 1 ]]; then echo "http://$HOST:$CH_HTTP_PORT"; return; fi
  for i in $(replica_numbers); do list+=("http://$HOST:$(replica_http_port "$i")"); done
  (IFS=,; echo "${list[*]}")
}

zk_classpath() {
  if compgen -G "$KAFKA_HOME/libs/zookeeper-3.8.*.jar" >/dev/null; then echo "$KAFKA_HOME/libs/*"
  else echo "$CACHE/zookeeper-$ZK_VERSION/libs/*"; fi
}

install_zookeeper() {
  install_kafka
  compgen -G "$KAFKA_HOME/libs/zookeeper-3.8.*.jar" >/dev/null && return
  local home="$CACHE/zookeeper-$ZK_VERSION"
  [[ -f "$home/.complete" ]] && return
  log "zookeeper: the cached Kafka has no 3.8 jars; fetching org.apache.zookeeper:zookeeper:$ZK_VERSION from Maven Central…"
  mkdir -p "$home"
  cat >"$home/pom.xml" <<POM
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>local.stack</groupId><artifactId>zookeeper-runtime</artifactId><version>1</version>
  <packaging>pom</packaging>
  <dependencies>
    <dependency><groupId>org.apache.zookeeper</groupId><artifactId>zookeeper</artifactId><version>$ZK_VERSION</version></dependency>
    <dependency><groupId>org.slf4j</groupId><artifactId>slf4j-reload4j</artifactId><version>1.7.36</version></dependency>
  </dependencies>
</project>
POM
  (cd "$home" && mvn_q "$DEP_PLUGIN:copy-dependencies" -DincludeScope=runtime -DoutputDirectory="$home/libs") ||
    { err "zookeeper: maven download failed"; return 1; }
  touch "$home/.complete"
}

# A node is healthy once it serves as the ensemble's leader or a follower (the four-letter `srvr`).
zk_healthy() { # node
  local out
  out=$(timeout 3 bash -c 'exec 3<>"/dev/tcp/$0/$1" || exit 1; printf srvr >&3; cat <&3' "$HOST" "$(zk_client_port "$1")" 2>/dev/null) || return 1
  [[ $out == *"Mode: leader"* || $out == *"Mode: follower"* ]]
}

# A replica is healthy once it answers a query that needs its ZooKeeper session.
replica_healthy() { # replica
  [[ "$(curl -s -m 3 --data-binary "SELECT count() > 0 FROM system.zookeeper WHERE path = '/'" \
        "http://$HOST:$(replica_http_port "$1")/" 2>/dev/null)" == 1 ]]
}

configure_zookeeper_node() { # node
  local i=$1 dir="$ZK_DIR/node-$1" j
  mkdir -p "$dir/data" "$LOGS"
  echo "$i" >"$dir/data/myid"
  {
    echo "# Generated by infra/local/stack.sh -- node $i of a three-node ZooKeeper $ZK_VERSION ensemble."
    echo "tickTime=2000"
    echo "initLimit=10"
    echo "syncLimit=5"
    echo "dataDir=$dir/data"
    echo "clientPortAddress=$HOST"
    echo "clientPort=$(zk_client_port "$i")"
    for j in $(replica_numbers); do echo "server.$j=$HOST:$(zk_peer_port "$j"):$(zk_election_port "$j")"; done
    echo "# No admin HTTP server (its Jetty is not on the class path, and it would take port 8080)."
    echo "admin.enableServer=false"
    echo "4lw.commands.whitelist=srvr,ruok,mntr"
    echo "autopurge.snapRetainCount=3"
    echo "autopurge.purgeInterval=1"
  } >"$dir/zoo.cfg"
  cat >"$dir/log4j.properties" <<L4J
log4j.rootLogger=INFO, file
log4j.appender.file=org.apache.log4j.RollingFileAppender
log4j.appender.file.File=$LOGS/zookeeper-$i-server.log
log4j.appender.file.MaxFileSize=20MB
log4j.appender.file.MaxBackupIndex=2
log4j.appender.file.layout=org.apache.log4j.PatternLayout
log4j.appender.file.layout.ConversionPattern=[%d] %p %m (%c)%n
L4J
}

configure_replica() { # replica
  local i=$1 j servers="" zookeepers=""
  for j in $(replica_numbers); do
    zookeepers+="    <node index=\"$j\"><host>$HOST</host><port>$(zk_client_port "$j")</port></node>
"
    servers+="        <replica><host>$HOST</host><port>$(replica_tcp_port "$j")</port></replica>
"
  done
  # Three servers share two cores with the rest of the stack: small caches and few background threads.
  local ch_cache_bytes=67108864
  local ch_server_extra="  <interserver_http_host>$HOST</interserver_http_host>
  <zookeeper>
$zookeepers    <session_timeout_ms>30000</session_timeout_ms>
    <operation_timeout_ms>10000</operation_timeout_ms>
  </zookeeper>
  <!-- Table paths in ZooKeeper and replica names: /clickhouse/tables/{shard}/<db>/<table>, {replica}. -->
  <macros>
    <shard>01</shard>
    <replica>replica-$i</replica>
  </macros>
  <remote_servers>
    <$CH_CLUSTER>
      <shard>
        <internal_replication>true</internal_replication>
$servers      </shard>
    </$CH_CLUSTER>
  </remote_servers>"
  local ch_profile_extra="      <background_pool_size>4</background_pool_size>
      <background_schedule_pool_size>8</background_schedule_pool_size>"
  write_clickhouse_config "$REPLICAS_DIR/replica-$i" "infra/local/stack.sh: replica $i of 3. Loopback only, small caches" \
"  <http_port>$(replica_http_port "$i")</http_port>
  <tcp_port>$(replica_tcp_port "$i")</tcp_port>
  <interserver_http_port>$(replica_interserver_port "$i")</interserver_http_port>" \
"$CH_DEFAULT_USER"
}

# Starts the ZooKeeper nodes and replicas that are not running (one that died comes back while the
# others keep serving), the replicas once the ensemble serves; then wait_replicas.
start_replicas() {
  local i port
  for i in $(replica_numbers); do
    if pid_alive "$(pid_of "zookeeper-$i")" "$(zk_marker "$i")"; then log "zookeeper-$i: already running"; continue; fi
    for port in $(zk_client_port "$i") $(zk_peer_port "$i") $(zk_election_port "$i"); do
      port_open "$HOST" "$port" && { err "port $port is taken by another process"; return 1; }
    done
    install_zookeeper
    configure_zookeeper_node "$i"
    log "zookeeper-$i: starting $ZK_VERSION on $HOST:$(zk_client_port "$i")"
    launch "zookeeper-$i" "$LOGS/zookeeper-$i.log" java -Xms32m -Xmx128m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 \
      -XX:+ExitOnOutOfMemoryError -Djava.awt.headless=true -Dlog4j.configuration="file:$ZK_DIR/node-$i/log4j.properties" \
      -Dzookeeper.jmx.log4j.disable=true -cp "$(zk_classpath)" org.apache.zookeeper.server.quorum.QuorumPeerMain "$(zk_marker "$i")"
  done
  # A replica whose tables are replicated exits at start while ZooKeeper has no quorum: wait for it.
  for i in $(replica_numbers); do
    wait_healthy "zookeeper-$i" "$ZK_TIMEOUT" "$LOGS/zookeeper-$i-server.log" "zk_healthy $i" "$(zk_marker "$i")" || return 1
  done
  [[ -x /usr/sbin/clickhouse-server ]] || apt_install_without_starting clickhouse-server
  for i in $(replica_numbers); do
    if pid_alive "$(pid_of "clickhouse-$i")" "$(replica_marker "$i")"; then log "clickhouse-$i: already running"; continue; fi
    for port in $(replica_http_port "$i") $(replica_tcp_port "$i") $(replica_interserver_port "$i"); do
      port_open "$HOST" "$port" && { err "port $port is taken by another process"; return 1; }
    done
    configure_replica "$i"
    log "clickhouse-$i: starting on $HOST:$(replica_http_port "$i") (http) / $(replica_tcp_port "$i") (native) / $(replica_interserver_port "$i") (interserver)"
    launch "clickhouse-$i" "$LOGS/clickhouse-$i.log" /usr/sbin/clickhouse-server --config-file="$(replica_marker "$i")"
  done
}

wait_replicas() {
  local i rc=0
  for i in $(replica_numbers); do
    wait_healthy "clickhouse-$i" "$CH_TIMEOUT" "$REPLICAS_DIR/replica-$i/log/clickhouse-server.err.log" "replica_healthy $i" "$(replica_marker "$i")" || rc=1
  done
  return $rc
}

# The replicas first (so they leave ZooKeeper cleanly), then the ensemble; each group all at once.
stop_replicas() {
  local i args=()
  for i in $(replica_numbers); do [[ -e "$RUN/clickhouse-$i.pid" ]] && args+=("clickhouse-$i" "$(replica_marker "$i")"); done
  [[ ${#args[@]} == 0 ]] || stop_together "${args[@]}"
  args=()
  for i in $(replica_numbers); do [[ -e "$RUN/zookeeper-$i.pid" ]] && args+=("zookeeper-$i" "$(zk_marker "$i")"); done
  [[ ${#args[@]} == 0 ]] || stop_together "${args[@]}"
}

status_replicas() {
  local i
  for i in $(replica_numbers); do
    status_line "zookeeper-$i" "$HOST:$(zk_client_port "$i") (peer $(zk_peer_port "$i"), election $(zk_election_port "$i"))" "zk_healthy $i"
  done
  for i in $(replica_numbers); do
    status_line "clickhouse-$i" "http://$HOST:$(replica_http_port "$i") tcp:$(replica_tcp_port "$i") interserver:$(replica_interserver_port "$i")" "replica_healthy $i"
  done
}

cmd_start_replicas() {
  mkdir -p "$STACK" "$RUN" "$LOGS" "$CACHE"
  start_replicas
  wait_replicas || { err "clickhouse replicas start failed (logs in $LOGS and $REPLICAS_DIR/replica-*/log)"; return 1; }
}

# ---------------------------------------------------------------------------------------------
# SMTP sink (Node; needs the repo's node_modules)
# ---------------------------------------------------------------------------------------------

start_smtp() {
  local marker="$SCRIPT_DIR/smtp-sink.mjs"
  # Returns 0 when the caller should wait for health, 1 when skipped.
  if smtp_healthy; then log "smtp: already running on $HOST:$SMTP_PORT (http $SMTP_HTTP_PORT)"; return 0; fi
  if [[ ! -d "$REPO/node_modules/smtp-server" || ! -d "$REPO/node_modules/mailparser" ]]; then
    log "smtp: skipped (run npm ci first: node_modules/smtp-server and mailparser are missing)"
    return 1
  fi
  if pid_alive "$(pid_of smtp)" "$marker"; then log "smtp: process running, waiting for health"; return 0; fi
  log "smtp: starting sink on $HOST:$SMTP_PORT (http $SMTP_HTTP_PORT, store $STACK/smtp)"
  mkdir -p "$STACK/smtp"
  launch smtp "$LOGS/smtp.log" env SMTP_SINK_PORT="$SMTP_PORT" SMTP_SINK_HTTP_PORT="$SMTP_HTTP_PORT" \
    SMTP_SINK_DIR="$STACK/smtp" node "$marker"
}

# ---------------------------------------------------------------------------------------------
# commands
# ---------------------------------------------------------------------------------------------

# The tools the tests and benchmarks use besides the services.
ensure_tools() {
  need_cmd curl curl
  # The tests make a throwaway CA for their HTTPS webhook receivers with the openssl CLI.
  need_cmd openssl openssl
  # The QR style tests decode every style with zbar too (a second decoder family besides ZXing).
  need_cmd zbarimg zbar-tools
  # The pixel-page browser test drives Debian's chromium (playwright-core downloads no browser).
  need_cmd chromium chromium
  # Benchmarks load the service with wrk (Debian's 4.1).
  need_cmd wrk wrk
  # The mail sender's day-turn test moves the sender's clock with libfaketime.
  need_cmd faketime faketime
  # The redirect benchmark compares with nginx's `return 302` (Debian's nginx-light, run on loopback
  # by the benchmark itself); its package must not start a server of its own on port 80.
  command -v nginx >/dev/null 2>&1 || apt_install_without_starting nginx-light
  # The metrics test checks every process's /metrics with promtool (Debian's prometheus package,
  # whose own server must not start).
  command -v promtool >/dev/null 2>&1 || apt_install_without_starting prometheus
  # The SMTP relay's tests submit with Debian's swaks (an SMTP client nobody here wrote).
  need_cmd swaks swaks
}

cmd_start() {
  mkdir -p "$STACK" "$RUN" "$LOGS" "$CACHE"
  log "repo $REPO, state $STACK, cache $CACHE"
  ensure_tools
  ensure_postgres
  ensure_redis
  # Downloads first (sequential: one maven local repo), then launch everything, then wait.
  start_kafka_configured
  if [[ $CH_REPLICAS == 1 ]]; then start_clickhouse; else start_replicas; fi
  start_apicurio
  local smtp=0
  start_smtp && smtp=1
  local rc=0
  wait_kafka || rc=1
  if [[ $CH_REPLICAS == 1 ]]; then
    wait_healthy clickhouse "$CH_TIMEOUT" "$STACK/clickhouse/log/clickhouse-server.err.log" clickhouse_healthy "$STACK/clickhouse/config.xml" || rc=1
  else wait_replicas || rc=1; fi
  if wait_healthy apicurio "$APICURIO_TIMEOUT" "$LOGS/apicurio.log" apicurio_healthy "-Dstack.dir=$STACK"; then
    configure_apicurio || rc=1
  else rc=1; fi
  if [[ $smtp == 1 ]]; then wait_healthy smtp "$SMTP_TIMEOUT" "$LOGS/smtp.log" smtp_healthy "$SCRIPT_DIR/smtp-sink.mjs" || rc=1; fi
  if [[ $rc != 0 ]]; then err "stack start failed (logs in $LOGS)"; return 1; fi
  log "all services up in ${SECONDS}s"
}

stop_one() { # name marker
  stop_together "$1" "$2"
}

# stop_together name marker [name marker …]: TERM to all of them at once, then waits for all (KILL
# after STOP_TIMEOUT).
stop_together() {
  local name pid start=$SECONDS
  local -A marker_of pid_of_name
  while (( $# >= 2 )); do
    name=$1 pid=$(pid_of "$1")
    if pid_alive "$pid" "$2"; then
      marker_of[$name]=$2 pid_of_name[$name]=$pid
      log "$name: stopping pid $pid"
      kill -TERM "$pid" 2>/dev/null || true
    else
      rm -f "$RUN/$name.pid"
      log "$name: not running (no live pid of ours)"
    fi
    shift 2
  done
  local left
  while :; do
    left=()
    for name in "${!pid_of_name[@]}"; do
      pid_alive "${pid_of_name[$name]}" "${marker_of[$name]}" && left+=("$name")
    done
    (( ${#left[@]} > 0 )) || break
    if (( SECONDS - start >= STOP_TIMEOUT )); then
      for name in "${left[@]}"; do
        log "$name: still alive after ${STOP_TIMEOUT}s, sending SIGKILL"
        kill -KILL "${pid_of_name[$name]}" 2>/dev/null || true
      done
      sleep 1
      break
    fi
    sleep 0.5
  done
  for name in "${!pid_of_name[@]}"; do rm -f "$RUN/$name.pid"; done
}

# The single broker, and every node of a cluster that has a pid file (whatever STACK_KAFKA_NODES says
# now); the nodes all at once, since a node left alone waits for a quorum to shut down.
stop_kafka() {
  local f name args=()
  if [[ $KAFKA_NODES == 1 || -e "$RUN/kafka.pid" ]]; then stop_one kafka "$STACK/kafka/server.properties"; fi
  for f in "$RUN"/kafka-[0-9].pid; do
    [[ -e $f ]] || continue
    name=$(basename "$f" .pid)
    args+=("$name" "$(node_marker "${name#kafka-}")")
  done
  [[ ${#args[@]} == 0 ]] || stop_together "${args[@]}"
}

cmd_stop() {
  # Apicurio first (it holds Postgres connections), Kafka last (controlled shutdown takes longest).
  stop_one smtp "$SCRIPT_DIR/smtp-sink.mjs"
  stop_one apicurio "-Dstack.dir=$STACK"
  stop_one clickhouse "$STACK/clickhouse/config.xml"
  # Replicas that run, whatever STACK_CLICKHOUSE_REPLICAS says now.
  stop_replicas
  stop_kafka
  log "stopped (postgres and redis are the machine's and keep running)"
}

status_line() { # name address check (a function, with its arguments in the same word)
  local state=down
  $3 && state=healthy
  printf '%-12s %-50s %s\n' "$1" "$2" "$state"
}

status_kafka() {
  local i
  if [[ $KAFKA_NODES == 1 ]]; then status_line kafka "$HOST:$KAFKA_PORT" kafka_healthy; return; fi
  for i in $(node_numbers); do
    status_line "kafka-$i" "$HOST:$(node_port "$i") (controller $(node_controller_port "$i"))" "kafka_answers $(node_port "$i")"
  done
}

cmd_status() {
  status_kafka
  status_line apicurio "http://$HOST:$APICURIO_PORT/apis/ccompat/v7" apicurio_healthy
  if [[ $CH_REPLICAS == 1 ]]; then status_line clickhouse "http://$HOST:$CH_HTTP_PORT tcp:$CH_TCP_PORT" clickhouse_healthy
  else status_replicas; fi
  status_line postgres "$HOST:$PG_PORT" postgres_healthy
  status_line redis "$HOST:$REDIS_PORT" redis_healthy
  status_line smtp "smtp:$HOST:$SMTP_PORT http:$SMTP_HTTP_PORT" smtp_healthy
}

cmd_reset() {
  cmd_stop
  log "reset: wiping $STACK (Kafka logs, ClickHouse data, SMTP store, logs); cache $CACHE is kept"
  rm -rf "$STACK"
  if postgres_healthy; then
    log "reset: dropping and recreating postgres database apicurio"
    pg -c "drop database if exists apicurio"
    pg -c "create database apicurio"
  else
    err "postgres is not reachable; database apicurio was not reset"
    return 1
  fi
  log "reset done; run 'start' to bring the stack back"
}

# Serialise start/stop/reset (e.g. a test runner and a developer starting the stack at once).
lock() {
  mkdir -p "$RUN"
  exec 9>"$RUN/.lock"
  flock -w 600 9 || { err "another stack.sh holds $RUN/.lock"; exit 1; }
}

# Kafka alone: a second Kafka (STACK_DIR, STACK_KAFKA_PORT) beside the stack, or a node brought back.
cmd_start_kafka() {
  mkdir -p "$STACK" "$RUN" "$LOGS" "$CACHE"
  start_kafka_configured
  wait_kafka || { err "kafka start failed (logs in $LOGS)"; return 1; }
}

# The secured stack's settings and commands (secure.sh) replace some of the above.
if [[ $SECURE == 1 ]]; then source "$SCRIPT_DIR/secure.sh"; fi

# Another STACK_DIR is for a second Kafka or ClickHouse replicas only: the other services' ports and
# Apicurio's database are the machine's, and reset would drop the latter. (A secured stack has all its
# services of its own.) `start` with STACK_CLICKHOUSE_REPLICAS=3 is run.sh's on replicas of that folder
# (a test's): cmd_start_beside.
if [[ $SECURE == 0 && -n ${STACK_DIR:-} && ${2:-} != kafka && ${2:-} != clickhouse-replicas && ${1:-} =~ ^(start|stop|reset)$ ]] \
   && ! [[ ${1:-} == start && -z ${2:-} && $CH_REPLICAS == 3 ]]; then
  err "with STACK_DIR, use: $0 start|stop|status kafka|clickhouse-replicas (or start with STACK_CLICKHOUSE_REPLICAS=3)"; exit 2
fi

# `start` in another STACK_DIR with STACK_CLICKHOUSE_REPLICAS=3 (`run.sh` on replicas of a folder and
# ports of their own, STACK_CH_REPLICA_PORT, as run-on-replicas.test.ts runs it): the replicas there,
# beside the machine's stack, which must already run (it is not started from another folder).
cmd_start_beside() {
  local down=()
  kafka_answers "$KAFKA_PORT" || down+=(kafka)
  apicurio_healthy || down+=(apicurio)
  postgres_healthy || down+=(postgres)
  redis_healthy || down+=(redis)
  if (( ${#down[@]} > 0 )); then
    err "with STACK_DIR, start runs only the ClickHouse replicas in $STACK, beside the stack; not answering: ${down[*]} (start the stack first: bash infra/local/stack.sh start)"
    return 1
  fi
  log "the stack runs; ClickHouse replicas in $STACK"
  cmd_start_replicas
}

case "${1:-} ${2:-}" in
  "start kafka") lock; cmd_start_kafka ;;
  "stop kafka") lock; stop_kafka ;;
  "status kafka") status_kafka ;;
  # The three ClickHouse replicas and their ZooKeeper ensemble alone (whatever STACK_CLICKHOUSE_REPLICAS
  # says): beside the stack, or in another STACK_DIR with STACK_CH_REPLICA_PORT (the tests' replicas).
  "start clickhouse-replicas") lock; cmd_start_replicas ;;
  "stop clickhouse-replicas") lock; stop_replicas ;;
  "status clickhouse-replicas") status_replicas ;;
  "start ") lock; if [[ $SECURE == 0 && -n ${STACK_DIR:-} ]]; then cmd_start_beside; else cmd_start; fi ;;
  "stop ") lock; cmd_stop ;;
  "status ") cmd_status ;;
  "reset ") lock; cmd_reset ;;
  # KAFKA_BROKERS for the configured Kafka (all of a cluster's nodes); run.sh exports it.
  "kafka-brokers ") kafka_brokers ;;
  # CLICKHOUSE_URL for the configured ClickHouse (all three replicas with STACK_CLICKHOUSE_REPLICAS=3); run.sh exports it.
  "clickhouse-urls ") clickhouse_urls ;;
  # Run a Kafka CLI class with the stack's classpath, e.g.
  #   stack.sh kafka-tool org.apache.kafka.tools.TopicCommand --bootstrap-server 127.0.0.1:9092 --list
  "kafka-tool "*) shift; install_kafka >&2; kafka_java "$@" ;;
  *) echo "usage: $0 start|stop|status [kafka|clickhouse-replicas] | reset | kafka-brokers | clickhouse-urls | kafka-tool <class> [args]" >&2; exit 2 ;;
esac
