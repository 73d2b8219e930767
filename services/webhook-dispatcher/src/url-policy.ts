import dns from 'node:dns';
import net from 'node:net';
import { ValidationError } from '@billstream/errors';

export type AddressClass = 'public' | 'loopback' | 'private' | 'link-local' | 'reserved';

export interface UrlPolicyOptions {
  /** http:// to loopback hosts, and loopback addresses, allowed (local development). */
  allowInsecure: boolean;
  /** Private, loopback, link-local and reserved addresses allowed. */
  allowPrivate: boolean;
}

export type Resolve = (hostname: string) => Promise<string[]>;

const RANGES: Array<[AddressClass, string, number, 'ipv4' | 'ipv6']> = [
  ['loopback', '127.0.0.0', 8, 'ipv4'],
  ['private', '10.0.0.0', 8, 'ipv4'],
  ['private', '172.16.0.0', 12, 'ipv4'],
  ['private', '192.168.0.0', 16, 'ipv4'],
  ['private', '100.64.0.0', 10, 'ipv4'],
  ['link-local', '169.254.0.0', 16, 'ipv4'],
  ['reserved', '0.0.0.0', 8, 'ipv4'],
  ['reserved', '192.0.0.0', 24, 'ipv4'],
  ['reserved', '192.0.2.0', 24, 'ipv4'],
  ['reserved', '198.18.0.0', 15, 'ipv4'],
  ['reserved', '198.51.100.0', 24, 'ipv4'],
  ['reserved', '203.0.113.0', 24, 'ipv4'],
  ['reserved', '224.0.0.0', 4, 'ipv4'],
  ['reserved', '240.0.0.0', 4, 'ipv4'],
  ['loopback', '::1', 128, 'ipv6'],
  ['reserved', '::', 128, 'ipv6'],
  ['private', 'fc00::', 7, 'ipv6'],
  ['link-local', 'fe80::', 10, 'ipv6'],
  ['reserved', 'ff00::', 8, 'ipv6'],
  ['reserved', '2001:db8::', 32, 'ipv6'],
];

const LISTS = new Map<AddressClass, net.BlockList>();
for (const [cls, prefix, bits, family] of RANGES) {
  const list = LISTS.get(cls) ?? new net.BlockList();
  list.addSubnet(prefix, bits, family);
  LISTS.set(cls, list);
}

