import type { IncomingMessage } from 'node:http';
import { addressKey, sourceAddressOf } from './source-address';

const request = (peer: string, forwardedFor?: string) =>
  ({ socket: { remoteAddress: peer }, headers: forwardedFor === undefined ? {} : { 'x-forwarded-for': forwardedFor } }) as unknown as IncomingMessage;

describe('sourceAddressOf', () => {
  it('takes the TCP peer and ignores X-Forwarded-For without a trusted proxy', () => {
    expect(sourceAddressOf(request('203.0.113.9', '198.51.100.1'), 0)).toBe('203.0.113.9');
  });

  it('with trusted proxies, takes the entry that many hops from the right of X-Forwarded-For', () => {
    // client (spoofs 1.2.3.4) -> load balancer (appends 198.51.100.7) -> gateway (peer 10.0.0.2)
    const req = request('10.0.0.2', '1.2.3.4, 198.51.100.7');
    expect(sourceAddressOf(req, 1)).toBe('198.51.100.7');
    expect(sourceAddressOf(req, 2)).toBe('1.2.3.4');
    // Fewer entries than hops: the farthest one known.
    expect(sourceAddressOf(req, 5)).toBe('1.2.3.4');
    expect(sourceAddressOf(request('10.0.0.2'), 1)).toBe('10.0.0.2');
  });
});

describe('addressKey', () => {
  it('keeps IPv4, unwraps IPv4-mapped IPv6, and keys other IPv6 addresses by their /64', () => {
    expect(addressKey('127.0.0.1')).toBe('127.0.0.1');
    expect(addressKey('::ffff:127.0.0.1')).toBe('127.0.0.1');
    expect(addressKey('2001:db8:1:2:aaaa::1')).toBe('2001:db8:1:2::/64');
    expect(addressKey('2001:db8:1:2:ffff:ffff:ffff:ffff')).toBe(addressKey('2001:db8:1:2::9'));
    expect(addressKey('2001:db8:1:3::1')).not.toBe(addressKey('2001:db8:1:2::1'));
    expect(addressKey('unknown')).toBe('unknown');
  });
});
