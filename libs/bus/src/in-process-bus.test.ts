import { InProcessBus } from './in-process-bus';

describe('InProcessBus', () => {
  it('delivers to every subscribed group before publish resolves, in order, with keys and headers', async () => {
    const bus = new InProcessBus();
    const a: string[] = [];
    const b: string[] = [];
    await bus.subscribe({ groupId: 'a', topics: ['t'], handler: async (batch) => void a.push(...batch.map((m) => `${m.key}:${m.value}:${m.headers.h}`)) });
    await bus.subscribe({ groupId: 'b', topics: ['t', 'u'], handler: async (batch) => void b.push(...batch.map((m) => m.value)) });
    await bus.publish('t', [
      { key: 'k1', value: '1', headers: { h: 'x' } },
      { key: 'k2', value: '2', headers: { h: 'y' } },
    ]);
    await bus.publish('u', [{ key: 'k3', value: '3' }]);
    expect(a).toEqual(['k1:1:x', 'k2:2:y']);
    expect(b).toEqual(['1', '2', '3']);
  });

  it('rejects the publish when a subscriber fails, so the caller keeps the message', async () => {
    const bus = new InProcessBus();
    await bus.subscribe({ groupId: 'g', topics: ['t'], handler: async () => Promise.reject(new Error('handler failed')) });
    await expect(bus.publish('t', [{ key: 'k', value: 'v' }])).rejects.toThrow('handler failed');
  });

  it('refuses a second subscriber of one group', async () => {
    const bus = new InProcessBus();
    await bus.subscribe({ groupId: 'g', topics: ['t'], handler: async () => undefined });
    await expect(bus.subscribe({ groupId: 'g', topics: ['t'], handler: async () => undefined })).rejects.toThrow();
  });
});
