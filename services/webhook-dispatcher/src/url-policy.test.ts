import { ValidationError } from '@billstream/errors';
import { classifyAddress, UrlPolicy, type UrlPolicyOptions } from './url-policy';

const strict: UrlPolicyOptions = { allowInsecure: false, allowPrivate: false };
const insecure: UrlPolicyOptions = { allowInsecure: true, allowPrivate: false };

function reasonOf(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(ValidationError);
    expect((err as ValidationError).details?.field).toBe('url');
    return (err as ValidationError).details?.reason as string;
  }
  return undefined;
}

async function asyncReasonOf(p: Promise<unknown>): Promise<string | undefined> {
  try {
    await p;
  } catch (err) {
    expect(err).toBeInstanceOf(ValidationError);
    return (err as ValidationError).details?.reason as string;
  }
  return undefined;
}

describe('classifyAddress', () => {
  it.each([
    ['127.0.0.1', 'loopback'],
    ['127.9.9.9', 'loopback'],
    ['::1', 'loopback'],
    ['[::1]', 'loopback'],
    ['10.1.2.3', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.1.1', 'private'],
    ['100.64.0.1', 'private'],
    ['fd00::1', 'private'],
    ['169.254.169.254', 'link-local'],
    ['fe80::1', 'link-local'],
    ['0.0.0.0', 'reserved'],
    ['::', 'reserved'],
    ['224.0.0.1', 'reserved'],
    ['::ffff:10.0.0.1', 'private'],
    ['::ffff:a00:1', 'private'],
    ['::ffff:7f00:1', 'loopback'],
    ['64:ff9b::a9fe:a9fe', 'link-local'],
    ['8.8.8.8', 'public'],
    ['172.32.0.1', 'public'],
    ['2606:4700::1111', 'public'],
    ['255.255.255.255', 'reserved'],
    ['198.18.0.1', 'reserved'],
    ['203.0.113.9', 'reserved'],
    ['2001:db8::1', 'reserved'],
    ['ff02::1', 'reserved'],
  ])('%s is %s', (ip, cls) => {
    expect(classifyAddress(ip)).toBe(cls);
  });

  it.each([
    // IPv4-compatible ::a.b.c.d: the IPv4 address decides (the URL parser writes it as ::7f00:1).
    ['::127.0.0.1', 'loopback'],
    ['::7f00:1', 'loopback'],
    ['::a00:1', 'private'],
    ['::a9fe:a9fe', 'link-local'],
    ['::0.0.0.2', 'reserved'],
    ['::808:808', 'public'],
    // 6to4 2002:aabb:ccdd::/48: the IPv4 address aa.bb.cc.dd decides.
    ['2002:7f00:1::', 'loopback'],
    ['2002:a00:1::1', 'private'],
    ['2002:c0a8:101:1::1', 'private'],
    ['2002:a9fe:a9fe::', 'link-local'],
    ['2002:808:808::1', 'public'],
    // IPv4-translated ::ffff:0:a.b.c.d.
    ['::ffff:0:a00:1', 'private'],
    ['::ffff:0:808:808', 'public'],
    // NAT64: the well-known prefix carries the IPv4 address; the local-use prefix is private.
    ['64:ff9b::7f00:1', 'loopback'],
    ['64:ff9b::808:808', 'public'],
    ['64:ff9b:1::1', 'private'],
    // Teredo 2001::/32 and site-local fec0::/10: private outright.
    ['2001::1', 'private'],
    ['2001:0:4136:e378:8000:63bf:3fff:fdd2', 'private'],
    ['fec0::1', 'private'],
    ['feff::1', 'private'],
    ['[fec0::1]', 'private'],
  ])('%s (an IPv6 form that hides a private address) is %s', (ip, cls) => {
    expect(classifyAddress(ip)).toBe(cls);
  });

  it('refuses what is not an IP address', () => {
    expect(() => classifyAddress('hooks.example.com')).toThrow('not an IP address');
    expect(() => classifyAddress('0x7f.1')).toThrow('not an IP address');
  });
});

describe('UrlPolicy.checkUrl', () => {
  it('accepts https to a public host and refuses other schemes', () => {
    const policy = new UrlPolicy(strict);
    expect(policy.checkUrl('https://hooks.example.com/billing?x=1').hostname).toBe('hooks.example.com');
    expect(reasonOf(() => policy.checkUrl('http://hooks.example.com/'))).toBe('insecure_scheme');
    expect(reasonOf(() => policy.checkUrl('ftp://hooks.example.com/'))).toBe('unsupported_scheme');
    expect(reasonOf(() => policy.checkUrl('not a url'))).toBe('invalid_url');
    expect(reasonOf(() => policy.checkUrl('https://user:pw@hooks.example.com/'))).toBe('credentials');
  });

  it('allows http only to loopback hosts, and only when insecure delivery is allowed', () => {
    expect(reasonOf(() => new UrlPolicy(strict).checkUrl('http://127.0.0.1:9000/'))).toBe('insecure_scheme');
    const policy = new UrlPolicy(insecure);
    for (const url of ['http://127.0.0.1:9000/', 'http://localhost:9000/h', 'http://[::1]:9000/', 'http://api.localhost/']) {
      expect(reasonOf(() => policy.checkUrl(url))).toBeUndefined();
    }
    expect(reasonOf(() => policy.checkUrl('http://hooks.example.com/'))).toBe('insecure_scheme');
    expect(reasonOf(() => policy.checkUrl('http://10.0.0.1/'))).toBe('insecure_scheme');
  });

  it('refuses IPv6 literals that hide a private address: IPv4-compatible, 6to4, Teredo, site-local', () => {
    const policy = new UrlPolicy(strict);
    for (const url of [
      'https://[::127.0.0.1]/x',
      'https://[::a00:1]/',
      'https://[2002:7f00:1::]/hook',
      'https://[2002:a9fe:a9fe::1]/',
      'https://[::ffff:0:a00:1]/',
      'https://[64:ff9b:1::1]/',
      'https://[2001::1]/',
      'https://[fec0::1]/',
    ]) {
      expect([url, reasonOf(() => policy.checkUrl(url))]).toEqual([url, 'address_not_allowed']);
    }
    expect(reasonOf(() => policy.checkUrl('https://[2002:808:808::1]/'))).toBeUndefined();
    expect(reasonOf(() => policy.checkUrl('https://[::808:808]/'))).toBeUndefined();
    const open = new UrlPolicy({ allowInsecure: false, allowPrivate: true });
    for (const url of ['https://[2001::1]/', 'https://[fec0::1]/', 'https://[2002:7f00:1::]/hook']) {
      expect(reasonOf(() => open.checkUrl(url))).toBeUndefined();
    }
  });

  it('allows http to an IPv6 form of loopback only when insecure delivery is allowed', () => {
    expect(reasonOf(() => new UrlPolicy(insecure).checkUrl('http://[::127.0.0.1]:9000/'))).toBeUndefined();
    expect(reasonOf(() => new UrlPolicy(insecure).checkUrl('http://[2002:a00:1::]:9000/'))).toBe('insecure_scheme');
  });

  it('refuses private, loopback and link-local literals unless allowed', () => {
    const policy = new UrlPolicy(strict);
    for (const url of ['https://10.0.0.1/', 'https://192.168.0.10/', 'https://169.254.169.254/latest', 'https://127.0.0.1/', 'https://[::ffff:a00:1]/', 'https://[fe80::1]/']) {
      expect(reasonOf(() => policy.checkUrl(url))).toBe('address_not_allowed');
    }
    expect(reasonOf(() => new UrlPolicy(insecure).checkUrl('https://127.0.0.1/'))).toBeUndefined();
    expect(reasonOf(() => new UrlPolicy(insecure).checkUrl('https://10.0.0.1/'))).toBe('address_not_allowed');
    const open = new UrlPolicy({ allowInsecure: false, allowPrivate: true });
    expect(reasonOf(() => open.checkUrl('https://10.0.0.1/'))).toBeUndefined();
    expect(reasonOf(() => open.checkUrl('https://169.254.169.254/'))).toBeUndefined();
  });
});

describe('UrlPolicy.assertAllowed', () => {
  it('refuses a host name that resolves to a private address', async () => {
    const policy = new UrlPolicy(strict, async (host) => (host === 'internal.example.com' ? ['8.8.8.8', '10.0.0.7'] : ['8.8.4.4']));
    expect(await asyncReasonOf(policy.assertAllowed('https://internal.example.com/hook'))).toBe('address_not_allowed');
    expect(await asyncReasonOf(policy.assertAllowed('https://public.example.com/hook'))).toBeUndefined();
  });

  it('refuses a host name whose AAAA record is a 6to4, Teredo or site-local address', async () => {
    const records: Record<string, string[]> = {
      'sixtofour.example.com': ['2002:a00:1::1'],
      'teredo.example.com': ['2001:0:4136:e378:8000:63bf:3fff:fdd2'],
      'sitelocal.example.com': ['2606:4700::1111', 'fec0::7'],
      'compatible.example.com': ['::7f00:1'],
    };
    const policy = new UrlPolicy(strict, async (host) => records[host] ?? []);
    for (const host of Object.keys(records)) {
      expect([host, await asyncReasonOf(policy.assertAllowed(`https://${host}/hook`))]).toEqual([host, 'address_not_allowed']);
    }
  });

  it('accepts a host that does not resolve now (each connection is checked)', async () => {
    const failing = new UrlPolicy(strict, async () => {
      throw Object.assign(new Error('getaddrinfo ENOTFOUND'), { code: 'ENOTFOUND' });
    });
    expect(await asyncReasonOf(failing.assertAllowed('https://nowhere.example.com/'))).toBeUndefined();
    const hanging = new UrlPolicy(strict, () => new Promise(() => {}), 50);
    expect(await asyncReasonOf(hanging.assertAllowed('https://slow.example.com/'))).toBeUndefined();
  });
});

describe('UrlPolicy.lookup (connect time)', () => {
  const lookup = (policy: UrlPolicy, host: string, all: boolean) =>
    new Promise<{ err: NodeJS.ErrnoException | null; address: unknown }>((resolve) => {
      policy.lookup(host, { all }, (err, address) => resolve({ err, address }));
    });

  it('fails the connection when the name resolves to a refused address', async () => {
    const { err } = await lookup(new UrlPolicy(strict), 'localhost', true);
    expect(err?.code).toBe('EADDRNOTALLOWED');
    expect(err?.message).toContain('loopback');
  });

  it('passes allowed addresses on, in the form asked for', async () => {
    const policy = new UrlPolicy(insecure);
    const all = await lookup(policy, 'localhost', true);
    expect(all.err).toBeNull();
    expect(Array.isArray(all.address)).toBe(true);
    const one = await lookup(policy, 'localhost', false);
    expect(one.err).toBeNull();
    expect(typeof one.address).toBe('string');
  });
});
