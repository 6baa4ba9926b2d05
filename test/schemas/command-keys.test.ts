/**
 * Every command refuses a key it does not know, naming it. Ten of them (the file, edit, decide, withdraw and
 * policy commands) dropped unknown keys silently: `permission.decide` with `pattren` learned the suggested rule
 * instead of the one meant, and `file.edit` sent Zed's `old_text`/`new_text` failed only on the missing `oldText`.
 */
import { COMMANDS } from '../../schemas/index.ts';

type Def = { _zod: { def: { type: string; catchall?: Def; innerType?: Def; in?: Def; schema?: Def } } };

/** The object schema under a command's data (through defaults, pipes and optionals). */
function objectOf(schema: Def): Def | undefined {
  let s: Def | undefined = schema;
  while (s && s._zod.def.type !== 'object') s = s._zod.def.innerType ?? s._zod.def.in ?? s._zod.def.schema;
  return s;
}

describe('command data', () => {
  it.each(COMMANDS.map((c) => [c.type, c] as const))('%s refuses unknown keys', (_type, command) => {
    const object = objectOf(command.data as unknown as Def);
    expect(object, 'its data is an object schema').toBeDefined();
    expect(object!._zod.def.catchall?._zod.def.type).toBe('never');
  });

  const samples: Record<string, Record<string, unknown>> = {
    'file.read': { path: 'a.ts', startLine: 1 },
    'file.write': { path: 'a.ts', content: 'x' },
    'file.edit': { path: 'a.ts', edits: [{ oldText: 'a', newText: 'b' }] },
    'edit.begin': { path: 'a.ts' },
    'edit.input': { editId: 'e-abc123', chunk: '{' },
    'edit.finish': { editId: 'e-abc123' },
    'edit.cancel': { editId: 'e-abc123' },
    'permission.decide': { requestId: 'p-abc123', decision: 'allow_always', pattern: '^ls$' },
    'permission.withdraw': { requestId: 'p-abc123' },
    'policy.set': { layer: 'project', policy: { default: 'confirm' } },
  };

  it.each(Object.entries(samples))('%s: a valid call passes; one key more is refused by name', (type, data) => {
    const command = COMMANDS.find((c) => c.type === type)!;
    const valid = command.data.safeParse(data);
    expect(valid.error?.message).toBeUndefined();
    const typo = command.data.safeParse({ ...data, pattren: 'x' });
    expect(typo.success).toBe(false);
    expect(typo.error!.message).toContain('Unrecognized key: \\"pattren\\"');
  });

  it("file.edit names Zed's old_text/new_text, not only the keys they left missing", () => {
    const command = COMMANDS.find((c) => c.type === 'file.edit')!;
    const zed = command.data.safeParse({ path: 'a.ts', edits: [{ old_text: 'a', new_text: 'b' }] });
    expect(zed.error!.message).toContain('old_text');
    expect(zed.error!.message).toContain('new_text');
  });
});
