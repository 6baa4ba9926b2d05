/**
 * @module
 * `npm run docs`: regenerates docs/protocol.md.
 */
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { renderProtocolDoc } from './protocol-doc.ts';

const target = fileURLToPath(new URL('../../docs/protocol.md', import.meta.url));
writeFileSync(target, renderProtocolDoc());
process.stdout.write(`wrote ${target}\n`);
