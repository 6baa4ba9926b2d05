// The page imports stylesheets for esbuild to bundle; they have no exports.
declare module '*.css';
