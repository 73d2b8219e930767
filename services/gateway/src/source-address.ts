import type { IncomingMessage } from 'node:http';
import ipaddr from 'ipaddr.js';

/**
 * The address a request came from, as the key of its failed-authentication bucket (ADR 0032).
 * With no trusted proxy it is the TCP peer, whatever X-Forwarded-For says (a client can write
 * anything there). With `trustedProxyHops` proxies in front, each appending the address it saw,
 * it is the entry that many places from the right of X-Forwarded-For. An IPv6 address counts
 * by its /64 (one host's, or one customer's, share of a network), an IPv4-mapped one as IPv4.
 */
export function sourceAddressOf(req: IncomingMessage, trustedProxyHops: number): string {
  const peer = req.socket.remoteAddress ?? 'unknown';
  if (trustedProxyHops <= 0) return addressKey(peer);
  const header = req.headers['x-forwarded-for'];
  const forwarded = (Array.isArray(header) ? header.join(',') : (header ?? ''))
    .split(',')
    .map((entry) => entry.trim())
    .filter(Boolean);
  // From the nearest hop outwards: the peer, then X-Forwarded-For from the right.
  const chain = [peer, ...forwarded.reverse()];
  return addressKey(chain[Math.min(trustedProxyHops, chain.length - 1)]);
}

/** An address as a bucket key: IPv4 as is, IPv6 by its /64 prefix; anything else unchanged. */
export function addressKey(address: string): string {
  if (!ipaddr.isValid(address)) return address;
  const parsed = ipaddr.process(address);
  if (parsed.kind() === 'ipv4') return parsed.toString();
  const prefix = (parsed as ipaddr.IPv6).parts.slice(0, 4);
  return `${new ipaddr.IPv6([...prefix, 0, 0, 0, 0]).toString()}/64`;
}
