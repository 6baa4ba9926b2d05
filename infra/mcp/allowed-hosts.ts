/**
 * @module
 * The Host header values `skein mcp --http` answers to. A web page that rebinds its own name to this machine sends
 * that name as Host, so names are only those the user gives (`--allowed-host`); addresses are the bound one, the
 * loopbacks and, when bound to every interface, each interface's own address: a page cannot send one of those as
 * its Host.
 */
import type { NetworkInterfaceInfo } from 'node:os';

const WILDCARD = new Set(['0.0.0.0', '::', '[::]']);

/**
 * Checks one `--allowed-host` value: a host name or address, with an optional port, as a client sends it in Host.
 * Returns it lower-cased; throws an error naming the value and what to give instead.
 */
export function parseAllowedHost(value: string): string {
  const v = value.trim().toLowerCase();
  const bad = (why: string) =>
    new Error(`--allowed-host '${value}' ${why}: give a name or address as clients send it in Host, e.g. mcp.example`);
  if (v === '') throw bad('is empty');
  if (v.includes('://') || v.includes('/')) throw bad('is a URL, not a host');
  if (v.includes('*')) throw bad('is a wildcard: every name would pass, which is what the check is for');
  // A name as DNS (or punycode, for a name in another script) spells it; an IPv6 address in brackets.
  if (/[^a-z0-9._:[\]-]/.test(v)) throw bad('holds a character a Host header cannot');
  const m = /^(\[[0-9a-f:.]+\]|[a-z0-9._-]+)(?::(\d{1,5}))?$/.exec(v);
  if (!m) throw bad('is not host[:port] (an IPv6 address goes in brackets: [fd00::1])');
  if (m[2] !== undefined && Number(m[2]) > 65_535) throw bad(`has port ${m[2]}, over 65535`);
  return v;
}

/**
 * Every Host value accepted: `host:port` forms of the bound address, the loopbacks and (bound to every interface)
 * the interfaces' addresses, and each given value as given plus with `:port` when it has none (a reverse proxy may
 * pass the name alone).
 */
export function allowedHostHeaders(
  bound: string,
  port: number,
  given: readonly string[],
  interfaces: Record<string, NetworkInterfaceInfo[] | undefined>,
): string[] {
  const withPort = (address: string) => `${address.includes(':') ? `[${address}]` : address}:${port}`;
  const out = [withPort(bound.replace(/^\[|\]$/g, '')), withPort('localhost'), withPort('127.0.0.1'), withPort('::1')];
  if (WILDCARD.has(bound)) {
    for (const list of Object.values(interfaces)) {
      for (const i of list ?? []) out.push(withPort(i.address.replace(/%.*$/, '')));
    }
  }
  for (const value of given) {
    out.push(value);
    if (!/(\]|^[^:]+):\d+$/.test(value)) out.push(`${value}:${port}`);
  }
  return [...new Set(out)];
}
