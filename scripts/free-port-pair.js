// Prints a free TCP port whose next port is free too (Kafka's listener and controller).
const net = require('node:net');

function listen(port) {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve(server));
  });
}

async function main() {
  for (let attempt = 0; attempt < 50; attempt += 1) {
    const first = await listen(0);
    const port = first.address().port;
    try {
      const second = await listen(port + 1);
      await new Promise((r) => second.close(r));
      await new Promise((r) => first.close(r));
      process.stdout.write(`${port}\n`);
      return;
    } catch {
      await new Promise((r) => first.close(r));
    }
  }
  throw new Error('no free port pair found');
}

main().catch((err) => {
  process.stderr.write(`${err.message}\n`);
  process.exit(1);
});
