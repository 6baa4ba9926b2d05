import fc from 'fast-check';
import { carryChange, markStart } from '../../../machines/review/action-log-hunks.ts';

// A review's change (the disk it read → what it wrote) carried to what a running command started from.
const TEN = Array.from({ length: 10 }, (_, i) => `l${i + 1}\n`).join('');
const SEED = Number(process.env['FC_SEED'] ?? 20261207);

describe('carryChange', () => {
  it('the same start: what was written; a change away from the start’s own lines: applied to it', () => {
    const from = TEN.replace('l1\n', 'EDIT\n');
    const to = TEN;
    expect(carryChange(from, from, to)).toBe(to);
    // The command started before a person's line at the end: the reject of l1 carries, the line stays out.
    expect(carryChange(from, `${from}PERSON\n`, `${to}PERSON\n`)).toBe(TEN);
    // A start holding a line the disk no longer holds near the change: applied with its context.
    expect(carryChange(TEN.replace('l9\n', 'x9\n').replace('l1\n', 'EDIT\n'), from, to)).toBe(
      TEN.replace('l9\n', 'x9\n'),
    );
  });

  it('a change whose context holds a line written since the start: carried by line position', () => {
    const start = TEN.replace('l10\n', 'A10\n');
    expect(carryChange(start, `${start}CMD\n`, `${TEN}CMD\n`)).toBe(TEN);
    // It changes a line written since: not carried.
    expect(carryChange(start, `${start}CMD\n`, `${start}other\n`)).toBeUndefined();
  });

  it('hunks that do not fit, or a creation or deletion the start does not match: undefined', () => {
    expect(carryChange(TEN.replace('l2\n', 'other\n'), TEN.replace('l1\n', 'A\n'), TEN)).toBeUndefined();
    expect(carryChange(null, 'made\n', null)).toBeUndefined();
    expect(carryChange('x\n', null, 'restored\n')).toBeUndefined();
    expect(carryChange(null, null, 'restored\n')).toBe('restored\n');
    expect(carryChange('made\n', 'made\n', null)).toBeNull();
  });

  it('a change from a start to itself is the start; from the start to anything is that (property)', () => {
    console.log(
      `random seed ${SEED}; replay: FC_SEED=${SEED} npx vitest run test/machines/review/carry-change.test.ts`,
    );
    const text = fc.array(fc.constantFrom('a\n', 'b\n', 'c\n', 'd\n', 'x\n'), { maxLength: 12 }).map((l) => l.join(''));
    fc.assert(
      fc.property(text, text, (a, b) => {
        expect(carryChange(a, a, b)).toBe(b);
        expect(carryChange(a, b, b)).toBe(a);
      }),
      { seed: SEED, numRuns: 300 },
    );
  });

  it("markStart: a line put back beside the command's: the command's lines taken out of what was written", () => {
    const start = TEN.replace('l10\n', '').replace('l5\n', 'P5\n'); // the agent deleted l10; a person wrote P5
    const from = `${start}CMD\n`;
    const to = `${start}l10\nCMD\n`; // the reject puts l10 back, right before the command's line
    expect(carryChange(start, from, to)).toBeUndefined();
    expect(markStart(start, from, to)).toBe(TEN.replace('l5\n', 'P5\n'));
    expect(markStart(start, start, to)).toBe(to);
  });
});
