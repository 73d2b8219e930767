#!/usr/bin/env bash
# Creates Billstream's Kafka topics, idempotently (`--if-not-exists`), with the partition
# count that bounds each consumer group's parallelism. Run by the kafka-init container of
# docker-compose.yml and by the Kubernetes Job in deploy/k8s; usable wherever the Kafka
# command-line tools are (KAFKA_BIN).
set -euo pipefail

BOOTSTRAP="${KAFKA_BOOTSTRAP_SERVERS:-kafka:9092}"
PREFIX="${KAFKA_TOPIC_PREFIX:-}"
PARTITIONS="${KAFKA_PARTITIONS:-4}"
REPLICATION="${KAFKA_REPLICATION_FACTOR:-1}"
KAFKA_BIN="${KAFKA_BIN:-/opt/kafka/bin}"
TOPICS=(customer-events wallet-events usage-events billing-events usage-recorded)

for attempt in $(seq 1 30); do
  if "$KAFKA_BIN/kafka-topics.sh" --bootstrap-server "$BOOTSTRAP" --list >/dev/null 2>&1; then break; fi
  if [[ "$attempt" == 30 ]]; then echo "create-topics: no broker at $BOOTSTRAP" >&2; exit 1; fi
  sleep 2
done

for topic in "${TOPICS[@]}"; do
  "$KAFKA_BIN/kafka-topics.sh" --bootstrap-server "$BOOTSTRAP" --create --if-not-exists \
    --topic "${PREFIX}${topic}" --partitions "$PARTITIONS" --replication-factor "$REPLICATION"
done
"$KAFKA_BIN/kafka-topics.sh" --bootstrap-server "$BOOTSTRAP" --describe --topic "^${PREFIX}(customer|wallet|usage|billing)-events\$"
echo "create-topics: ${TOPICS[*]} ready (prefix '${PREFIX}', ${PARTITIONS} partitions, replication ${REPLICATION})"
