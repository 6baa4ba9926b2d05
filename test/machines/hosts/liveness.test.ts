/**
 * hostStatus and routeCommand: the pure judgements behind named hosts (issue 16).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { hostStatus, routeCommand, sight, type HostStatus, type Sighting } from '../../../machines/hosts/liveness.ts';
import { propertySeed } from '../../support/seed.ts';

const record = (state: 'up' | 'stopped' = 'up') => ({ name: 'b', hostId: 'h-b', state });
const seen = (revision: number, changedAtMs: number): Sighting => ({ revision, changedAtMs });

describe('hostStatus', () => {
  it.each([
    ['no record is unknown', undefined, seen(1, 0), { status: 'unknown' }],
    ['a record never sighted is unknown', record(), undefined, { status: 'unknown' }],
    ['a revision changed just now is live', record(), seen(7, 9_500), { status: 'live', hostId: 'h-b' }],
    ['one changed just under the limit ago is still live', record(), seen(7, 8_001), { status: 'live', hostId: 'h-b' }],
    [
      'one unchanged for exactly the limit is lost',
      record(),
      seen(7, 8_000),
      { status: 'lost', hostId: 'h-b', silentForMs: 2_000 },
    ],
    ['a clean leave is stopped, however old', record('stopped'), seen(7, 0), { status: 'stopped', hostId: 'h-b' }],
  ] as const)('%s', (_name, r, s, expected) => {
    expect(hostStatus(r, s, 10_000, 2_000)).toEqual(expected);
  });
});

describe('sight', () => {
  it('keeps the time of the last change while the revision stays, and restarts it when it changes', () => {
    const first = sight(undefined, 3, 100);
    expect(first).toEqual({ revision: 3, changedAtMs: 100 });
    expect(sight(first, 3, 5_000)).toBe(first);
    expect(sight(first, 4, 5_000)).toEqual({ revision: 4, changedAtMs: 5_000 });
    // A bucket re-created (revisions start again) is a change too, never "older".
    expect(sight(first, 1, 6_000)).toEqual({ revision: 1, changedAtMs: 6_000 });
  });

  const seed = propertySeed();
  it(`property: the writer's clock never decides (fast-check seed ${seed})`, () => {
    // A writer heart-beating every `beat` ms with any clock skew, read by an observer every `read` ms: live
    // for as long as it beats, however far its clock is off; lost exactly `lostAfter` after its last beat was
    // read, however far ahead its clock was. The skew is in the record only, which the judgement never reads.
    fc.assert(
      fc.property(
        fc.integer({ min: 50, max: 1_000 }),
        fc.integer({ min: 10, max: 500 }),
        fc.integer({ min: -86_400_000, max: 86_400_000 }),
        fc.integer({ min: 1, max: 50 }),
        (beat, read, skewMs, beats) => {
          const lostAfter = 4 * Math.max(beat, read);
          let s: Sighting | undefined;
          let revision = 0;
          let lastBeatAt = -Infinity;
          const rec = { ...record(), heartbeatAt: Date.UTC(2026, 0, 1) + skewMs };
          for (let t = 0; t <= beats * beat + 2 * lostAfter; t += read) {
            if (t <= beats * beat && t - lastBeatAt >= beat) {
              revision++;
              lastBeatAt = t;
            }
            s = sight(s, revision, t);
            const status = hostStatus(rec, s, t, lostAfter).status;
            if (t <= beats * beat) expect(status).toBe('live');
            expect(status).toBe(t - s.changedAtMs >= lostAfter ? 'lost' : 'live');
          }
          expect(hostStatus(rec, s, beats * beat + 2 * lostAfter + read, lostAfter).status).toBe('lost');
        },
      ),
      { seed, numRuns: 200 },
    );
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
