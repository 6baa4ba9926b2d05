import { PerAgentSlots } from '../../../machines/common/per-agent-slots.ts';
import { LimitExceededError } from '../../../schemas/errors.ts';

const slots = (limit: number) => new PerAgentSlots(limit, (a, held, max) => `${a} holds ${held} of ${max}`);

describe('PerAgentSlots', () => {
  it('takes up to the limit per agent, then refuses with the words it was given', () => {
    const s = slots(2);
    s.take('a');
    s.take('a');
    expect(() => s.take('a')).toThrow(LimitExceededError);
    expect(() => s.take('a')).toThrow('a holds 2 of 2');
    expect(s.held('a')).toBe(2);
    // Another agent's slots are its own.
    s.take('b');
    s.take('b');
    expect(s.held('b')).toBe(2);
  });

  it('gives a slot back on release, never going below none', () => {
    const s = slots(1);
    s.take('a');
    s.release('a');
    expect(s.held('a')).toBe(0);
    s.take('a');
    expect(() => s.take('a')).toThrow(LimitExceededError);
    s.release('a');
    s.release('a');
    s.release('a');
    expect(s.held('a')).toBe(0);
    s.take('a');
    expect(() => s.take('a')).toThrow('a holds 1 of 1');
  });

  it('a limit of 0 refuses at once', () => {
    expect(() => slots(0).take('a')).toThrow('a holds 0 of 0');
  });

  it('bounds all agents together when given a second limit, after each agent its own', () => {
    const s = new PerAgentSlots(2, (a, held, max) => `${a} holds ${held} of ${max}`, {
      limit: 3,
      refusal: (held, max) => `all hold ${held} of ${max}`,
    });
    s.take('a');
    s.take('a');
    expect(() => s.take('a')).toThrow('a holds 2 of 2');
    s.take('b');
    expect(s.total).toBe(3);
    expect(() => s.take('c')).toThrow('all hold 3 of 3');
    expect(() => s.take('b')).toThrow('all hold 3 of 3');
    // A refused take holds nothing; a release frees a slot for any agent, and never counts below none.
    expect(s.held('c')).toBe(0);
    s.release('c');
    expect(s.total).toBe(3);
    s.release('a');
    expect(s.total).toBe(2);
    s.take('c');
    expect(s.held('c')).toBe(1);
    expect(() => s.take('d')).toThrow('all hold 3 of 3');
  });
});