/** The 8 groups of an IPv6 address as numbers. */
function ipv6Groups(ip: string): number[] {
  let text = ip;
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted) {
    const [a, b, c, d] = dotted[1].split('.').map(Number);
    text = text.slice(0, -dotted[1].length) + `${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.includes('::') ? text.split('::') : [text, undefined];
  const headGroups = head ? head.split(':') : [];
  const tailGroups = tail ? tail.split(':') : [];
  const fill = tail === undefined ? [] : new Array(8 - headGroups.length - tailGroups.length).fill('0');
  return [...headGroups, ...fill, ...tailGroups].map((g) => parseInt(g, 16));
}

/** An IPv4 address embedded in an IPv4-mapped (::ffff:a.b.c.d) or NAT64 (64:ff9b::/96) address. */
function embeddedIpv4(ip: string): string | undefined {
  const g = ipv6Groups(ip);
  const mapped = g.slice(0, 5).every((x) => x === 0) && g[5] === 0xffff;
  const nat64 = g[0] === 0x64 && g[1] === 0xff9b && g.slice(2, 6).every((x) => x === 0);
  if (!mapped && !nat64) return undefined;
  return [g[6] >> 8, g[6] & 0xff, g[7] >> 8, g[7] & 0xff].join('.');
}

/** What kind of address an IP literal is (brackets of an IPv6 URL host allowed). */
export function classifyAddress(raw: string): AddressClass {
  const ip = raw.replace(/^\[|\]$/g, '').replace(/%.*$/, '');
  const family = net.isIP(ip);
  if (family === 0) throw new Error(`${raw} is not an IP address`);
  if (family === 6) {
    const v4 = embeddedIpv4(ip);
    if (v4) return classifyAddress(v4);
  }
  const type = family === 4 ? 'ipv4' : 'ipv6';
  for (const [cls, list] of LISTS) {
    if (list.check(ip, type)) return cls;
  }
  return 'public';
}

function isLoopbackName(hostname: string): boolean {
  const h = hostname.toLowerCase().replace(/\.$/, '');
  return h === 'localhost' || h.endsWith('.localhost');
}

function refused(message: string, reason: string): ValidationError {
  return new ValidationError(message, { field: 'url', reason });
}

const defaultResolve: Resolve = async (hostname) =>
  (await dns.promises.lookup(hostname, { all: true, verbatim: true })).map((a) => a.address);

/**
 * Which URLs may receive webhooks: https (http only to loopback when insecure delivery is
 * allowed), no credentials, and no private, loopback, link-local or reserved address unless
 * allowed. Addresses are checked on the literal host, on the resolved addresses when an
 * endpoint is saved, and again at connect time (`lookup`), so DNS rebinding cannot reach a
 * refused address.
 */
export class UrlPolicy {
  /** checkUrl verdicts by URL (the policy never changes while the process runs). */
  private readonly verdicts = new Map<string, URL | ValidationError>();

  constructor(
    private readonly options: UrlPolicyOptions,
    private readonly resolve: Resolve = defaultResolve,
    private readonly resolveTimeoutMs = 2000,
  ) {}

  addressAllowed(ip: string): boolean {
    const cls = classifyAddress(ip);
    if (cls === 'public' || this.options.allowPrivate) return true;
    return cls === 'loopback' && this.options.allowInsecure;
  }

  /** Checks what the URL itself says (scheme, credentials, a literal address); throws a ValidationError. */
  checkUrl(raw: string): URL {
    let verdict = this.verdicts.get(raw);
    if (!verdict) {
      try {
        verdict = this.judge(raw);
      } catch (err) {
        if (!(err instanceof ValidationError)) throw err;
        verdict = err;
      }
      if (this.verdicts.size >= 10_000) this.verdicts.clear();
      this.verdicts.set(raw, verdict);
    }
    if (verdict instanceof ValidationError) throw verdict;
    return verdict;
  }

  private judge(raw: string): URL {
    let url: URL;
    try {
      url = new URL(raw);
    } catch {
      throw refused('url must be an absolute URL', 'invalid_url');
    }
    if (url.username || url.password) throw refused('url must not carry credentials', 'credentials');
    if (!url.hostname) throw refused('url needs a host', 'invalid_url');
    const literal = net.isIP(url.hostname.replace(/^\[|\]$/g, '')) !== 0;
    const loopbackHost = literal ? classifyAddress(url.hostname) === 'loopback' : isLoopbackName(url.hostname);
    if (url.protocol === 'http:') {
      if (!this.options.allowInsecure) throw refused('url must use https', 'insecure_scheme');
      if (!loopbackHost) throw refused('url may use http only for a loopback host (localhost, 127.0.0.1, [::1])', 'insecure_scheme');
    } else if (url.protocol !== 'https:') {
      throw refused('url must use https', 'unsupported_scheme');
    }
    if (literal && !this.addressAllowed(url.hostname)) {
      throw refused(`url points to a ${classifyAddress(url.hostname)} address, which is not allowed`, 'address_not_allowed');
    }
    return url;
  }

  /**
   * `checkUrl`, then the host's current addresses. A host that does not resolve now is
   * accepted: every connection checks the address it resolves to.
   */
  async assertAllowed(raw: string): Promise<URL> {
    const url = this.checkUrl(raw);
    const host = url.hostname.replace(/^\[|\]$/g, '');
    if (net.isIP(host) !== 0) return url;
    const addresses = await this.resolveWithTimeout(host);
    const bad = addresses.find((a) => !this.addressAllowed(a));
    if (bad) {
      throw refused(`url resolves to a ${classifyAddress(bad)} address (${bad}), which is not allowed`, 'address_not_allowed');
    }
    return url;
  }

  /** A `lookup` for net/tls connect that fails when any resolved address is refused. */
  readonly lookup: net.LookupFunction = (hostname, options, callback) => {
    dns.lookup(hostname, { ...options, all: true }, (err, addresses) => {
      if (err) return callback(err, '', 0);
      const bad = addresses.find((a) => !this.addressAllowed(a.address));
      if (bad) {
        const error: NodeJS.ErrnoException = new Error(
          `${hostname} resolves to a ${classifyAddress(bad.address)} address (${bad.address}), which is not allowed`,
        );
        error.code = 'EADDRNOTALLOWED';
        return callback(error, '', 0);
      }
      if (options.all) return callback(null, addresses);
      return callback(null, addresses[0].address, addresses[0].family);
    });
  };

  private async resolveWithTimeout(host: string): Promise<string[]> {
    let timer: NodeJS.Timeout | undefined;
    try {
      return await Promise.race([
        this.resolve(host),
        new Promise<string[]>((resolve) => {
          timer = setTimeout(() => resolve([]), this.resolveTimeoutMs);
        }),
      ]);
    } catch {
      return [];
    } finally {
      if (timer) clearTimeout(timer);
    }
  }
}
