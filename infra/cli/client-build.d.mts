import type { Metafile } from 'esbuild';

/** Builds the fast CLI entry into `outdir` (relative to `root`) with its sources.json; see client-build.mjs. */
export declare function buildClient(root: string, outdir: string): Promise<Metafile>;
