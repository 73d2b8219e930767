import type { Express } from 'express';
import { Agent, request } from 'undici';
import { createLogger } from '@billstream/logger';
import { createHttpApp, finishApp } from './app';
import { listen } from './server';

const logger = createLogger({ service: 'test', level: 'silent' });

describe('listen(): close', () => {
  it('ends promptly although a keep-alive request was still running when close began', async () => {
    const app: Express = createHttpApp({ logger, service: 'test' });
    app.get('/slow', (_req, res) => {
      setTimeout(() => res.json({ ok: true }), 300);
    });
    finishApp(app, logger);
    const http = await listen(app, 0, '127.0.0.1');
    const agent = new Agent({ keepAliveTimeout: 60_000 });
    try {
      const pending = request(`${http.url}/slow`, { dispatcher: agent });
      await new Promise((r) => setTimeout(r, 100));
      const started = Date.now();
      const closed = http.close();
      const res = await pending;
      expect([res.statusCode, await res.body.json()]).toEqual([200, { ok: true }]);
      await closed;
      // Without closing the connection once it turned idle, close waited for keepAliveTimeout (65 s).
      expect(Date.now() - started).toBeLessThan(5000);
    } finally {
      await agent.close();
    }
  });
});
