/**
 * @module
 * What a person answering an ask is shown each part as: the judged input per tool (`command`, `path`…) and
 * its `detail` (a write's content, an edit's old and new text, a spawn's task and policy). One table for
 * `skein approvals --watch` and the web console. Plain data, no imports: the console's bundle loads it.
 */

/** The name of a tool's judged input; `input` for a tool not listed. */
export const ASK_INPUT_NAMES: Readonly<Record<string, string>> = {
  terminal: 'command',
  terminal_input: 'typed input',
  read_file: 'path',
  edit_file: 'path',
  write_file: 'path',
  spawn_agent: 'agent',
};

/** The name of an ask's `detail` per tool; `detail` for a tool not listed. */
export const ASK_DETAIL_NAMES: Readonly<Record<string, string>> = {
  write_file: 'content',
  edit_file: 'edit',
  spawn_agent: 'spawn',
  terminal: 'where',
  terminal_input: 'where',
};

/** What ends an ask's `detail` the gate cut to its bound (infra/permission/wiring.ts): how much is not shown. */
export function detailCutNote(left: number): string {
  return `\n… (${left} more characters not shown)`;
}

/**
 * How many characters the gate cut from `detail`, or undefined when it is whole. A person answering must be
 * told before the buttons, not at the end of a box that scrolls: the rest is approved unseen (the console
 * review of 3 December hid `curl …|sh` past the cut of a 16 KiB write).
 */
export function detailCut(detail: string): number | undefined {
  const cut = /\n… \((\d+) more characters not shown\)$/.exec(detail);
  return cut ? Number(cut[1]) : undefined;
}
