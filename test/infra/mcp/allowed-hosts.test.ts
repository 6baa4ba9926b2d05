import fc from 'fast-check';
import { allowedHostHeaders, parseAllowedHost } from '../../../infra/mcp/allowed-hosts.ts';
import { propertySeed } from '../../support/seed.ts';

const lan = { eth0: [{ address: '10.1.2.3' }, { address: 'fe80::a:b' }], lo: [{ address: '127.0.0.1' }] } as never;

describe('parseAllowedHost', () => {
  it('takes a name or address with an optional port, lower-cased', () => {
    expect(parseAllowedHost('MCP.Example')).toBe('mcp.example');
    expect(parseAllowedHost(' mcp.example:8080 ')).toBe('mcp.example:8080');
    expect(parseAllowedHost('10.0.0.5')).toBe('10.0.0.5');
    expect(parseAllowedHost('[fd00::1]:443')).toBe('[fd00::1]:443');
  });

  it.each([
    ['', /is empty/],
    ['http://mcp.example', /is a URL/],
    ['mcp.example/mcp', /is a URL/],
    ['*.example', /wildcard/],
    ['*', /wildcard/],
    ['mcp example', /character a Host header cannot/],
    ['user@mcp.example', /character a Host header cannot/],
    ['fd00::1', /IPv6 address goes in brackets/],
    ['mcp.example:99999', /port 99999, over 65535/],
    ['mcp.example:80:80', /is not host\[:port\]/],
    ['bücher.example', /character a Host header cannot/],
    ['mcp.example\u0000', /character a Host header cannot/],
  ])('refuses %j, naming it and what to give', (value, why) => {
    expect(() => parseAllowedHost(value)).toThrow(why);
    expect(() => parseAllowedHost(value)).toThrow(`--allowed-host '${value}'`);
  });

  it('never lets through a value the Host check could not match as given', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 40 }), (value) => {
        let parsed: string;
        try {
          parsed = parseAllowedHost(value);
        } catch (err) {
          expect((err as Error).message).toContain('--allowed-host');
          return;
        }
        // What passes is one token of a Host header: no spaces, no path, no scheme, no wildcard; and stable.
        expect(parsed).toMatch(/^(\[[0-9a-f:.]+\]|[a-z0-9._-]+)(:\d{1,5})?$/);
        expect(parseAllowedHost(parsed)).toBe(parsed);
      }),
      { seed: propertySeed(), numRuns: 500 },
    );
  });
});

describe('allowedHostHeaders', () => {
  it('bound to one address: that address and the loopbacks, never the other interfaces', () => {
    const hosts = allowedHostHeaders('10.1.2.3', 7000, [], lan);
    expect(hosts).toEqual(['10.1.2.3:7000', 'localhost:7000', '127.0.0.1:7000', '[::1]:7000']);
  });

  it('bound to every interface: each interface address too, IPv6 in brackets', () => {
    expect(allowedHostHeaders('0.0.0.0', 7000, [], lan)).toEqual(
      expect.arrayContaining(['10.1.2.3:7000', '[fe80::a:b]:7000', '127.0.0.1:7000']),
    );
    expect(allowedHostHeaders('::', 7000, [], lan)).toContain('10.1.2.3:7000');
  });

  it('a given name passes as given and with the port; one with a port only as given', () => {
    const hosts = allowedHostHeaders('0.0.0.0', 7000, ['mcp.example', 'proxy.example:443', '[fd00::1]'], lan);
    expect(hosts).toEqual(
      expect.arrayContaining(['mcp.example', 'mcp.example:7000', 'proxy.example:443', '[fd00::1]', '[fd00::1]:7000']),
    );
    expect(hosts).not.toContain('proxy.example:443:7000');
    // A name nobody gave never passes, whatever the interfaces.
    expect(hosts.some((h) => h.startsWith('evil.example'))).toBe(false);
  });
});
