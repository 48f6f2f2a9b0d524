#!/usr/bin/env bash
# The docker-compose.yml topology without Docker: PostgreSQL, the project's single-node Kafka
# broker (scripts/kafka/kafka.sh) and the built service, with the environment compose sets.
#
# Usage: BILLING_ADMIN_API_KEY=… [DATABASE_URL=…] scripts/topology.sh
#
#   DATABASE_URL   unset: the embedded PostgreSQL in EMBEDDED_PG_DIR (a development machine);
#                  set: that database (e.g. the machine's: postgres://postgres@127.0.0.1:5432/billing)
#   KAFKA_PORT     the broker's port on 127.0.0.1 (default 29092, compose's host listener)
#   PORT           the service's port (default 3000)
#
# Ctrl-C (or SIGTERM) stops the service (its drain, then its embedded database), then the broker.
set -euo pipefail
cd "$(dirname "$0")/.."
: "${BILLING_ADMIN_API_KEY:?set BILLING_ADMIN_API_KEY (at least 16 characters)}"
export KAFKA_PORT="${KAFKA_PORT:-29092}" KAFKA_CONTROLLER_PORT="${KAFKA_CONTROLLER_PORT:-29093}"
export PORT="${PORT:-3000}" HOST="${HOST:-127.0.0.1}"

[ -f dist/src/main.js ] || npx nest build
eval "$(bash scripts/kafka/kafka.sh start | tail -n1)"
export KAFKA_BROKERS
# Whatever ends the script (the service failing to start, a crash) stops the broker too.
trap 'bash scripts/kafka/kafka.sh stop' EXIT

node --max-semi-space-size=16 --heap-growing-percent=50 dist/src/main.js &
service=$!

# Ctrl-C or SIGTERM: the service drains and stops first (compose's depends_on order, reversed), then
# the broker; the script exits with the service's own exit code (0 after a clean drain).
stop_all() {
  trap - INT TERM
  kill -TERM "$service" 2>/dev/null || true
  local code=0
  wait "$service" || code=$?
  echo "topology.sh: service stopped (exit $code); stopping the broker"
  trap - EXIT
  bash scripts/kafka/kafka.sh stop
  exit "$code"
}
trap stop_all INT TERM
wait "$service"
