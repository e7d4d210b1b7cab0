# The secured stack (STACK_SECURE=1): sourced by stack.sh after its own functions, it replaces those that
# differ. The same services, each refusing plaintext and unauthenticated clients:
#   Kafka        SASL_SSL client listener only (SCRAM-SHA-512 users made at format time); brokers talk
#                to each other over it too; the controller listener is TLS with client certificates
#   registry     nginx (Debian's nginx-light) in front of Apicurio: HTTPS + basic auth; Apicurio
#                itself listens on loopback on a port only nginx uses
#   ClickHouse   HTTPS (https_port) and native over TLS (tcp_port_secure) only; user with a password
#   Postgres     a cluster of its own (not the machine's): hostssl + scram-sha-256 only
#   Redis        a server of its own: TLS port only, ACL user with a password, the default user off
# with one local CA made once in $STACK/tls (STACK is <STACK_DIR or .stack>/secure), passwords made once
# in $STACK/secrets, and every setting a client of the service needs in $STACK/service.env.
# Ports of their own (beside the plain stack and the tests' Kafka clusters at 19000-19965), each
# overridable, so a test can start a secured stack of its own with STACK_DIR and other ports.

# Ports (README.md, "The secured stack").
REGISTRY_PORT=${STACK_REGISTRY_PORT:-16081}
APICURIO_PORT=${STACK_APICURIO_PORT:-$((REGISTRY_PORT + 1))}
CH_HTTPS_PORT=${STACK_CH_HTTPS_PORT:-16443}
CH_TCP_PORT=${STACK_CH_TCP_PORT:-16440}   # native protocol over TLS
PG_PORT=${STACK_PG_PORT:-16432}
REDIS_PORT=${STACK_REDIS_PORT:-16379}
SMTP_PORT=${STACK_SMTP_PORT:-16525}
SMTP_HTTP_PORT=${STACK_SMTP_HTTP_PORT:-16580}

TLS="$STACK/tls"
CA_FILE="$TLS/ca.crt"
SERVICE_ENV="$STACK/service.env"
# The service's user name in every service (Kafka, registry, ClickHouse, Postgres, Redis).
SERVICE_USER=service
PG_BIN_DIR=""

# ---------------------------------------------------------------------------------------------
# CA, certificate, passwords (made once; reset wipes them with the rest)
# ---------------------------------------------------------------------------------------------

secret() { # name: a password made once for this stack, kept in $STACK/secrets/<name>
  local f="$STACK/secrets/$1"
  if [[ ! -s $f ]]; then
    mkdir -p "$STACK/secrets"
    chmod 700 "$STACK/secrets"
    openssl rand -hex 16 >"$f.tmp"
    mv "$f.tmp" "$f"
  fi
  cat "$f"
}

# One CA, and one server certificate for 127.0.0.1 and localhost signed by it that every service
# presents (also as its client certificate: Kafka's brokers to its controllers).
make_tls() {
  [[ -s $TLS/server.p12 ]] && return
  need_cmd openssl openssl
  mkdir -p "$TLS"
  if [[ ! -s $TLS/ca.crt ]]; then
    log "tls: making a CA in $TLS"
    openssl req -x509 -newkey rsa:2048 -nodes -days 3650 -subj "/CN=linkmail local stack CA" \
      -keyout "$TLS/ca.key" -out "$TLS/ca.crt.tmp" 2>/dev/null
    mv "$TLS/ca.crt.tmp" "$TLS/ca.crt"
  fi
  log "tls: making the server certificate (127.0.0.1, localhost)"
  openssl req -newkey rsa:2048 -nodes -subj "/CN=localhost" -keyout "$TLS/server.key" -out "$TLS/server.csr" 2>/dev/null
  openssl x509 -req -in "$TLS/server.csr" -CA "$TLS/ca.crt" -CAkey "$TLS/ca.key" -CAcreateserial -days 825 \
    -out "$TLS/server.crt" -extfile <(printf '%s\n' 'subjectAltName=IP:127.0.0.1,DNS:localhost' \
      'extendedKeyUsage=serverAuth,clientAuth' 'keyUsage=critical,digitalSignature,keyEncipherment' 'basicConstraints=CA:FALSE') 2>/dev/null
  rm -f "$TLS/server.csr"
  # Kafka's key store (Java reads PKCS#12; its PEM key store would want an encrypted key).
  openssl pkcs12 -export -in "$TLS/server.crt" -inkey "$TLS/server.key" -certfile "$TLS/ca.crt" -name server \
    -passout "pass:$(secret keystore)" -out "$TLS/server.p12.tmp"
  mv "$TLS/server.p12.tmp" "$TLS/server.p12"
  chmod 600 "$TLS/ca.key" "$TLS/server.key" "$TLS/server.p12"
}

