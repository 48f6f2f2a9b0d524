#!/usr/bin/env bash
# Single-node Apache Kafka broker (KRaft, combined broker+controller) on loopback,
# for development and tests. The real broker jars come from Maven Central via
# scripts/kafka/pom.xml; nothing is installed system-wide, nothing is written to git.
#
# Usage: scripts/kafka/kafka.sh {fetch|start|stop|status|reset|logs}
#
#   fetch   copy the broker jars into $KAFKA_CACHE_DIR/libs (once; marker file)
#   start   fetch if needed, format storage if needed, start the broker in the
#           background and wait until it answers admin requests; last line of
#           output is KAFKA_BROKERS=127.0.0.1:<port>. No-op if already running.
#   stop    SIGTERM, wait up to 30 s, then SIGKILL. Ok if not running.
#   status  exit 0 if running (and the port accepts connections), 1 otherwise
#   reset   stop, then delete the data dir (topics, offsets, logs)
#   logs    print the last ${KAFKA_LOG_LINES:-100} lines of the broker log
#
# Typical use:  eval "$(scripts/kafka/kafka.sh start | tail -n1)"   # sets KAFKA_BROKERS
#
# Environment (defaults):
#   KAFKA_VERSION=4.4.0                 org.apache.kafka:kafka_2.13 version (3.9.1 also works)
#   KAFKA_CACHE_DIR=$HOME/.cache/dl-billing/kafka-$KAFKA_VERSION
#   KAFKA_PORT=39092                    PLAINTEXT listener (127.0.0.1 only)
#   KAFKA_CONTROLLER_PORT=39093         KRaft CONTROLLER listener (127.0.0.1 only)
#   KAFKA_DATA_DIR=$KAFKA_CACHE_DIR/data-$KAFKA_PORT
#   KAFKA_PARTITIONS=4                  num.partitions for auto-created topics
#   KAFKA_HEAP_OPTS="-Xmx512m -Xms256m"
#   KAFKA_JVM_OPTS=""                   extra JVM flags for the broker
#   KAFKA_START_TIMEOUT=90              seconds to wait for readiness
#   KAFKA_EXTRA_PROPERTIES=""           extra server.properties lines (newline-separated)
set -euo pipefail

SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)"
POM="$SCRIPT_DIR/pom.xml"

KAFKA_VERSION="${KAFKA_VERSION:-4.4.0}"
KAFKA_CACHE_DIR="${KAFKA_CACHE_DIR:-${HOME:-/tmp}/.cache/dl-billing/kafka-$KAFKA_VERSION}"
KAFKA_PORT="${KAFKA_PORT:-39092}"
KAFKA_CONTROLLER_PORT="${KAFKA_CONTROLLER_PORT:-39093}"
KAFKA_DATA_DIR="${KAFKA_DATA_DIR:-$KAFKA_CACHE_DIR/data-$KAFKA_PORT}"
KAFKA_PARTITIONS="${KAFKA_PARTITIONS:-4}"
KAFKA_HEAP_OPTS="${KAFKA_HEAP_OPTS:--Xmx512m -Xms256m}"
KAFKA_JVM_OPTS="${KAFKA_JVM_OPTS:-}"
KAFKA_START_TIMEOUT="${KAFKA_START_TIMEOUT:-90}"
KAFKA_EXTRA_PROPERTIES="${KAFKA_EXTRA_PROPERTIES:-}"

HOST=127.0.0.1
LIBS="$KAFKA_CACHE_DIR/libs"
MARKER="$LIBS/.fetched"
PID_FILE="$KAFKA_DATA_DIR/kafka.pid"
PROPS="$KAFKA_DATA_DIR/server.properties"
LOG_DIR="$KAFKA_DATA_DIR/logs"
SERVER_LOG="$LOG_DIR/server.log"
STDOUT_LOG="$LOG_DIR/kafka.out"
if [[ -n "${JAVA_HOME:-}" && -x "$JAVA_HOME/bin/java" ]]; then JAVA="$JAVA_HOME/bin/java"; else JAVA=java; fi

