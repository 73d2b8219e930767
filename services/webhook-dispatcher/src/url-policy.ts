import dns from 'node:dns';
import net from 'node:net';
import { ValidationError } from '@billstream/errors';
import ipaddr from 'ipaddr.js';

export type AddressClass = 'public' | 'loopback' | 'private' | 'link-local' | 'reserved';

export interface UrlPolicyOptions {
  /** http:// to loopback hosts, and loopback addresses, allowed (local development). */
  allowInsecure: boolean;
  /** Private, loopback, link-local and reserved addresses allowed. */
  allowPrivate: boolean;
}

export type Resolve = (hostname: string) => Promise<string[]>;

/**
 * Our class of each range ipaddr.js names (its `range()`); `unicast` (no special range) is the
 * only public one. Any name missing here, such as one a later ipaddr.js adds, is `reserved`:
 * an address the library singles out is refused until we decide otherwise.
 */
const CLASS_OF_RANGE: Record<string, Exclude<AddressClass, 'public'>> = {
  loopback: 'loopback',
  private: 'private',
  carrierGradeNat: 'private',
  uniqueLocal: 'private',
  // fec0::/10, deprecated (RFC 3879) but still routed inside sites.
  deprecatedSiteLocal: 'private',
  // 2001::/32 tunnels to an IPv4 host we cannot check (the client address is obfuscated).
  teredo: 'private',
  linkLocal: 'link-local',
};

/** IPv4-compatible addresses (`::a.b.c.d`, RFC 4291, deprecated): ipaddr.js calls them unicast. */
const IPV4_COMPATIBLE = ipaddr.parseCIDR('::/96');
/** The well-known NAT64 prefix (RFC 6052), whose last 32 bits are the IPv4 address. */
const WELL_KNOWN_NAT64 = ipaddr.parseCIDR('64:ff9b::/96');

function ipv4Of(high: number, low: number): ipaddr.IPv4 {
  return new ipaddr.IPv4([high >> 8, high & 0xff, low >> 8, low & 0xff]);
}

/**
 * The IPv4 address an IPv6 address carries, for the forms that reach it: IPv4-mapped
 * (`::ffff:a.b.c.d`), IPv4-translated (`::ffff:0:a.b.c.d`), IPv4-compatible (`::a.b.c.d`),
 * well-known NAT64 (`64:ff9b::a.b.c.d`) and 6to4 (`2002:aabb:ccdd::/48`, RFC 3056).
 */
function embeddedIpv4(addr: ipaddr.IPv6): ipaddr.IPv4 | undefined {
  const p = addr.parts;
  switch (addr.range()) {
    case 'ipv4Mapped':
    case 'rfc6145':
      return ipv4Of(p[6], p[7]);
    case 'rfc6052':
      return addr.match(WELL_KNOWN_NAT64) ? ipv4Of(p[6], p[7]) : undefined;
    case '6to4':
      return ipv4Of(p[1], p[2]);
    case 'unicast':
      return addr.match(IPV4_COMPATIBLE) ? ipv4Of(p[6], p[7]) : undefined;
    default:
      return undefined;
  }
}

/** The range ipaddr.js gives the address, the embedded IPv4 address's for the forms that carry one. */
function rangeOf(addr: ipaddr.IPv4 | ipaddr.IPv6): string {
  if (addr.kind() === 'ipv4') return addr.range();
  const v6 = addr as ipaddr.IPv6;
  const v4 = embeddedIpv4(v6);
  if (v4) return v4.range();
  // The local-use NAT64 prefix 64:ff9b:1::/48 (RFC 8215) leads into a private network.
  if (v6.range() === 'rfc6052') return 'private';
  return v6.range();
}

/** What kind of address an IP literal is (brackets of an IPv6 URL host allowed). */
export function classifyAddress(raw: string): AddressClass {
  const ip = raw.replace(/^\[|\]$/g, '').replace(/%.*$/, '');
  if (net.isIP(ip) === 0) throw new Error(`${raw} is not an IP address`);
  const range = rangeOf(ipaddr.parse(ip));
  if (range === 'unicast') return 'public';
  return CLASS_OF_RANGE[range] ?? 'reserved';
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