# ---------------------------------------------------------------------------------------------
# Kafka: SASL_SSL
# ---------------------------------------------------------------------------------------------

kafka_listener_settings() { # client-port controller-port
  cat <<EOF
# Clients and the other brokers: TLS + SASL/SCRAM-SHA-512 (users in the storage, made at format time).
listeners=SASL_SSL://$HOST:$1,CONTROLLER://$HOST:$2
advertised.listeners=SASL_SSL://$HOST:$1
controller.listener.names=CONTROLLER
inter.broker.listener.name=SASL_SSL
# The controllers: TLS, each broker known by its certificate (KRaft controllers cannot check SCRAM).
listener.security.protocol.map=CONTROLLER:SSL,SASL_SSL:SASL_SSL
listener.name.controller.ssl.client.auth=required
sasl.enabled.mechanisms=SCRAM-SHA-512
sasl.mechanism.inter.broker.protocol=SCRAM-SHA-512
listener.name.sasl_ssl.scram-sha-512.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required username="broker" password="$(secret kafka-broker)";
ssl.keystore.type=PKCS12
ssl.keystore.location=$TLS/server.p12
ssl.keystore.password=$(secret keystore)
ssl.key.password=$(secret keystore)
ssl.truststore.type=PEM
ssl.truststore.location=$CA_FILE
EOF
}

kafka_format_args() {
  printf '%s\n' --add-scram "SCRAM-SHA-512=[name=broker,password=$(secret kafka-broker)]" \
    --add-scram "SCRAM-SHA-512=[name=$SERVICE_USER,password=$(secret kafka-service)]"
}

# A cluster's nodes are formatted here, each with the SCRAM users (the plain stack's formatted copies
# in the cache have none).
format_kafka_nodes() { # node numbers
  [[ -s "$CLUSTER/cluster-id" ]] || new_cluster_id >"$CLUSTER/cluster-id"
  local i id rc=0 pids=()
  id=$(cat "$CLUSTER/cluster-id")
  for i in "$@"; do
    [[ -f "$CLUSTER/node-$i/data/meta.properties" ]] && continue
    log "kafka-$i: formatting storage (cluster id $id)"
    kafka_format -t "$id" -c "$(node_marker "$i")" >>"$LOGS/kafka-$i.log" 2>&1 &
    pids+=("$!")
  done
  for i in "${pids[@]}"; do wait "$i" || rc=1; done
  [[ $rc == 0 ]] || { err "kafka: storage format failed; see $LOGS/kafka-<n>.log"; return 1; }
}

