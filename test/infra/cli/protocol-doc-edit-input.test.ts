/**
 * docs/protocol.md never said what the tool-call JSON fed to `edit.input` looks like (README walk-through): its
 * section shows both shapes, and each one as documented is what the edit parser accepts.
 */
import { describe, expect, it } from 'vitest';
import { renderProtocolDoc } from '../../../infra/cli/protocol-doc.ts';
import { decodeInput } from '../../../machines/edit/edit-parser.ts';

describe('docs/protocol.md: the tool-call JSON of a streaming edit', () => {
  const section = /## Streaming edits: the tool-call JSON\n([\s\S]*?)\n## /.exec(renderProtocolDoc())?.[1] ?? '';
  const blocks = [...section.matchAll(/```json\n(.*)\n```/g)].map((m) => JSON.parse(m[1]!) as unknown);

  it('shows the edit-mode and the write-mode shapes, and both parse as documented', () => {
    expect(blocks).toHaveLength(2);
    expect(decodeInput(blocks[0], 0)).toEqual({
      path: 'src/a.ts',
      edits: [{ oldText: 'return 1;', newText: 'return 2;' }],
    });
    expect(decodeInput(blocks[1], 0)).toEqual({ path: 'src/a.ts', content: 'export const a = 2;\n' });
    expect(section).toContain('`oldText` / `newText` are accepted too');
  });
});
