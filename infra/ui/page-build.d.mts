export declare function pageBuild(root: string): {
  absWorkingDir: string;
  entryPoints: Record<string, string>;
  bundle: boolean;
  format: 'esm';
  platform: 'browser';
  target: string;
  minify: boolean;
  alias: Record<string, string>;
  logLevel: 'warning';
};
