import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ArrivalReceiver {
  url: string;
  /** When the first webhook of each customer (payload.customer.id) arrived. */
  arrivals: Map<string, number>;
  close(): Promise<void>;
}

/** A webhook receiver that answers 200 and notes when each customer's first webhook arrived. */
export async function startArrivalReceiver(): Promise<ArrivalReceiver> {
  const arrivals = new Map<string, number>();
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const at = Date.now();
      const id = JSON.parse(Buffer.concat(chunks).toString('utf8')).payload?.customer?.id;
      if (typeof id === 'string' && !arrivals.has(id)) arrivals.set(id, at);
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`,
    arrivals,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}
