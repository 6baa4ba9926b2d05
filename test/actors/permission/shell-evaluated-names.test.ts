/**
 * Variables bash 5.2 evaluates as arithmetic when they are assigned (RANDOM, SRANDOM, OPTIND, HISTCMD), found by
 * the differential fuzz test (`test/hostile/shell-fuzz.integration.test.ts`): `OPTIND='a[$(rm x)]'` runs rm, and
 * so does `OPTIND=v` when v holds that text, however v was set. Under a policy that allows by default and denies
 * `^rm\b`, each such line was allowed. Now an assignment of anything but a number asks, and the writes the check
 * cannot read (printf -v, read, mapfile, getopts, a loop, a nameref) are refused.
 */
import { evaluatedAssignment } from '../../../actors/permission/shell-refusals.ts';
import { laterRefusal, loopVariable } from '../../../actors/permission/shell-later.ts';
import { decideTerminal, merged } from '../../support/permission-fixtures.ts';

const POLICY = merged({ default: 'allow', tools: { terminal: { always_deny: [{ pattern: '^rm\\b' }] } } });
const HIDDEN = "'a[$(rm x)]'";

describe('names bash evaluates when they are assigned', () => {
  it.each([
    `RANDOM=${HIDDEN}`,
    `SRANDOM=${HIDDEN}`,
    `OPTIND=${HIDDEN}`,
    `HISTCMD=${HIDDEN}`,
    `v=${HIDDEN}; OPTIND=v`,
    `v=${HIDDEN}; RANDOM+=v`,
    'RANDOM=$v',
    `export OPTIND=${HIDDEN}`,
    `declare RANDOM=${HIDDEN}`,
    `export 'OPTIND=v'`,
    `f() { OPTIND=v; }`,
    `bash -c "OPTIND=v"`,
    `OPTIND=v true`,
  ])('%s asks', async (command) => {
    const d = await decideTerminal(POLICY, command);
    expect({ command, outcome: d.outcome }).toEqual({ command, outcome: 'confirm' });
  });

  it.each([
    `read OPTIND <<<${HIDDEN}`,
    `read -a RANDOM <<<${HIDDEN}`,
    `printf -v RANDOM ${HIDDEN}`,
    `mapfile -t HISTCMD <<<${HIDDEN}`,
    'getopts ab OPTIND',
    `for OPTIND in ${HIDDEN}; do :; done`,
    `select SRANDOM in ${HIDDEN}; do break; done`,
    `declare -n r=RANDOM; r=${HIDDEN}`,
  ])('%s is refused', async (command) => {
    const d = await decideTerminal(POLICY, command);
    expect({ command, outcome: d.outcome }).toEqual({ command, outcome: 'deny' });
  });

  it.each(['OPTIND=1', 'RANDOM=42', "OPTIND='1'", 'RANDOM=-3', 'local OPTIND', 'getopts ab opt', 'SECONDS=x', 'v=x'])(
    '%s is allowed (a number, or a name bash does not evaluate)',
    async (command) => {
      expect((await decideTerminal(POLICY, command)).outcome).toBe('allow');
    },
  );

  it('says which name and why', () => {
    expect(evaluatedAssignment('OPTIND=v')).toBe('OPTIND=v (bash evaluates what is assigned to OPTIND as arithmetic)');
    expect(evaluatedAssignment('OPTIND[0]+="v"')).toMatch(/assigned to OPTIND/);
    expect(evaluatedAssignment('OPTIND=" 7 "')).toBeUndefined();
    expect(evaluatedAssignment('OPTINDX=v')).toBeUndefined();
    expect(laterRefusal(['read', 'OPTIND'])).toMatch(/^read sets OPTIND, whose value bash evaluates as arithmetic/);
    expect(laterRefusal(['printf', '-vRANDOM', 'x'])).toMatch(/assign it a number \(`RANDOM=1`\)/);
    expect(loopVariable('HISTCMD')).toMatch(/a loop sets HISTCMD, whose every value bash evaluates as arithmetic/);
    expect(loopVariable('i')).toBeUndefined();
  });
});
