/**
 * An edit a person approved replaces only what its ask showed. The ask shows old_text and new_text; the
 * matcher tolerates a fifth of the lines differing, so a fuzzy match could cover lines old_text never held
 * (an audit's edit left out two guard lines of a function and, changing one log string, deleted them).
 * With `shownOnly`, every line a fuzzy match replaces must be one of old_text's lines, in order, spaces aside.
 */
import fc from 'fast-check';
import { applyEdits, unshownLine } from '../../../machines/edit/edit-apply.ts';
import { EditSessionCore } from '../../../machines/edit/edit-session-core.ts';
import { propertySeed } from '../../support/seed.ts';
import { GUARD, GUARDED_FILE as FILE, SHOWN } from '../../support/guarded-function.ts';

const ATTACK = { oldText: SHOWN, newText: SHOWN.replace('remove done', 'removed') };

describe('an approved edit replaces only the lines it showed', () => {
  it('the matcher alone takes the unshown guard lines with a fuzzy match (the hole this closes)', () => {
    const r = applyEdits(FILE, [ATTACK]);
    expect(r.failure).toBeUndefined();
    expect(r.outcomes[0]).toMatchObject({ matchKind: 'fuzzy', startLine: 1, endLine: 11 });
    expect(r.content).not.toContain('admin');
  });

  it('shownOnly refuses that match, names the unshown line and leaves the text as it was', () => {
    const r = applyEdits(FILE, [ATTACK], { shownOnly: true });
    expect(r.failure).toMatchObject({ index: 0, reason: 'unresolved' });
    expect(r.failure?.message).toContain('matched lines 1-11 only approximately (similarity 0.80)');
    expect(r.failure?.message).toContain('line 4 there');
    expect(r.failure?.message).toContain('if (role !== \\"admin\\")');
    expect(r.failure?.message).toContain('copy old_text exactly');
    expect(r.content).toBe(FILE);
    expect(r.outcomes).toEqual([]);
  });

  it('the streamed path (the session core) refuses it the same way', () => {
    const core = new EditSessionCore({
      editId: 'e1',
      mode: 'edit',
      buffer: FILE,
      stale: false,
      preview: false,
      shownOnly: true,
    });
    core.applyAll([ATTACK]);
    const r = core.result();
    expect(r.failure).toMatchObject({ index: 0, reason: 'unresolved' });
    expect(r.content).toBe(FILE);
  });

  it('whitespace drift still applies: every replaced line was shown, spaces aside', () => {
    const file = 'def f(x):\n    if x:\n        return 1\n    return 2\n';
    const oldText = 'def f(x):\n  if x:\n      return 1  \n  return 2';
    const newText = 'def f(x):\n  if x:\n      return 1\n  return 3';
    const r = applyEdits(file, [{ oldText, newText }], { shownOnly: true });
    expect(r.failure).toBeUndefined();
    expect(r.outcomes[0]?.matchKind).toBe('fuzzy');
    expect(r.content).toBe('def f(x):\n    if x:\n        return 1\n    return 3\n');
  });

  it('an exact match applies under shownOnly (it replaces old_text byte for byte)', () => {
    const r = applyEdits(FILE, [{ oldText: GUARD, newText: '' }], { shownOnly: false });
    expect(r.failure?.reason).toBe('ambiguous');
    const once = applyEdits(FILE, [{ oldText: `${GUARD}\n${GUARD}\n  db.delete`, newText: '  db.delete' }], {
      shownOnly: true,
    });
    expect(once.failure).toBeUndefined();
    expect(once.outcomes[0]?.matchKind).toBe('exact');
  });

  it('a shown line the file lacks is no harm: the match replaces fewer lines than were shown', () => {
    expect(unshownLine('a\nc', 'a\nb\nc')).toBeUndefined();
    expect(unshownLine('a\nb\nc', 'a\nc')).toEqual({ row: 1, text: 'b' });
    // In order: shown lines are not reused out of place.
    expect(unshownLine('c\na', 'a\nc')).toEqual({ row: 1, text: 'a' });
    expect(unshownLine('  a\t b\r', 'a b')).toBeUndefined();
  });
});

const seed = propertySeed();
describe(`shownOnly properties (seed ${seed})`, () => {
  const line = fc.stringMatching(/^ {0,4}[a-z(){};=]{1,12}( [a-z=]{1,6})?$/);

  it('whatever the drift, an applied fuzzy edit replaced only lines old_text holds', () => {
    let fuzzyApplied = 0;
    fc.assert(
      fc.property(
        fc.array(line, { minLength: 4, maxLength: 24 }),
        fc.nat(),
        fc.nat(),
        fc.array(fc.tuple(fc.constantFrom('drop', 'indent', 'insert'), fc.nat(), line), { maxLength: 3 }),
        (ls, a, b, drift) => {
          const start = a % (ls.length - 2);
          const len = 2 + (b % Math.min(8, ls.length - start - 1));
          const shown = ls.slice(start, start + len);
          for (const [kind, at, extra] of drift) {
            const i = at % shown.length;
            if (kind === 'drop' && shown.length > 2) shown.splice(i, 1);
            else if (kind === 'indent') shown[i] = `  ${shown[i]}`;
            else shown.splice(i, 0, extra);
          }
          const buffer = `${ls.join('\n')}\n`;
          const oldText = shown.join('\n');
          const r = applyEdits(buffer, [{ oldText, newText: 'NEW' }], { shownOnly: true });
          const o = r.outcomes[0];
          if (o?.matchKind !== 'fuzzy') return;
          fuzzyApplied++;
          const allowed = new Set(shown.map((l) => l.replace(/\s+/g, ' ').trim()));
          for (const replaced of buffer.slice(o.range.start, o.range.end).split('\n')) {
            expect(allowed.has(replaced.replace(/\s+/g, ' ').trim())).toBe(true);
          }
        },
      ),
      { seed, numRuns: 400 },
    );
    // The property says something only if fuzzy edits did apply.
    expect(fuzzyApplied).toBeGreaterThan(10);
  });
});
