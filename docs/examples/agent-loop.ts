/**
 * @module
 * An agent loop on the typed client SDK: a scripted "brain" (where an LLM
 * would decide) drives a sub-agent through read → edit → test → review.
 *
 * Run it from any directory inside a workspace where `skein up` runs
 * (`<skein>` is the skein checkout, whose node_modules has tsx):
 *
 *   node --import <skein>/node_modules/tsx/dist/loader.mjs <skein>/docs/examples/agent-loop.ts [file] [test command]
 *
 * Defaults: `calc.js` and `node test.js`. The brain reads the file, replaces
 * a subtraction in `add` with an addition, runs the tests, and completes;
 * the parent then reviews the change and accepts it (or rejects it when the
 * tests fail). Exit code 0 when the tests pass and the change is accepted.
 */
import { connect, SkeinCallError, type CommandReply } from 'skein/client';

const [file = 'calc.js', testCommand = 'node test.js'] = process.argv.slice(2);

/** The brain: given what the sub-agent read, decide the edit. An LLM call goes here in a real loop. */
function decideEdit(content: string): { oldText: string; newText: string } | undefined {
  const line = content.split('\n').find((l) => /return\s+a\s*-\s*b/.test(l));
  return line ? { oldText: line, newText: line.replace(/a\s*-\s*b/, 'a + b') } : undefined;
}

const skein = await connect();
const parent = skein.agent(skein.rootAgentId);
// Typed facts: every lifecycle fact of the parent's children arrives on the parent's subjects.
const stopWatching = parent.on('agent.completed', (fact) => {
  console.log(`[fact] ${fact.data.agentId} completed: ${JSON.stringify(fact.data.result)}`);
});

try {
  const { agentId } = await parent.agent.spawn({ label: 'fixer', task: `make \`${testCommand}\` pass` });
  const child = skein.agent(agentId);
  console.log(`spawned sub-agent ${agentId}`);

  // read
  const read = await child.file.read({ path: file });
  console.log(`read ${read.path}: ${read.totalLines} lines`);

  // edit
  const edit = decideEdit(read.content);
  if (!edit) throw new Error(`the brain found nothing to fix in ${file}`);
  const applied = await child.file.edit({ path: file, edits: [edit] });
  console.log(`edit: ${applied.edits.map((e) => `${e.matchKind} match at line ${e.startLine}`).join(', ')}`);

  // test
  const { terminalId } = await child.terminal.open({});
  const run: CommandReply<'terminal.exec'> = await child.terminal.exec({ terminalId, command: testCommand });
  console.log(`test: ${testCommand} → exit ${run.exitCode}\n${run.output.trimEnd()}`);
  await child.terminal.close({ terminalId });
  const passed = run.status === 'exited' && run.exitCode === 0;
  await (passed ? child.agent.complete({ result: { tests: 'pass' } }) : child.agent.fail({ error: run.output }));

  // review: the parent sees the child's change in its own action log
  const waited = await parent.agent.wait({ agentId, timeoutMs: 10_000 });
  const review = await parent.review.list({});
  for (const f of review.files) console.log(`review ${f.status} ${f.path}\n${f.diff.trimEnd()}`);
  if (passed && waited.status === 'completed') {
    const accepted = await parent.review.accept({});
    console.log(`accepted ${accepted.accepted.length} file(s); tests pass`);
  } else {
    await parent.review.reject({});
    console.log('rejected: tests fail');
    process.exitCode = 1;
  }
} catch (err) {
  // A refused command carries its code: permission_denied, not_found, unknown_agent…
  console.error(err instanceof SkeinCallError ? `refused (${err.code}): ${err.message}` : err);
  process.exitCode = 1;
} finally {
  stopWatching();
  await skein.close();
}
