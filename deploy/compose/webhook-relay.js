/**
 * A TCP relay for deploy/compose/ci.sh, run in the network namespace of the webhook-dispatcher
 * container (`docker run --network container:<dispatcher>`): it listens on 127.0.0.1:<port> there
 * for each port of RELAY_PORTS and forwards to RELAY_TARGET:<port>, where the smoke suite's and the
 * demo's webhook receivers listen on the machine running the stack. The dispatcher delivers plain
 * http to loopback hosts only (WEBHOOK_ALLOW_INSECURE=true), and its loopback is its container's.
 */
const net = require('node:net');

const target = process.env.RELAY_TARGET;
const ports = (process.env.RELAY_PORTS ?? '').split(/[\s,]+/).filter(Boolean).map(Number);
if (!target || ports.length === 0) throw new Error('RELAY_TARGET and RELAY_PORTS are required');

for (const port of ports) {
  net
    .createServer((client) => {
      const upstream = net.connect(port, target);
      client.pipe(upstream).pipe(client);
      const close = () => {
        client.destroy();
        upstream.destroy();
      };
      client.on('error', close);
      upstream.on('error', close);
    })
    .listen(port, '127.0.0.1', () => console.log(`relay 127.0.0.1:${port} -> ${target}:${port}`));
}
