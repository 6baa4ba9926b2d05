import {
  ALLOWED_OVER_BUDGET,
  OVER_BUDGET_PAYLOAD,
  overBudgetMessage,
  RecordedBytes,
} from '../../../machines/agent/recorded-bytes.ts';

/** main → a → a1 → a11, main → b; `loop` is its own grandparent (a corrupt lookup must still end). */
const PARENTS: Record<string, string> = { a: 'main', a1: 'a', a11: 'a1', b: 'main', loop: 'loop2', loop2: 'loop' };
const parentOf = (id: string) => PARENTS[id];

describe('RecordedBytes', () => {
  it('charges an agent and every ancestor below the root, never the root', () => {
    const r = new RecordedBytes(1_000, parentOf);
    r.charge('a11', 100);
    r.charge('a1', 10);
    r.charge('b', 7);
    r.charge('main', 5_000);
    expect([r.used('a11'), r.used('a1'), r.used('a'), r.used('b'), r.used('main')]).toEqual([100, 110, 110, 7, 0]);
  });

  it('is over for the agent whose subtree reached the limit and for everything below it, not its siblings', () => {
    const r = new RecordedBytes(100, parentOf);
    r.charge('a11', 60);
    expect(r.over('a11')).toBeUndefined();
    r.charge('a1', 40);
    // a1 and a reached 100 (a1's own 40 and a11's 60); a11 itself has 60.
    expect(r.over('a11')).toEqual({ agentId: 'a1', used: 100, limit: 100 });
    expect(r.over('a')).toEqual({ agentId: 'a', used: 100, limit: 100 });
    expect(r.over('b')).toBeUndefined();
    expect(r.over('main')).toBeUndefined();
  });

  it('a fresh sub-agent of an agent over its limit is over too: spawning buys no room', () => {
    const r = new RecordedBytes(100, (id) => (id === 'new' ? 'a' : parentOf(id)));
    r.charge('a', 100);
    expect(r.over('new')).toEqual({ agentId: 'a', used: 100, limit: 100 });
  });

  it('ends on a parent loop', () => {
    const r = new RecordedBytes(100, parentOf);
    r.charge('loop', 1);
    expect(r.used('loop')).toBeGreaterThan(0);
    expect(r.over('loop')).toBeUndefined();
  });

  it('names who is over, the limit key, and the way out', () => {
    const self = overBudgetMessage('a', 'file.write', { agentId: 'a', used: 120, limit: 100 });
    expect(self).toContain("Agent 'a' and its sub-agents have added 120 bytes");
    expect(self).toContain('limits.maxRecordedBytesPerAgent = 100');
    expect(self).toContain("'file.write' is refused");
    expect(self).toContain('agent.complete');
    expect(self).toContain(`at most ${OVER_BUDGET_PAYLOAD} bytes`);
    const below = overBudgetMessage('a11', 'terminal.exec', { agentId: 'a', used: 120, limit: 100 });
    expect(below).toContain("Agent 'a' (above 'a11')");
  });

  it('lets an agent over its limit finish and stop work, not act', () => {
    for (const type of ['agent.complete', 'agent.fail', 'terminal.close', 'edit.cancel'])
      expect(ALLOWED_OVER_BUDGET.has(type), type).toBe(true);
    // A signal records a fact each time and can be sent in a loop: terminal.close stops the work instead.
    for (const type of ['terminal.exec', 'terminal.write', 'terminal.signal', 'file.write', 'edit.begin'])
      expect(ALLOWED_OVER_BUDGET.has(type), type).toBe(false);
  });
});
