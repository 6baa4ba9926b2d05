/**
 * Names bash evaluates as arithmetic when they are assigned (RANDOM, SRANDOM, OPTIND, HISTCMD), live: a real
 * runtime and a sandboxed bash, an allowing default with one deny rule on rm, and a file in the workspace each
 * attack tries to remove through an array subscript in the value (`OPTIND='a[$(rm -f keep.txt)]'`). Found by the
 * differential fuzz test; each line was allowed before. The keep file must survive every one (an ask nobody
 * answers is refused), and a canary that one attack writes through the same hole must never appear; plain numbers
 * (`OPTIND=1`, how scripts reset getopts) still run.
 */
import { existsSync } from 'node:fs';
import { attack, expectNoCanary, keepFileScene, keepsFile, outcome, reportAttacks } from './support.ts';

const POLICY = { default: 'allow', tools: { terminal: { always_deny: [{ pattern: '^rm\\b' }] } } };
const HIDDEN = "'a[$(rm -f keep.txt)]'";

// Most of these ask; nobody answers, and the ask is refused after 1 s.
const scene = keepFileScene(POLICY, { domains: { permission: { timeoutMs: 1000 } } });
reportAttacks('evaluated-names');

describe('rm hidden in a value bash evaluates as arithmetic', () => {
  keepsFile(scene, 'arithmetic', [
    `OPTIND=${HIDDEN}`,
    `RANDOM=${HIDDEN}`,
    `v=${HIDDEN}; HISTCMD=v`,
    `v=${HIDDEN}; export SRANDOM=v`,
    `read OPTIND <<<${HIDDEN}`,
    `printf -v RANDOM ${HIDDEN}`,
    `for OPTIND in ${HIDDEN}; do :; done`,
  ]);

  attack('arithmetic', 'a canary written through OPTIND', async () => {
    const { halves, path } = scene.c;
    const command = `OPTIND='a[$(rm -f keep.txt; printf %s%s ${halves[0]} ${halves[1]} > ${path})]'`;
    expect(outcome(await scene.exec(command))).toBe('permission_denied');
    expect(existsSync(scene.keep)).toBe(true);
    await expectNoCanary(scene.rt, scene.c);
  });

  it('a number assigned to them still runs', async () => {
    const reply = await scene.exec('OPTIND=1; RANDOM=42; echo seeded');
    expect(outcome(reply)).toBe('ok');
    expect(String(reply.ok ? reply['output'] : '')).toContain('seeded');
  });
});
