/**
 * @module
 * The one barrel: the whole vocabulary every layer shares.
 */
export * from './ids.ts';
export * from './errors.ts';
export * from './message.ts';
export * from './subjects.ts';
export * from './config.ts';
export * from './hosts.ts';
export * from './mode.ts';
export * from './shell-quote.ts';
export * from './tool.ts';
export * from './catalog.ts';
export * from './agent.ts';
export * from './runtime.ts';
export * from './fleet.ts';
export * from './paths.ts';
