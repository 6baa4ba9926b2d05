/**
 * @module
 * Child process for the atomic-write test: writes `process.argv[2]` with a
 * large "new" content over and over (alternating two versions) through
 * `atomicWrite`, printing "ready" after the first write starts, until killed.
 */
import { writeFileAtomic as atomicWrite } from '../../actors/common/atomic-write.ts';

const path = process.argv[2]!;
const size = Number(process.argv[3] ?? 32 * 1024 * 1024);
const versions = [Buffer.alloc(size, 'N'), Buffer.alloc(size, 'M')];
let i = 0;
process.stdout.write('ready\n');
for (;;) {
  await atomicWrite(path, versions[i++ % 2]!, 0o644);
}
