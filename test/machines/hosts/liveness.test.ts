/**
 * hostStatus and routeCommand: the pure judgements behind named hosts (issue 16).
 */
import { describe, expect, it } from 'vitest';
import { hostStatus, routeCommand, type HostStatus } from '../../../machines/hosts/liveness.ts';

const beat = (heartbeatAt: number, state: 'up' | 'stopped' = 'up') => ({
  name: 'b',
  hostId: 'h-b',
  heartbeatAt,
  state,
});

describe('hostStatus', () => {
  it.each([
    ['no record is unknown', undefined, { status: 'unknown' }],
    ['a fresh heartbeat is live', beat(9_500), { status: 'live', hostId: 'h-b' }],
    ['one just under the limit is still live', beat(8_001), { status: 'live', hostId: 'h-b' }],
    ['one exactly at the limit is lost', beat(8_000), { status: 'lost', hostId: 'h-b', silentForMs: 2_000 }],
    ['a clean leave is stopped, however old', beat(0, 'stopped'), { status: 'stopped', hostId: 'h-b' }],
    ['a heartbeat from a clock ahead is live, not negative', beat(12_000), { status: 'live', hostId: 'h-b' }],
  ] as const)('%s', (_name, record, expected) => {
    expect(hostStatus(record, 10_000, 2_000)).toEqual(expected);
  });
});

describe('routeCommand', () => {
  const route = (owner: string | undefined, ownerStatus: HostStatus, servesRoot = false) =>
    routeCommand({ agentId: 'x1', owner, self: 'a', servesRoot, ownerStatus });

  it.each([
    ['serves its own agent', route('a', { status: 'live', hostId: 'h' }), { serve: true }],
    ['stays silent for a live owner', route('b', { status: 'live', hostId: 'h' }), { serve: false }],
    [
      'answers an unknown agent when it serves the root',
      route(undefined, { status: 'unknown' }, true),
      { serve: true },
    ],
    ['stays silent for an unknown agent otherwise', route(undefined, { status: 'unknown' }), { serve: false }],
  ] as const)('%s', (_name, actual, expected) => {
    expect(actual).toEqual(expected);
  });

  it('names the owner and why when the owner is lost, stopped or never joined', () => {
    expect(route('b', { status: 'lost', hostId: 'h', silentForMs: 12_345 })).toEqual({
      serve: false,
      unavailable:
        "agent 'x1' lives on host 'b', which is lost (no heartbeat for 12.3 s); only that host answers for it: " +
        'start it again (skein up --host b …) and retry',
    });
    expect(route('b', { status: 'stopped', hostId: 'h' })).toMatchObject({
      unavailable: expect.stringContaining("host 'b', which is stopped;"),
    });
    expect(route('b', { status: 'unknown' })).toMatchObject({
      unavailable: expect.stringContaining("host 'b', which has never joined;"),
    });
  });
});
