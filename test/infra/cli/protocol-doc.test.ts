import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { COMMANDS, EVENTS } from '../../../schemas/index.ts';
import { renderProtocolDoc } from '../../../infra/cli/protocol-doc.ts';

describe('docs/protocol.md', () => {
  const doc = readFileSync(fileURLToPath(new URL('../../../docs/protocol.md', import.meta.url)), 'utf8');
  it('is what the generator makes from schemas/ (run `npm run docs` after changing a message)', () => {
    expect(doc === renderProtocolDoc()).toBe(true);
  });
  it('documents every command and fact', () => {
    for (const def of [...COMMANDS, ...EVENTS]) expect(doc).toContain(`### \`${def.type}\``);
  });
});
