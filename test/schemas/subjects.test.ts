import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseCommandSubject, parseEventSubject, subjectFor, subjectPatterns } from '../../schemas/index.ts';
import { subjectMatches } from '../../infra/transport/bus.ts';
import { propertySeed } from '../support/seed.ts';

const seed = propertySeed();

describe('subjectFor', () => {
  it('builds the three subject kinds', () => {
    expect(subjectFor({ kind: 'cmd', agentId: 'main', type: 'agent.spawn' })).toBe('skein.cmd.main.agent.spawn');
    expect(subjectFor({ kind: 'evt', agentId: 'main', aggregate: 'terminal', aggregateId: 't-1' })).toBe(
      'skein.evt.main.terminal.t-1',
    );
    expect(subjectFor({ kind: 'out', agentId: 'a_1', terminalId: 't-1' })).toBe('skein.out.a_1.t-1');
  });

  it.each(['', 'a.b', 'a*', '>', 'a b', 'x'.repeat(65), 'é'])('refuses the agent id %j, naming it', (bad) => {
    expect(() => subjectFor({ kind: 'cmd', agentId: bad, type: 'agent.get' })).toThrow(
      /agentId .* is not a subject token/,
    );
  });

  it('refuses a command type that is not lowercase dotted words', () => {
    expect(() => subjectFor({ kind: 'cmd', agentId: 'main', type: 'Agent.Spawn' })).toThrow(
      /not lowercase dotted words/,
    );
  });

  it(`reads back what it builds (seed ${seed})`, () => {
    const token = fc.stringMatching(/^[A-Za-z0-9_-]{1,64}$/);
    const type = fc.stringMatching(/^[a-z][a-z0-9-]{0,8}(\.[a-z][a-z0-9-]{0,8}){1,3}$/);
    fc.assert(
      fc.property(token, type, token, token, (agentId, t, aggregate, id) => {
        expect(parseCommandSubject(subjectFor({ kind: 'cmd', agentId, type: t }))).toEqual({ agentId, type: t });
        expect(parseEventSubject(subjectFor({ kind: 'evt', agentId, aggregate, aggregateId: id }))).toEqual({
          agentId,
          aggregate,
          aggregateId: id,
        });
      }),
      { seed },
    );
  });

  it('lines up with NATS wildcards', () => {
    expect(subjectMatches(subjectPatterns.agentEvents('main'), 'skein.evt.main.agent.a-1')).toBe(true);
    expect(subjectMatches(subjectPatterns.agentEvents('main'), 'skein.evt.mainx.agent.a-1')).toBe(false);
    expect(subjectMatches('skein.evt.*.terminal.>', 'skein.evt.a.terminal.t1')).toBe(true);
    expect(subjectMatches('skein.evt.*.terminal.>', 'skein.evt.a.agent.t1')).toBe(false);
    expect(subjectMatches('skein.evt.>', 'skein.evt')).toBe(false);
    expect(subjectMatches('a.*', 'a.b.c')).toBe(false);
    expect(subjectMatches('a.b', 'a.b')).toBe(true);
  });
});
