/**
 * @module
 * The audit's fuzzy-edit case: a function with two guard lines, and the same function with the guards left
 * out (what an ask shows). An edit of SHOWN matches the file fuzzily (similarity 0.80) across the guards.
 */
export const GUARD = '  if (role !== "admin") throw new Error("denied");';

export const GUARDED_FILE = [
  'export function remove(user, role) {',
  '  log("remove start");',
  '  const db = open();',
  GUARD,
  GUARD,
  '  db.delete(user);',
  '  log("remove done");',
  '  audit(user);',
  '  db.close();',
  '  return true;',
  '}',
  '',
].join('\n');

/** The function as shown to the person: the two guard lines left out. */
export const SHOWN = GUARDED_FILE.split('\n')
  .filter((l) => l !== GUARD)
  .join('\n')
  .trimEnd();
