import { readFileSync } from 'node:fs';
import net from 'node:net';

/**
 * Ports handed out below the kernel's ephemeral range. A port from `listen(0)` comes from that
 * range, and so does the local port of every outgoing connection: between the probe and the
 * child process's own listen (seconds later, after its migrations), a Postgres or Kafka client
 * connection could take it (CI saw `EADDRINUSE` on a gateway port). Below the range only
 * listeners take ports, and the probe below sees them.
 */
function range(): { low: number; high: number } | undefined {
  try {
    const [ephemeralLow] = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/).map(Number);
    if (Number.isInteger(ephemeralLow) && ephemeralLow > 12_000) return { low: 10_000, high: ephemeralLow - 1 };
  } catch {
    // not Linux: fall back to the kernel's choice
  }
  return undefined;
}

const handedOut = new Set<number>();
const ports = range();
let next = ports ? ports.low + ((process.pid * 7919 + Math.floor(Math.random() * 100_000)) % (ports.high - ports.low)) : 0;

function probe(port: number): Promise<number | undefined> {
  return new Promise((resolve) => {
    const s = net.createServer();
    s.once('error', () => resolve(undefined));
    s.listen(port, '127.0.0.1', () => {
      const bound = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(bound));
    });
  });
}

/** A TCP port that is free on 127.0.0.1 right now, never handed out twice by this process. */
export async function freePort(): Promise<number> {
  if (ports) {
    for (let attempt = 0; attempt < 1_000; attempt += 1) {
      const candidate = next;
      next = next >= ports.high ? ports.low : next + 1;
      if (handedOut.has(candidate)) continue;
      handedOut.add(candidate);
      if ((await probe(candidate)) !== undefined) return candidate;
    }
  }
  for (;;) {
    const port = await probe(0);
    if (port !== undefined && !handedOut.has(port)) {
      handedOut.add(port);
      return port;
    }
  }
}