# Health: an ApiVersions request over TLS (Kafka answers it before SASL), answered with error 0.
kafka_answers() { # port
  local out
  out=$(timeout 5 bash -c '
    { printf "\x00\x00\x00\x0c\x00\x12\x00\x00\x00\x00\x00\x01\x00\x02sh"; sleep 1; } |
      openssl s_client -brief -verify_return_error -CAfile "$2" -connect "$0:$1" 2>/dev/null | head -c 10 | od -An -tx1' \
    "$HOST" "$1" "$CA_FILE" 2>/dev/null) || return 1
  [[ "$(echo $out | cut -d' ' -f5-10)" == "00 00 00 01 00 00" ]]
}

# For Kafka's own tools (kafka-console-producer etc.): `--command-config`/`--producer.config` this file.
write_kafka_client_properties() {
  cat >"$STACK/kafka-client.properties" <<EOF
security.protocol=SASL_SSL
sasl.mechanism=SCRAM-SHA-512
sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required username="$SERVICE_USER" password="$(secret kafka-service)";
ssl.truststore.type=PEM
ssl.truststore.location=$CA_FILE
EOF
  chmod 600 "$STACK/kafka-client.properties"
}

# ---------------------------------------------------------------------------------------------
# Postgres: a cluster of the stack's own (the machine's, on 5432 with trust, stays as it is)
# ---------------------------------------------------------------------------------------------

PG_DIR="$STACK/postgres"

ensure_pg_bin() { # the newest installed Postgres's programs (initdb, pg_ctl) in PG_BIN_DIR
  ls -d /usr/lib/postgresql/*/bin >/dev/null 2>&1 || apt_install_without_starting postgresql
  PG_BIN_DIR=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -n1)
}

# Postgres refuses to run as root: then as the package's user postgres.
as_pg() { if [[ $(id -u) == 0 ]]; then runuser -u postgres -- "$@"; else "$@"; fi; }

pg() { # psql as the superuser, over TLS
  PGPASSWORD=$(secret postgres) psql "host=$HOST port=$PG_PORT user=postgres dbname=postgres sslmode=verify-full sslrootcert=$CA_FILE" \
    -v ON_ERROR_STOP=1 -qAt "$@"
}

postgres_pid() { [[ -f "$PG_DIR/data/postmaster.pid" ]] && head -n1 "$PG_DIR/data/postmaster.pid" || true; }

ensure_postgres() {
  if pid_alive "$(postgres_pid)" "$PG_DIR/data" && postgres_healthy; then log "postgres: already running on $HOST:$PG_PORT"; return; fi
  port_open "$HOST" "$PG_PORT" && { err "port $PG_PORT is taken by another process"; return 1; }
  ensure_pg_bin
  need_cmd psql postgresql-client
  local owner
  owner=$(id -un)
  [[ $(id -u) == 0 ]] && owner=postgres
  mkdir -p "$PG_DIR"
  chown "$owner:" "$PG_DIR"
  if [[ ! -f "$PG_DIR/data/PG_VERSION" ]]; then
    log "postgres: initdb in $PG_DIR/data"
    secret postgres >"$PG_DIR/pwfile"
    chown "$owner:" "$PG_DIR/pwfile"
    chmod 600 "$PG_DIR/pwfile"
    as_pg "$PG_BIN_DIR/initdb" -D "$PG_DIR/data" -U postgres --pwfile="$PG_DIR/pwfile" --auth=scram-sha-256 \
      -E UTF8 --locale=C >>"$PG_DIR/initdb.log" 2>&1 || { err "postgres: initdb failed; see $PG_DIR/initdb.log"; return 1; }
    rm -f "$PG_DIR/pwfile"
    echo "include 'stack.conf'" >>"$PG_DIR/data/postgresql.conf"
  fi
  # Postgres reads its key only if the server's user owns it and nobody else can.
  install -o "$owner" -m 600 "$TLS/server.key" "$PG_DIR/data/server.key"
  install -o "$owner" -m 644 "$TLS/server.crt" "$PG_DIR/data/server.crt"
  cat >"$PG_DIR/data/stack.conf" <<EOF
# Generated by infra/local/secure.sh.
listen_addresses = '$HOST'
port = $PG_PORT
unix_socket_directories = ''
ssl = on
ssl_cert_file = 'server.crt'
ssl_key_file = 'server.key'
password_encryption = 'scram-sha-256'
max_connections = 200
shared_buffers = 64MB
EOF
  # TLS and a password, from loopback, nothing else.
  echo "hostssl all all $HOST/32 scram-sha-256" >"$PG_DIR/data/pg_hba.conf"
  chown "$owner:" "$PG_DIR/data/stack.conf" "$PG_DIR/data/pg_hba.conf"
  log "postgres: starting $(basename "$(dirname "$PG_BIN_DIR")") on $HOST:$PG_PORT (TLS + password only)"
  as_pg "$PG_BIN_DIR/pg_ctl" -D "$PG_DIR/data" -l "$PG_DIR/postgres.log" -w -t 60 start >/dev/null 9>&- ||
    { err "postgres did not start; see $PG_DIR/postgres.log"; tail -n 20 "$PG_DIR/postgres.log" >&2; return 1; }
  ensure_pg_user "$SERVICE_USER" "$(secret postgres-service)" linkmail
  log "postgres: healthy on $HOST:$PG_PORT"
}

ensure_pg_user() { # role password database: a login role that may create databases, owning the database
  if [[ "$(pg -c "select 1 from pg_roles where rolname='$1'")" != 1 ]]; then
    pg -c "create role \"$1\" login createdb password '$2'"
  else
    pg -c "alter role \"$1\" with login createdb password '$2'"
  fi
  [[ "$(pg -c "select 1 from pg_database where datname='$3'")" == 1 ]] || pg -c "create database \"$3\" owner \"$1\""
}

postgres_healthy() { command -v pg_isready >/dev/null && pg_isready -q -h "$HOST" -p "$PG_PORT"; }

stop_postgres() {
  if pid_alive "$(postgres_pid)" "$PG_DIR/data"; then
    log "postgres: stopping"
    ensure_pg_bin
    as_pg "$PG_BIN_DIR/pg_ctl" -D "$PG_DIR/data" -m fast -w -t "$STOP_TIMEOUT" stop >/dev/null 9>&- || true
  else
    log "postgres: not running"
  fi
}

# Apicurio's storage: a database and a role of its own in the stack's Postgres, over TLS.
ensure_apicurio_db() { ensure_pg_user apicurio "$(secret postgres-apicurio)" apicurio; }
APICURIO_DB_URL="jdbc:postgresql://$HOST:$PG_PORT/apicurio?sslmode=verify-full&sslrootcert=$CA_FILE"
APICURIO_DB_USER=apicurio
APICURIO_DB_PASSWORD='' # set in cmd_start (secret makes files: not while merely sourcing)

# ---------------------------------------------------------------------------------------------
# Redis: a server of the stack's own, TLS only, an ACL user
# ---------------------------------------------------------------------------------------------

redis_cli() { REDISCLI_AUTH=$(secret redis-service) redis-cli --tls --cacert "$CA_FILE" -h "$HOST" -p "$REDIS_PORT" --user "$SERVICE_USER" "$@"; }
redis_healthy() { command -v redis-cli >/dev/null && [[ "$(redis_cli ping 2>/dev/null)" == PONG ]]; }

ensure_redis() {
  local conf="$STACK/redis/redis.conf"
  if pid_alive "$(pid_of redis)" "$conf"; then log "redis: already running on $HOST:$REDIS_PORT (TLS)"; return; fi
  port_open "$HOST" "$REDIS_PORT" && { err "port $REDIS_PORT is taken by another process"; return 1; }
  if ! command -v redis-server >/dev/null; then apt_install_without_starting redis-server; fi
  need_cmd redis-cli redis-tools
  mkdir -p "$STACK/redis"
  cat >"$conf" <<EOF
# Generated by infra/local/secure.sh: TLS only, no plaintext port; the default user off.
bind $HOST
port 0
tls-port $REDIS_PORT
tls-cert-file $TLS/server.crt
tls-key-file $TLS/server.key
tls-ca-cert-file $CA_FILE
tls-auth-clients no
user default off
user $SERVICE_USER on >$(secret redis-service) ~* &* +@all
save ""
appendonly no
dir $STACK/redis
# Our marker (the config file) stays in the process title.
proc-title-template "{title} {listen-addr} {server-mode} {config-file}"
EOF
  chmod 600 "$conf"
  log "redis: starting $(redis-server --version | grep -o 'v=[0-9.]*') on $HOST:$REDIS_PORT (TLS only)"
  launch redis "$LOGS/redis.log" redis-server "$conf"
  for _ in $(seq 1 40); do redis_healthy && break; sleep 0.5; done
  redis_healthy || { err "redis not reachable on $HOST:$REDIS_PORT; see $LOGS/redis.log"; tail -n 20 "$LOGS/redis.log" >&2; return 1; }
  log "redis: healthy on $HOST:$REDIS_PORT"
}

# ---------------------------------------------------------------------------------------------
# ClickHouse: HTTPS and native over TLS only, the service's user with a password
# ---------------------------------------------------------------------------------------------

clickhouse_healthy() { [[ "$(curl -s -m 3 --cacert "$CA_FILE" "https://$HOST:$CH_HTTPS_PORT/ping" 2>/dev/null)" == "Ok." ]]; }

configure_clickhouse() {
  local dir="$STACK/clickhouse" hash
  hash=$(printf '%s' "$(secret clickhouse-service)" | sha256sum | cut -d' ' -f1)
  # HTTPS and native over TLS, no plaintext port; no user "default": a request without credentials is refused.
  write_clickhouse_config "$dir" "infra/local/secure.sh. Loopback only; HTTPS and native over TLS, no plaintext port" \
"  <https_port>$CH_HTTPS_PORT</https_port>
  <tcp_port_secure>$CH_TCP_PORT</tcp_port_secure>
  <openSSL>
    <server>
      <certificateFile>$TLS/server.crt</certificateFile>
      <privateKeyFile>$TLS/server.key</privateKeyFile>
      <verificationMode>none</verificationMode>
      <loadDefaultCAFile>false</loadDefaultCAFile>
      <cacheSessions>true</cacheSessions>
      <disableProtocols>sslv2,sslv3,tlsv1,tlsv1_1</disableProtocols>
      <preferServerCiphers>true</preferServerCiphers>
    </server>
  </openSSL>" \
"    <$SERVICE_USER>
      <password_sha256_hex>$hash</password_sha256_hex>
      <networks><ip>127.0.0.1</ip><ip>::1</ip></networks>
      <profile>default</profile>
      <quota>default</quota>
    </$SERVICE_USER>"
  chmod 600 "$dir/users.xml"
}

start_clickhouse() {
  local marker="$STACK/clickhouse/config.xml"
  if pid_alive "$(pid_of clickhouse)" "$marker"; then log "clickhouse: already running on $HOST:$CH_HTTPS_PORT (https)"; return; fi
  [[ -x /usr/sbin/clickhouse-server ]] || apt_install_without_starting clickhouse-server
  if port_open "$HOST" "$CH_HTTPS_PORT" || port_open "$HOST" "$CH_TCP_PORT"; then
    err "port $CH_HTTPS_PORT or $CH_TCP_PORT is taken by another process"; return 1
  fi
  configure_clickhouse
  log "clickhouse: starting on https://$HOST:$CH_HTTPS_PORT (native over TLS $CH_TCP_PORT)"
  launch clickhouse "$LOGS/clickhouse.log" /usr/sbin/clickhouse-server --config-file="$marker"
}

# ---------------------------------------------------------------------------------------------
# The registry: nginx in front of Apicurio, HTTPS + basic auth. nginx because Debian's nginx-light
# (already installed for the redirect benchmark) does both in a few lines of config, with a password
# file openssl writes; Apicurio's own TLS and auth would need an OIDC server.
# ---------------------------------------------------------------------------------------------

registry_url() { echo "https://$HOST:$REGISTRY_PORT/apis/ccompat/v7"; }
registry_healthy() {
  [[ "$(curl -s -o /dev/null -m 3 --cacert "$CA_FILE" -u "$SERVICE_USER:$(secret registry-service)" -w '%{http_code}' "$(registry_url)/subjects" 2>/dev/null)" == 200 ]]
}

start_registry_proxy() {
  local dir="$STACK/nginx" marker="$STACK/nginx/nginx.conf"
  if pid_alive "$(pid_of nginx)" "$marker"; then log "registry proxy: already running on $HOST:$REGISTRY_PORT"; return; fi
  port_open "$HOST" "$REGISTRY_PORT" && { err "port $REGISTRY_PORT is taken by another process"; return 1; }
  command -v nginx >/dev/null 2>&1 || apt_install_without_starting nginx-light
  mkdir -p "$dir/tmp"
  printf '%s:%s\n' "$SERVICE_USER" "$(openssl passwd -apr1 "$(secret registry-service)")" >"$dir/htpasswd"
  chmod 644 "$dir/htpasswd"
  cat >"$marker" <<EOF
# Generated by infra/local/secure.sh: HTTPS with basic auth in front of Apicurio on $HOST:$APICURIO_PORT.
user $(id -un) $(id -gn);
worker_processes 1;
daemon off;
pid $dir/nginx.pid;
error_log $LOGS/nginx.log warn;
events { worker_connections 256; }
http {
  access_log off;
  client_body_temp_path $dir/tmp/body;
  proxy_temp_path $dir/tmp/proxy;
  fastcgi_temp_path $dir/tmp/fastcgi;
  uwsgi_temp_path $dir/tmp/uwsgi;
  scgi_temp_path $dir/tmp/scgi;
  client_max_body_size 16m;
  server {
    listen $HOST:$REGISTRY_PORT ssl;
    ssl_certificate $TLS/server.crt;
    ssl_certificate_key $TLS/server.key;
    ssl_protocols TLSv1.2 TLSv1.3;
    auth_basic "schema registry";
    auth_basic_user_file $dir/htpasswd;
    location / {
      proxy_pass http://$HOST:$APICURIO_PORT;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_set_header Host \$host:\$server_port;
      proxy_set_header X-Forwarded-Proto https;
      proxy_set_header Authorization "";
    }
  }
}
EOF
  log "registry proxy: starting nginx on https://$HOST:$REGISTRY_PORT (Apicurio on $HOST:$APICURIO_PORT)"
  launch nginx "$LOGS/nginx.log" nginx -c "$marker"
}

# ---------------------------------------------------------------------------------------------
# service.env: every setting a client of the service needs, NAME=value a line (no quotes: also for
# `node --env-file` and `docker --env-file`)
# ---------------------------------------------------------------------------------------------

write_service_env() {
  cat >"$SERVICE_ENV.tmp" <<EOF
KAFKA_BROKERS=$(kafka_brokers)
KAFKA_SSL=on
KAFKA_SSL_CA_FILE=$CA_FILE
KAFKA_SASL_MECHANISM=scram-sha-512
KAFKA_SASL_USERNAME=$SERVICE_USER
KAFKA_SASL_PASSWORD=$(secret kafka-service)
SCHEMA_REGISTRY_URL=$(registry_url)
SCHEMA_REGISTRY_USERNAME=$SERVICE_USER
SCHEMA_REGISTRY_PASSWORD=$(secret registry-service)
SCHEMA_REGISTRY_CA_FILE=$CA_FILE
CLICKHOUSE_URL=https://$HOST:$CH_HTTPS_PORT
CLICKHOUSE_CA_FILE=$CA_FILE
CLICKHOUSE_USER=$SERVICE_USER
CLICKHOUSE_PASSWORD=$(secret clickhouse-service)
DATABASE_URL=postgres://$SERVICE_USER:$(secret postgres-service)@$HOST:$PG_PORT/linkmail?sslmode=verify-full&sslrootcert=$CA_FILE
REDIS_URL=rediss://$SERVICE_USER:$(secret redis-service)@$HOST:$REDIS_PORT/0
REDIS_CA_FILE=$CA_FILE
SMTP_URL=smtp://$HOST:$SMTP_PORT
EOF
  chmod 600 "$SERVICE_ENV.tmp"
  mv "$SERVICE_ENV.tmp" "$SERVICE_ENV"
}

# ---------------------------------------------------------------------------------------------
# commands
# ---------------------------------------------------------------------------------------------

cmd_start() {
  mkdir -p "$STACK" "$RUN" "$LOGS" "$CACHE"
  log "secured stack: state $STACK, cache $CACHE"
  ensure_tools
  make_tls
  APICURIO_DB_PASSWORD=$(secret postgres-apicurio)
  ensure_postgres
  ensure_redis
  start_kafka_configured
  start_clickhouse
  start_apicurio
  local smtp=0
  start_smtp && smtp=1
  local rc=0
  wait_kafka || rc=1
  wait_healthy clickhouse "$CH_TIMEOUT" "$STACK/clickhouse/log/clickhouse-server.err.log" clickhouse_healthy "$STACK/clickhouse/config.xml" || rc=1
  if wait_healthy apicurio "$APICURIO_TIMEOUT" "$LOGS/apicurio.log" apicurio_healthy "-Dstack.dir=$STACK"; then
    configure_apicurio || rc=1
    if start_registry_proxy; then
      wait_healthy nginx 30 "$LOGS/nginx.log" registry_healthy "$STACK/nginx/nginx.conf" || rc=1
    else rc=1; fi
  else rc=1; fi
  if [[ $smtp == 1 ]]; then wait_healthy smtp "$SMTP_TIMEOUT" "$LOGS/smtp.log" smtp_healthy "$SCRIPT_DIR/smtp-sink.mjs" || rc=1; fi
  write_kafka_client_properties
  write_service_env
  if [[ $rc != 0 ]]; then err "secured stack start failed (logs in $LOGS)"; return 1; fi
  log "all services up in ${SECONDS}s; their settings: $SERVICE_ENV"
}

cmd_stop() {
  stop_one smtp "$SCRIPT_DIR/smtp-sink.mjs"
  stop_one nginx "$STACK/nginx/nginx.conf"
  stop_one apicurio "-Dstack.dir=$STACK"
  stop_one clickhouse "$STACK/clickhouse/config.xml"
  stop_kafka
  stop_one redis "$STACK/redis/redis.conf"
  stop_postgres
  log "secured stack stopped"
}

cmd_status() {
  [[ -s $CA_FILE ]] || { log "no secured stack in $STACK"; return 0; }
  status_kafka
  status_line registry "$(registry_url)" registry_healthy
  status_line clickhouse "https://$HOST:$CH_HTTPS_PORT tls:$CH_TCP_PORT" clickhouse_healthy
  status_line postgres "$HOST:$PG_PORT (hostssl)" postgres_healthy
  status_line redis "rediss://$HOST:$REDIS_PORT" redis_healthy
  status_line smtp "smtp:$HOST:$SMTP_PORT http:$SMTP_HTTP_PORT" smtp_healthy
}

cmd_reset() {
  cmd_stop
  log "reset: wiping $STACK (CA, passwords, every service's data); cache $CACHE is kept"
  rm -rf "$STACK"
}

# Kafka alone (a test's own secured Kafka): with the CA and the client properties it needs.
cmd_start_kafka() {
  mkdir -p "$STACK" "$RUN" "$LOGS" "$CACHE"
  make_tls
  write_kafka_client_properties
  start_kafka_configured
  wait_kafka || { err "kafka start failed (logs in $LOGS)"; return 1; }
}
