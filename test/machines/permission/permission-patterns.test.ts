/**
 * The rule an "always" answer learns (issue 14: one file used to teach `^src/`, a whole directory): it
 * matches the request it was learned from and nothing else, neither as a regex nor through `decide`.
 */
import fc from 'fast-check';
import { exactRule, exactText } from '../../../machines/permission/permission-patterns.ts';
import { decide } from '../../../machines/permission/permission-policy.ts';
import { compilePattern } from '../../../machines/permission/policy.ts';
import { decideTerminal, merged } from '../../support/permission-fixtures.ts';
import { propertySeed } from '../../support/seed.ts';

const seed = propertySeed();

/** Text with the regex metacharacters, whitespace and letters of both cases well represented. */
const text = fc
  .array(fc.oneof(fc.constantFrom(...'.*+?^${}()|[]\\/ -aAzZ\n\t'), fc.string({ minLength: 1, maxLength: 3 })), {
    minLength: 1,
    maxLength: 40,
  })
  .map((parts) => parts.join(''));

/** A workspace-relative path of one to four components. */
const component = fc.stringMatching(/^[A-Za-z0-9._ ()[\]+$^-]{1,12}$/).filter((c) => c !== '.' && c !== '..');
const relPath = fc.array(component, { minLength: 1, maxLength: 4 }).map((c) => c.join('/'));

function regexOf(rule: string): RegExp {
  const r = compilePattern(rule, false);
  if (typeof r === 'string') throw new Error(`rule ${rule} does not compile: ${r}`);
  return r;
}

function swapCase(s: string): string {
  return [...s].map((c) => (c === c.toLowerCase() ? c.toUpperCase() : c.toLowerCase())).join('');
}

describe('exactRule', () => {
  it('matches the text it was learned from, and reads back as that text', () => {
    fc.assert(
      fc.property(text, (t) => {
        const rule = exactRule(t)!;
        expect(regexOf(rule).test(t)).toBe(true);
        expect(exactText(rule)).toBe(t);
      }),
      { seed, numRuns: 500 },
    );
  });

  it('matches no sibling: longer, shorter, another character, another case', () => {
    fc.assert(
      fc.property(text, fc.string({ minLength: 1, maxLength: 4 }), fc.nat(), (t, extra, at) => {
        const re = regexOf(exactRule(t)!);
        const i = at % t.length;
        const siblings = [
          t + extra,
          extra + t,
          t.slice(0, -1),
          t.slice(1),
          `${t.slice(0, i)}${t[i] === 'x' ? 'y' : 'x'}${t.slice(i + 1)}`,
          `${t}\n`,
        ];
        if (swapCase(t) !== t) siblings.push(swapCase(t));
        for (const s of siblings) if (s !== t) expect({ s, matched: re.test(s) }).toEqual({ s, matched: false });
      }),
      { seed, numRuns: 500 },
    );
  });

  it('learns no rule for an empty text, a path outside the workspace, or a rule over 4096 characters', () => {
    expect(exactRule('')).toBeUndefined();
    expect(exactRule('/etc/passwd', 'path')).toBeUndefined();
    expect(exactRule('../x', 'path')).toBeUndefined();
    expect(exactRule('x'.repeat(5000))).toBeUndefined();
    expect(exactRule('src/a.ts', 'path')).toBe('(?-i)^src/a\\.ts$');
  });

  it('exactText refuses patterns that are not exact rules', () => {
    for (const p of ['^src/', '(?-i)^src/.*$', '(?-i)^a|b$', '^git\\s+status(\\s|$)', '(?-i)^a\\']) {
      expect({ p, text: exactText(p) }).toEqual({ p, text: undefined });
    }
  });
});

describe('a learned path rule through decide', () => {
  const facts = { roots: ['/ws'] };

  it('allows the learned file and still asks for its siblings, its directory and files below it', () => {
    fc.assert(
      fc.property(relPath, component, (path, other) => {
        const d = decide({ tool: 'write_file', input: path, path: facts }, merged({}));
        fc.pre(d.level === 'global_default'); // not an always-ask path (.git, .skein)
        expect(d.patterns).toEqual([exactRule(path, 'path')]);
        const p = merged({ tools: { write_file: { always_allow: d.patterns.map((pattern) => ({ pattern })) } } });
        expect(decide({ tool: 'write_file', input: path, path: facts }, p).outcome).toBe('allow');
        expect(decide({ tool: 'write_file', input: `/ws/${path}`, path: facts }, p).outcome).toBe('allow');
        const dir = path.includes('/') ? path.slice(0, path.lastIndexOf('/')) : '';
        const sibling = dir ? `${dir}/${other}` : other;
        for (const s of [sibling, `${path}/${other}`, `${path}.bak`, swapCase(path)]) {
          if (s === path) continue;
          const outcome = decide({ tool: 'write_file', input: s, path: facts }, p).outcome;
          expect({ s, allowed: outcome === 'allow' }).toEqual({ s, allowed: false });
        }
      }),
      { seed, numRuns: 300 },
    );
  });
});

describe('a learned command rule through decide (the real bash split)', () => {
  const word = fc.stringMatching(/^[a-z0-9._/=+-]{1,8}$/);
  const command = fc
    .array(fc.array(word, { minLength: 1, maxLength: 4 }), { minLength: 1, maxLength: 3 })
    .chain((cmds) => fc.constantFrom(' && ', '; ', ' | ').map((op) => cmds.map((c) => c.join(' ')).join(op)));

  it('allows exactly the learned command line; a longer, shorter or chained one still asks', async () => {
    await fc.assert(
      fc.asyncProperty(command, word, async (line, extra) => {
        const asked = await decideTerminal(merged({}), line);
        fc.pre(asked.outcome === 'confirm' && asked.level === 'global_default');
        expect(asked.patterns).toEqual([exactRule(line)]);
        const p = merged({ tools: { terminal: { always_allow: [{ pattern: asked.patterns[0]! }] } } });
        expect((await decideTerminal(p, line)).outcome).toBe('allow');
        // `line; line` is the allowed command run twice, rightly allowed (fast-check found it with line '.').
        const chained = extra === line ? [] : [`${line}; ${extra}`];
        for (const sibling of [`${line} ${extra}`, ...chained, `${extra} ${line}`, line.slice(0, -1)]) {
          if (sibling === line || sibling.trim() === '') continue;
          const d = await decideTerminal(p, sibling);
          expect({ sibling, allowed: d.outcome === 'allow' }).toEqual({ sibling, allowed: false });
        }
      }),
      { seed, numRuns: 150 },
    );
  });
});
