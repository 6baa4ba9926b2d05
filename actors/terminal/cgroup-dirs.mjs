// Making a terminal's cgroups (cgroup-bounds.ts's DirOp steps). Plain JavaScript: the shell helper
// (pty-zygote-child.mjs) runs it without a TypeScript loader, and the runtime runs it when there is no helper.
import { existsSync, mkdirSync, rmdirSync, writeFileSync } from 'node:fs';

/**
 * Runs the steps in order. At the first failure removes the directories they made, then throws: a batch of the
 * same agent's sent after this one finds no agent cgroup, rather than one without its bound.
 */
export function makeDirsSync(ops) {
  const made = [];
  try {
    for (const op of ops) {
      if (op.mkdir !== undefined) {
        mkdirSync(op.mkdir);
        made.push(op.mkdir);
      } else if (!op.optional || existsSync(op.write)) writeFileSync(op.write, op.value);
    }
  } catch (err) {
    removeDirs(made);
    throw err;
  }
}

/**
 * Removes the directories the steps make, if they are there: before the steps run again where another process
 * may have run part of them (the shell helper, dead before it answered). Their names are new to the join that
 * asked for them, so nothing else is in them.
 */
export function unmakeDirsSync(ops) {
  removeDirs(ops.flatMap((op) => (op.mkdir === undefined ? [] : [op.mkdir])));
}

/** Removes `dirs`, last first; one that cannot go is left for the runtime's cgroup removal at its stop. */
function removeDirs(dirs) {
  for (const dir of [...dirs].reverse()) {
    try {
      rmdirSync(dir);
    } catch {}
  }
}
