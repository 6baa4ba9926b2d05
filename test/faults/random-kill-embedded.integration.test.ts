/** Random SIGKILLs of `skein up` in embedded mode under a mixed workload: see `random-kill-run.ts`. */
import { afterAll, describe, it } from 'vitest';
import { propertySeed } from '../support/seed.ts';
import { cleanupRandomKills, KILLS, runMode } from './random-kill-run.ts';

afterAll(cleanupRandomKills);

describe('random SIGKILL under a mixed workload', () => {
  it(`embedded: ${KILLS} kills`, async () => runMode('embedded', propertySeed()), 240_000);
});
