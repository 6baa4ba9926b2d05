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
};
