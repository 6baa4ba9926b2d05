// The flood floor's reader thread (flood-floor-child.ts, `thread` mode): a worker does not get the parent's
// `--import tsx`, so it loads the TypeScript module through tsx's API.
import { tsImport } from 'tsx/esm/api';

await tsImport('./flood-floor-child.ts', import.meta.url);
