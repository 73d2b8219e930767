#!/bin/bash
# java on the Kafka jars: kafka-run-class.sh <main class> [args]
exec java ${KAFKA_HEAP_OPTS:--Xmx256m} -Dlog4j.configuration=file:/opt/kafka/config/tools-log4j.properties \
  ${KAFKA_OPTS:-} -cp '/opt/kafka/libs/*' "$@"