say() { printf 'kafka.sh: %s\n' "$*"; }
die() { printf 'kafka.sh: error: %s\n' "$*" >&2; exit 1; }

# ---------------------------------------------------------------- helpers

port_open() { (exec 3<>"/dev/tcp/$HOST/$1") 2>/dev/null; }

# The marker records what was fetched; a changed pom or version triggers a re-fetch.
marker_content() { printf '%s %s\n' "$KAFKA_VERSION" "$(sha256sum "$POM" | cut -d' ' -f1)"; }

jar_count() { local -a f=("$LIBS"/*.jar); echo "${#f[@]}"; }

fetched() { [[ -f "$MARKER" ]] && [[ "$(cat "$MARKER")" == "$(marker_content)" ]]; }

# pid of the broker that this script started for this data dir, or nothing.
broker_pid() {
  local pid=""
  if [[ -f "$PID_FILE" ]]; then
    pid="$(cat "$PID_FILE" 2>/dev/null || true)"
    if [[ "$pid" =~ ^[0-9]+$ ]] && is_our_broker "$pid"; then echo "$pid"; return 0; fi
  fi
  # pid file lost or stale: look for a java process running our server.properties
  local d
  for d in /proc/[0-9]*; do
    pid="${d#/proc/}"
    if is_our_broker "$pid"; then echo "$pid"; return 0; fi
  done
  return 0
}

# True if pid $1 is a JVM running `kafka.Kafka <our server.properties>` (no forks: cheap for a /proc scan).
is_our_broker() {
  local -a argv
  { mapfile -d '' -t argv <"/proc/$1/cmdline"; } 2>/dev/null || return 1
  local n=${#argv[@]}
  ((n >= 2)) && [[ "${argv[n-2]}" == kafka.Kafka && "${argv[n-1]}" == "$PROPS" ]]
}

# Command prefix for short-lived tool JVMs (storage format, readiness probe):
# small heap, C1 only, logging to a file in the data dir.
tool_java() {
  TOOL_JAVA=("$JAVA" -Xmx256m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -Djava.awt.headless=true
    "-Dlog4j2.configurationFile=$KAFKA_DATA_DIR/log4j2-tools.properties"
    "-Dlog4j.configuration=file:$KAFKA_DATA_DIR/log4j-tools.properties" -cp "$LIBS/*")
}

# ---------------------------------------------------------------- fetch

cmd_fetch() {
  if fetched; then
    say "jars already in $LIBS (kafka_2.13 $KAFKA_VERSION, $(jar_count) jars)"
    return 0
  fi
  command -v mvn >/dev/null || die "mvn not found (apt-get install maven)"
  mkdir -p "$KAFKA_CACHE_DIR"
  # Serialise concurrent fetches (e.g. parallel test jobs); the lock fd lives only in this subshell.
  (
    flock -w 900 8 || die "could not lock $KAFKA_CACHE_DIR/.fetch.lock"
    if fetched; then
      say "jars already in $LIBS (fetched concurrently)"
    else
      do_fetch
    fi
  ) 8>"$KAFKA_CACHE_DIR/.fetch.lock"
}

do_fetch() {
  local tmp="$KAFKA_CACHE_DIR/libs.tmp.$$" log="$KAFKA_CACHE_DIR/fetch.log" t0=$SECONDS
  local -a extra=()
  # Kafka 3.x brings its own slf4j-reload4j binding; 4.x needs the pom's log4j2 profile.
  [[ "$KAFKA_VERSION" == [0-3].* ]] && extra+=(-Dkafka.legacy.logging=true)
  rm -rf "$tmp"
  # -f makes it independent of the cwd; output goes to a log (shown on failure).
  if ! mvn -q -B -Dstyle.color=never -f "$POM" dependency:copy-dependencies \
      -Dkafka.version="$KAFKA_VERSION" -DoutputDirectory="$tmp" "${extra[@]}" >"$log" 2>&1; then
    rm -rf "$tmp"
    tail -n 50 "$log" >&2
    die "mvn dependency:copy-dependencies failed for kafka_2.13:$KAFKA_VERSION (full log: $log)"
  fi
  [[ -f "$tmp/kafka_2.13-$KAFKA_VERSION.jar" ]] || die "kafka_2.13-$KAFKA_VERSION.jar missing after fetch"
  rm -rf "$LIBS"
  mv "$tmp" "$LIBS"
  marker_content >"$MARKER"
  say "fetched kafka_2.13 $KAFKA_VERSION ($(jar_count) jars, $(du -sh "$LIBS" | cut -f1)) into $LIBS in $((SECONDS - t0))s"
}

# ---------------------------------------------------------------- config

write_config() {
  mkdir -p "$KAFKA_DATA_DIR" "$LOG_DIR"
  cat >"$PROPS" <<EOF
# Generated by scripts/kafka/kafka.sh -- rewritten on every start.
process.roles=broker,controller
node.id=1
controller.quorum.bootstrap.servers=$HOST:$KAFKA_CONTROLLER_PORT
listeners=PLAINTEXT://$HOST:$KAFKA_PORT,CONTROLLER://$HOST:$KAFKA_CONTROLLER_PORT
advertised.listeners=PLAINTEXT://$HOST:$KAFKA_PORT,CONTROLLER://$HOST:$KAFKA_CONTROLLER_PORT
listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT
inter.broker.listener.name=PLAINTEXT
controller.listener.names=CONTROLLER
log.dirs=$KAFKA_DATA_DIR/kraft-logs

# single node: every replication factor is 1
default.replication.factor=1
min.insync.replicas=1
offsets.topic.replication.factor=1
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
share.coordinator.state.topic.replication.factor=1
share.coordinator.state.topic.min.isr=1
# fewer internal partitions = faster first group join / first transaction
offsets.topic.num.partitions=4
transaction.state.log.num.partitions=4

num.partitions=$KAFKA_PARTITIONS
auto.create.topics.enable=true
delete.topic.enable=true
group.initial.rebalance.delay.ms=0

# small machine
num.network.threads=2
num.io.threads=4
background.threads=4
num.recovery.threads.per.data.dir=1

# test-sized logs
log.segment.bytes=8388608
log.retention.ms=3600000
log.retention.bytes=67108864
log.retention.check.interval.ms=60000
offsets.topic.segment.bytes=8388608
transaction.state.log.segment.bytes=8388608
metadata.log.segment.bytes=8388608
metadata.max.retention.bytes=67108864
EOF
  if [[ -n "$KAFKA_EXTRA_PROPERTIES" ]]; then
    printf '\n# KAFKA_EXTRA_PROPERTIES\n%s\n' "$KAFKA_EXTRA_PROPERTIES" >>"$PROPS"
  fi

  # Broker logging: everything to a size-capped file in the data dir, nothing to stdout.
  # The log4j2 config is used by Kafka 4.x, the log4j 1 (reload4j) one by 3.x; both are passed.
  cat >"$KAFKA_DATA_DIR/log4j2.properties" <<EOF
status = error
dest = err
appender.file.type = RollingFile
appender.file.name = FILE
appender.file.fileName = $SERVER_LOG
appender.file.filePattern = $SERVER_LOG.%i
appender.file.layout.type = PatternLayout
appender.file.layout.pattern = [%d] %p %m (%c)%n
appender.file.policies.type = Policies
appender.file.policies.size.type = SizeBasedTriggeringPolicy
appender.file.policies.size.size = 20MB
appender.file.strategy.type = DefaultRolloverStrategy
appender.file.strategy.max = 3
rootLogger.level = INFO
rootLogger.appenderRef.file.ref = FILE
logger.statechange.name = state.change.logger
logger.statechange.level = WARN
logger.request.name = kafka.request.logger
logger.request.level = WARN
EOF
  cat >"$KAFKA_DATA_DIR/log4j.properties" <<EOF
log4j.rootLogger=INFO, file
log4j.appender.file=org.apache.log4j.RollingFileAppender
log4j.appender.file.File=$SERVER_LOG
log4j.appender.file.MaxFileSize=20MB
log4j.appender.file.MaxBackupIndex=3
log4j.appender.file.layout=org.apache.log4j.PatternLayout
log4j.appender.file.layout.ConversionPattern=[%d] %p %m (%c)%n
log4j.logger.state.change.logger=WARN
log4j.logger.kafka.request.logger=WARN
EOF
  # CLI tools (storage format, readiness probe): warnings to a file.
  cat >"$KAFKA_DATA_DIR/log4j2-tools.properties" <<EOF
status = error
dest = err
appender.file.type = File
appender.file.name = FILE
appender.file.fileName = $LOG_DIR/tools.log
appender.file.layout.type = PatternLayout
appender.file.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = WARN
rootLogger.appenderRef.file.ref = FILE
EOF
  cat >"$KAFKA_DATA_DIR/log4j-tools.properties" <<EOF
log4j.rootLogger=WARN, file
log4j.appender.file=org.apache.log4j.FileAppender
log4j.appender.file.File=$LOG_DIR/tools.log
log4j.appender.file.layout=org.apache.log4j.PatternLayout
log4j.appender.file.layout.ConversionPattern=[%d] %p %m (%c)%n
EOF
}

format_storage() {
  local meta="$KAFKA_DATA_DIR/kraft-logs/meta.properties"
  [[ -f "$meta" ]] && return 0
  # Random 16-byte base64url cluster id, as `kafka-storage random-uuid` would print
  # (avoid a leading '-', which CLI parsers would take for an option).
  local cid
  cid="$(head -c 16 /dev/urandom | base64 | tr '+/' '-_' | tr -d '=\n')"
  [[ "$cid" == -* ]] && cid="A${cid:1}"
  tool_java
  if ! "${TOOL_JAVA[@]}" kafka.tools.StorageTool format --config "$PROPS" --cluster-id "$cid" --standalone \
      >"$LOG_DIR/format.out" 2>&1; then
    cat "$LOG_DIR/format.out" >&2
    die "kafka-storage format failed"
  fi
}

# ---------------------------------------------------------------- start / stop

print_tail() {
  local f
  for f in "$STDOUT_LOG" "$SERVER_LOG"; do
    if [[ -s "$f" ]]; then
      printf -- '----- last 50 lines of %s -----\n' "$f" >&2
      tail -n 50 "$f" >&2
    fi
  done
}

# Ready = process alive, PLAINTEXT port accepts connections, and a real admin
# request (list topics: ApiVersions + Metadata via the bundled TopicCommand) succeeds.
wait_ready() {
  local pid="$1" deadline=$((SECONDS + KAFKA_START_TIMEOUT))
  tool_java
  while ((SECONDS < deadline)); do
    kill -0 "$pid" 2>/dev/null || { print_tail; die "broker process $pid exited during startup"; }
    if port_open "$KAFKA_PORT" && grep -qs 'Kafka Server started' "$SERVER_LOG"; then
      if timeout 30 "${TOOL_JAVA[@]}" org.apache.kafka.tools.TopicCommand \
          --bootstrap-server "$HOST:$KAFKA_PORT" --list >"$LOG_DIR/probe.out" 2>&1; then
        return 0
      fi
    fi
    sleep 0.5
  done
  print_tail
  die "broker not ready after ${KAFKA_START_TIMEOUT}s"
}

cmd_start() {
  fetched || cmd_fetch
  mkdir -p "$KAFKA_DATA_DIR"
  exec 9>"$KAFKA_DATA_DIR/.lock"
  flock -w 120 9 || die "could not lock $KAFKA_DATA_DIR/.lock"

  local pid
  pid="$(broker_pid)"
  if [[ -n "$pid" ]]; then
    if port_open "$KAFKA_PORT"; then
      echo "$pid" >"$PID_FILE"
      say "already running (pid $pid, data $KAFKA_DATA_DIR)"
      echo "KAFKA_BROKERS=$HOST:$KAFKA_PORT"
      return 0
    fi
    # ours but not listening (still starting, or wedged): wait for it like a fresh start
    say "broker pid $pid is running but port $KAFKA_PORT is not open yet; waiting"
    wait_ready "$pid"
    echo "KAFKA_BROKERS=$HOST:$KAFKA_PORT"
    return 0
  fi
  rm -f "$PID_FILE"
  port_open "$KAFKA_PORT" && die "port $KAFKA_PORT is in use by another process (not started by this script)"
  port_open "$KAFKA_CONTROLLER_PORT" && die "controller port $KAFKA_CONTROLLER_PORT is in use by another process"

  local t0=$SECONDS
  write_config
  format_storage

  # Rotate the previous run's logs so readiness checks only see this run.
  [[ -f "$SERVER_LOG" ]] && mv -f "$SERVER_LOG" "$SERVER_LOG.prev"
  [[ -f "$STDOUT_LOG" ]] && mv -f "$STDOUT_LOG" "$STDOUT_LOG.prev"

  # shellcheck disable=SC2086  # word-splitting of the *_OPTS is intended
  nohup "$JAVA" $KAFKA_HEAP_OPTS \
    -server -XX:+UseG1GC -XX:MaxGCPauseMillis=20 -XX:InitiatingHeapOccupancyPercent=35 \
    -XX:+ExplicitGCInvokesConcurrent -XX:+ExitOnOutOfMemoryError \
    -Djava.awt.headless=true \
    -Dlog4j2.configurationFile="$KAFKA_DATA_DIR/log4j2.properties" \
    -Dlog4j.configuration="file:$KAFKA_DATA_DIR/log4j.properties" \
    -Dkafka.logs.dir="$LOG_DIR" \
    $KAFKA_JVM_OPTS \
    -cp "$LIBS/*" kafka.Kafka "$PROPS" \
    </dev/null >"$STDOUT_LOG" 2>&1 9>&- &
  pid=$!
  echo "$pid" >"$PID_FILE"
  wait_ready "$pid"
  say "kafka $KAFKA_VERSION started (pid $pid, $((SECONDS - t0))s, data $KAFKA_DATA_DIR, log $SERVER_LOG)"
  echo "KAFKA_BROKERS=$HOST:$KAFKA_PORT"
}

cmd_stop() {
  local pid
  pid="$(broker_pid)"
  if [[ -z "$pid" ]]; then
    rm -f "$PID_FILE"
    say "not running"
    return 0
  fi
  kill -TERM "$pid" 2>/dev/null || true
  local i
  for ((i = 0; i < 60; i++)); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.5
  done
  if kill -0 "$pid" 2>/dev/null; then
    say "pid $pid did not stop within 30s; sending SIGKILL"
    kill -KILL "$pid" 2>/dev/null || true
    for ((i = 0; i < 20; i++)); do kill -0 "$pid" 2>/dev/null || break; sleep 0.25; done
  fi
  rm -f "$PID_FILE"
  say "stopped (pid $pid)"
}

cmd_status() {
  local pid
  pid="$(broker_pid)"
  if [[ -n "$pid" ]] && port_open "$KAFKA_PORT"; then
    say "running (pid $pid, $HOST:$KAFKA_PORT, data $KAFKA_DATA_DIR)"
    return 0
  fi
  if [[ -n "$pid" ]]; then say "process $pid exists but port $KAFKA_PORT is not open"; else say "not running"; fi
  return 1
}

cmd_reset() {
  cmd_stop
  [[ -n "$KAFKA_DATA_DIR" && "$KAFKA_DATA_DIR" != "/" && "$KAFKA_DATA_DIR" != "$KAFKA_CACHE_DIR" ]] \
    || die "refusing to delete KAFKA_DATA_DIR=$KAFKA_DATA_DIR"
  rm -rf "$KAFKA_DATA_DIR"
  say "deleted $KAFKA_DATA_DIR"
}

cmd_logs() {
  [[ -f "$SERVER_LOG" ]] || die "no log at $SERVER_LOG"
  tail -n "${KAFKA_LOG_LINES:-100}" "$SERVER_LOG"
}

case "${1:-}" in
  fetch) cmd_fetch ;;
  start) cmd_start ;;
  stop) cmd_stop ;;
  status) cmd_status ;;
  reset) cmd_reset ;;
  logs) cmd_logs ;;
  *)
    sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2
    exit 2
    ;;
esac
