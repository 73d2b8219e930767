#!/usr/bin/env node
/**
 * Checks the containers of the running compose project (COMPOSE_PROJECT_NAME, deploy/compose/ci.sh):
 * every long-running container healthy and its main process (PID 1) not root, kafka-init exited
 * 0; each service named on the command line configured with a non-root USER, on a read-only root
 * filesystem (a write to /app fails), with no capabilities. Waits up to 180 s for "healthy".
 *
 *   node deploy/compose/check-containers.js gateway customer ...
 */
const { execFileSync } = require('node:child_process');

const DOCKER = process.env.DOCKER ?? '/usr/bin/docker';
const PROJECT = process.env.COMPOSE_PROJECT_NAME ?? 'billstream';
const SERVICES = process.argv.slice(2);
const docker = (...args) => execFileSync(DOCKER, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function containers() {
  const ids = docker('ps', '-a', '-q', '--filter', `label=com.docker.compose.project=${PROJECT}`).split('\n').filter(Boolean);
  if (ids.length === 0) return [];
  return JSON.parse(docker('inspect', ...ids)).map((c) => ({ c, service: c.Config.Labels['com.docker.compose.service'] }));
}

async function main() {
  const deadline = Date.now() + 180_000;
  let list = containers();
  for (;;) {
    const waiting = list.filter(({ c, service }) => service !== 'kafka-init' && c.State.Health?.Status !== 'healthy');
    if (waiting.length === 0 || Date.now() > deadline) break;
    await sleep(2000);
    list = containers();
  }
  const problems = [];
  const rows = [];
  for (const service of SERVICES) {
    if (!list.some((x) => x.service === service)) problems.push(`${service}: no container`);
  }
  for (const { c, service } of list.sort((a, b) => a.service.localeCompare(b.service))) {
    const name = c.Name.replace(/^\//, '');
    if (service === 'kafka-init') {
      if (c.State.Status !== 'exited' || c.State.ExitCode !== 0) problems.push(`${name}: ${c.State.Status}, exit code ${c.State.ExitCode} (the topics must be created)`);
      rows.push([service, `${c.State.Status} (${c.State.ExitCode})`, '-', '-', '-']);
      continue;
    }
    const health = c.State.Health?.Status ?? 'no healthcheck';
    if (!c.State.Running || health !== 'healthy') problems.push(`${name}: ${c.State.Status}, ${health}`);
    let uid = '?';
    try {
      uid = /^Uid:\s+(\d+)/m.exec(docker('exec', c.Id, 'cat', '/proc/1/status'))[1];
    } catch (err) {
      problems.push(`${name}: cannot read its PID 1 (${String(err.stderr ?? err).trim()})`);
    }
    if (uid === '0') problems.push(`${name}: its main process runs as root`);
    const readOnly = c.HostConfig.ReadonlyRootfs === true;
    const user = c.Config.User || '(image default: root)';
    if (SERVICES.includes(service)) {
      if (!c.Config.User || /^(root|0)(:|$)/.test(c.Config.User)) problems.push(`${name}: USER ${user}`);
      if (!readOnly) problems.push(`${name}: the root filesystem is writable (read_only: true)`);
      let wrote = true;
      try {
        docker('exec', c.Id, 'node', '-e', "require('fs').writeFileSync('/app/.probe', 'x')");
      } catch {
        wrote = false;
      }
      if (wrote) problems.push(`${name}: could write /app/.probe`);
      if (!(c.HostConfig.CapDrop ?? []).includes('ALL')) problems.push(`${name}: capabilities not dropped (cap_drop: [ALL])`);
    }
    rows.push([service, health, `${user} (PID 1 uid ${uid})`, readOnly ? 'read-only' : 'writable', c.Config.Image]);
  }
  const widths = [0, 1, 2, 3].map((i) => Math.max(...rows.map((r) => r[i].length), 8));
  for (const r of [['container', 'health', 'user', 'rootfs', 'image'], ...rows]) {
    console.log(r.map((v, i) => (i < 4 ? v.padEnd(widths[i]) : v)).join('  '));
  }
  if (problems.length) {
    console.error(`check-containers: ${problems.length} problem(s):\n  - ${problems.join('\n  - ')}`);
    process.exit(1);
  }
  console.log(`check-containers: ${rows.length} containers ok (${SERVICES.length} services non-root on a read-only root filesystem)`);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
