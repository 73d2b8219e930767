import type { Express } from 'express';
import { createLogger } from '@billstream/logger';
import { createHttpApp, finishApp } from './app';
import { listen, type Listening } from './server';

const logger = createLogger({ service: 'test', level: 'silent' });

describe('createHttpApp: the edge refuses hostile input with 400 before any route', () => {
  let http: Listening;

  beforeAll(async () => {
    const app: Express = createHttpApp({ logger, service: 'test' });
    app.post('/v1/things', (_req, res) => {
      res.json({ ok: true });
    });
    finishApp(app, logger);
    http = await listen(app, 0, '127.0.0.1');
  });
  afterAll(async () => {
    await http.close();
  });

  const post = (body: string | Buffer, contentType = 'application/json') =>
    fetch(`${http.url}/v1/things`, { method: 'POST', headers: { 'content-type': contentType }, body });

  it('accepts an ordinary body, escaped non-ASCII and surrogate pairs included', async () => {
    const res = await post('{"name":"caf\\u00e9 \\ud83d\\ude00","n":[1,{"a":null}]}');
    expect(res.status).toBe(200);
  });

  it('refuses a lone surrogate that arrives raw in a UTF-16 body (no escape to find in the text)', async () => {
    const text = '{"name":"x\ud800"}';
    const res = await post(Buffer.from(text, 'utf16le'), 'application/json; charset=utf-16le');
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ success: false, error: { internal_error: 'validation_error', details: { field: 'name' } } });
  });

  it('refuses an undecodable path before routing, on paths without a route too', async () => {
    for (const path of ['/v1/things/%zz', '/nowhere/%C0%AE']) {
      const res = await fetch(`${http.url}${path}`);
      expect(res.status).toBe(400);
      expect(await res.json()).toMatchObject({ error: { internal_error: 'validation_error', details: { field: 'path' } } });
    }
  });
});
